// Anthropic's Messages API streams, read as a client would: named SSE events, assembled into the
// message they add up to while checking the documented order.
import assert from 'node:assert/strict';

// An SSE body as [{event, data}]; every event is named by an `event:` line equal to its type.
export function parseEvents(text) {
  const events = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    const lines = block.split('\n');
    assert.match(lines[0], /^event: \w+$/, `event without a name: ${block}`);
    assert.match(lines[1], /^data: /, block);
    const event = lines[0].slice(7);
    const data = JSON.parse(lines[1].slice(6));
    assert.equal(data.type, event, block);
    events.push({ event, data });
  }
  return events;
}

// What a stream adds up to, checking the documented order as it goes: message_start first,
// each block's start before its deltas before its stop, message_delta then message_stop last.
export function assembleStream(events) {
  assert.equal(events[0].event, 'message_start');
  assert.equal(events.at(-1).event, 'message_stop');
  assert.equal(events.at(-2).event, 'message_delta');
  const msg = events[0].data.message;
  assert.deepEqual(msg.content, []);
  const blocks = [];
  const open = new Set();
  for (const { event, data } of events.slice(1, -2)) {
    if (event === 'ping') continue;
    if (event === 'content_block_start') {
      assert.equal(data.index, blocks.length, 'blocks start in index order');
      blocks.push({ ...data.content_block, partial: '' });
      open.add(data.index);
    } else if (event === 'content_block_delta') {
      assert.ok(open.has(data.index), `delta of a block not open: ${JSON.stringify(data)}`);
      const b = blocks[data.index];
      if (data.delta.type === 'text_delta') b.text += data.delta.text;
      else if (data.delta.type === 'input_json_delta') b.partial += data.delta.partial_json;
      else assert.fail(`unknown delta ${data.delta.type}`);
    } else if (event === 'content_block_stop') {
      assert.ok(open.delete(data.index), `stop of a block not open: ${data.index}`);
    } else {
      assert.fail(`unexpected event ${event}`);
    }
  }
  assert.equal(open.size, 0, 'every block is stopped');
  const content = blocks.map(({ partial, ...b }) =>
    b.type === 'tool_use' ? { ...b, input: JSON.parse(partial) } : b);
  const end = events.at(-2).data;
  return { id: msg.id, model: msg.model, input_tokens: msg.usage.input_tokens, content,
           stop_reason: end.delta.stop_reason, stop_sequence: end.delta.stop_sequence,
           output_tokens: end.usage.output_tokens };
}
