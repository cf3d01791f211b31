// brisk serve's Responses API (POST /v1/responses, GET / DELETE /v1/responses/{id}) driven by the
// official `openai` npm client (client.responses.create / stream / retrieve / delete), each
// result checked against an independent expectation: text answers equal what
// /v1/chat/completions answers for the same conversation; streams are the documented typed
// event sequence (named, numbered) and add up to the non-streamed response; previous_response_id
// continues exactly the conversation the client could have resent itself (and not the old
// instructions); store: false, deletion, the count bound and the TTL make a response unknown;
// function calls round-trip on a script model that always answers with one Qwen <tool_call>;
// bad requests are 400s in OpenAI's error shape naming the field, with the server still serving.
//
//   node tests/server/responses_client_test.mjs --brisk build/src/brisk --model M.gguf \
//     --tool-model tool-call-script.gguf
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';

import { parseArgs, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();
if (!opts.toolModel) throw new Error('--tool-model is required');
const TTL_S = 3;
let server;      // the tiny golden model, default store
let small;       // the same model with a store of 2 responses living TTL_S seconds
let toolServer;  // the script model
let client, smallClient, toolClient;

before(async () => {
  [server, small, toolServer] = await Promise.all([
    startServer({ brisk: opts.brisk, model: opts.model, args: opts.serveArgs }),
    startServer({ brisk: opts.brisk, model: opts.model,
                  args: ['--responses-max', '2', '--responses-ttl', String(TTL_S),
                         ...opts.serveArgs] }),
    startServer({ brisk: opts.brisk, model: opts.toolModel, args: opts.serveArgs }),
  ]);
  const make = (s) => new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  [client, smallClient, toolClient] = [server, small, toolServer].map(make);
});

after(async () => {
  for (const s of [server, small, toolServer]) {
    const { code } = await s.stop();
    assert.equal(code, 0, `server exit status after SIGTERM:\n${s.stderr()}`);
  }
});

const SYSTEM = 'You are a helpful assistant.';
const ASK = 'Tell me about the sea.';

async function chat(srv, body) {
  const r = await fetch(`${srv.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(r.status, 200);
  return r.json();
}

// The chat route's answer as the Responses API states it.
function assertSameAnswer(resp, completion) {
  const choice = completion.choices[0];
  assert.equal(resp.output_text, choice.message.content ?? '');
  assert.equal(resp.status, { stop: 'completed', length: 'incomplete' }[choice.finish_reason]);
  assert.deepEqual(resp.incomplete_details,
                   choice.finish_reason === 'length' ? { reason: 'max_output_tokens' } : null);
  assert.equal(resp.usage.input_tokens, completion.usage.prompt_tokens);
  assert.equal(resp.usage.output_tokens, completion.usage.completion_tokens);
  assert.equal(resp.usage.total_tokens, completion.usage.total_tokens);
  assert.equal(resp.usage.output_tokens_details.reasoning_tokens, 0);
  assert.equal(typeof resp.usage.input_tokens_details.cached_tokens, 'number');
}

// Raw events of a stream: every event has an `event:` line equal to its type, numbers count up
// from 0, and there is no [DONE].
async function rawEvents(srv, body) {
  const r = await fetch(`${srv.url}/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const text = await r.text();
  assert.ok(!text.includes('[DONE]'), 'a Responses stream has no [DONE]');
  const events = text.split('\n\n').filter((e) => e.length).map((e) => {
    const m = e.match(/^event: (\S+)\ndata: (.*)$/s);
    assert.ok(m, `not a named event: ${e}`);
    const data = JSON.parse(m[2]);
    assert.equal(data.type, m[1]);
    return data;
  });
  events.forEach((e, i) => assert.equal(e.sequence_number, i, JSON.stringify(e)));
  return events;
}

async function sdkEvents(c, body) {
  const events = [];
  for await (const e of await c.responses.create({ ...body, stream: true })) events.push(e);
  return events;
}

// What every streamed response goes through, item by item; returns the final response.
function checkEventSequence(events) {
  assert.equal(events[0].type, 'response.created');
  assert.equal(events[0].response.status, 'in_progress');
  assert.deepEqual(events[0].response.output, []);
  assert.equal(events[1].type, 'response.in_progress');
  const last = events.at(-1);
  assert.match(last.type, /^response\.(completed|incomplete)$/);
  assert.equal(last.type, `response.${last.response.status}`);
  assert.equal(last.response.id, events[0].response.id);
  const open = new Map();  // output_index -> item id
  for (const e of events.slice(2, -1)) {
    if (e.type === 'response.output_item.added') {
      assert.equal(e.item.status, 'in_progress');
      assert.ok(!open.has(e.output_index));
      open.set(e.output_index, e.item.id);
    } else if (e.type === 'response.output_item.done') {
      assert.equal(open.get(e.output_index), e.item.id);
      assert.deepEqual(last.response.output[e.output_index], e.item);
    } else {
      assert.equal(open.get(e.output_index), e.item_id, JSON.stringify(e));
    }
  }
  assert.equal(open.size, last.response.output.length);
  return last.response;
}

describe('text', () => {
  const body = { input: ASK, instructions: SYSTEM, max_output_tokens: 12, temperature: 0 };

  test('non-streaming: the chat route\'s answer as a response object', async () => {
    const r = await client.responses.create(body);
    assert.match(r.id, /^resp_[0-9A-Za-z]{24}$/);
    assert.equal(r.object, 'response');
    assert.equal(typeof r.created_at, 'number');
    assert.equal(typeof r.model, 'string');
    assert.equal(r.error, null);
    assert.equal(r.output.length, 1);
    const [m] = r.output;
    assert.equal(m.type, 'message');
    assert.match(m.id, /^msg_/);
    assert.equal(m.role, 'assistant');
    assert.equal(m.status, r.status);
    assert.deepEqual(m.content, [{ type: 'output_text', text: r.output_text, annotations: [],
                                   logprobs: [] }]);
    // The request's settings come back.
    assert.equal(r.instructions, SYSTEM);
    assert.equal(r.max_output_tokens, 12);
    assert.equal(r.temperature, 0);
    assert.equal(r.store, true);
    assert.equal(r.previous_response_id, null);
    assert.deepEqual(r.tools, []);
    assert.equal(r.tool_choice, 'auto');
    assert.deepEqual(r.text, { format: { type: 'text' } });
    const c = await chat(server, { messages: [{ role: 'system', content: SYSTEM },
                                              { role: 'user', content: ASK }],
                                   max_tokens: 12, temperature: 0 });
    assertSameAnswer(r, c);
  });

  test('items and developer messages are the same conversation as a string and instructions',
       async () => {
    const a = await client.responses.create(body);
    const b = await client.responses.create({
      input: [{ role: 'developer', content: SYSTEM },
              { type: 'message', role: 'user', content: [{ type: 'input_text', text: ASK }] }],
      max_output_tokens: 12, temperature: 0,
    });
    assert.equal(b.output_text, a.output_text);
    assert.equal(b.usage.input_tokens, a.usage.input_tokens);
    assert.equal(b.usage.output_tokens, a.usage.output_tokens);
  });

  test('streaming: typed events that add up to the non-streamed response', async () => {
    const whole = await client.responses.create({ ...body, max_output_tokens: 16 });
    const events = await sdkEvents(client, { ...body, max_output_tokens: 16 });
    const final = checkEventSequence(events);
    assert.notEqual(final.id, whole.id);
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    assert.ok(deltas.length > 1, 'text arrives in pieces');
    assert.equal(deltas.map((e) => e.delta).join(''), whole.output_text);
    const done = events.find((e) => e.type === 'response.output_text.done');
    assert.equal(done.text, whole.output_text);
    assert.equal(final.status, whole.status);
    // The prefix cache may serve more of the second prompt: compare all but cached_tokens.
    const counts = ({ input_tokens_details, ...u }) => u;
    assert.deepEqual(counts(final.usage), counts(whole.usage));
    assert.deepEqual(final.output.map((i) => i.content), whole.output.map((i) => i.content));
    // The SDK's own accumulator over the same events.
    const s = client.responses.stream({ ...body, max_output_tokens: 16 });
    assert.equal((await s.finalResponse()).output_text, whole.output_text);
    // On the wire: named events, numbered, no [DONE].
    checkEventSequence(await rawEvents(server, { ...body, max_output_tokens: 16 }));
  });

  test('max_output_tokens ends a stream with response.incomplete', async () => {
    const events = await sdkEvents(client, { input: ASK, max_output_tokens: 2, temperature: 0 });
    const final = checkEventSequence(events);
    assert.equal(events.at(-1).type, 'response.incomplete');
    assert.deepEqual(final.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(final.usage.output_tokens, 2);
  });

  test('text.format json_schema constrains as response_format does on chat', async () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'],
                     additionalProperties: false };
    const r = await client.responses.create({
      input: ASK, max_output_tokens: 40, temperature: 0.7, seed: 7,
      text: { format: { type: 'json_schema', name: 'A', schema, strict: true } },
    });
    const c = await chat(server, {
      messages: [{ role: 'user', content: ASK }], max_tokens: 40, temperature: 0.7, seed: 7,
      response_format: { type: 'json_schema', json_schema: { name: 'A', schema, strict: true } },
    });
    assertSameAnswer(r, c);
    assert.equal(r.output_text.trim()[0], '{', r.output_text);
    assert.equal(r.text.format.type, 'json_schema');
  });
});

describe('stored responses', () => {
  test('previous_response_id continues the stored conversation, not its instructions',
       async () => {
    const first = await client.responses.create({ input: ASK, instructions: 'Be terse.',
                                                  max_output_tokens: 8, temperature: 0 });
    const second = await client.responses.create({ previous_response_id: first.id,
                                                   input: 'And the sky?', max_output_tokens: 8,
                                                   temperature: 0 });
    assert.equal(second.previous_response_id, first.id);
    assert.equal(second.instructions, null);
    const history = [{ role: 'user', content: ASK },
                     { role: 'assistant', content: first.output_text },
                     { role: 'user', content: 'And the sky?' }];
    const c = await chat(server, { messages: history, max_tokens: 8, temperature: 0 });
    assertSameAnswer(second, c);
    // A chain of three: the second's stored conversation includes the first's.
    const third = await client.responses.create({ previous_response_id: second.id, input: 'Why?',
                                                  max_output_tokens: 4, temperature: 0 });
    const c3 = await chat(server, {
      messages: [...history, { role: 'assistant', content: second.output_text },
                 { role: 'user', content: 'Why?' }],
      max_tokens: 4, temperature: 0,
    });
    assertSameAnswer(third, c3);
  });

  test('retrieve returns the stored response; delete removes it', async () => {
    const r = await client.responses.create({ input: ASK, max_output_tokens: 4, temperature: 0 });
    assert.deepEqual(await client.responses.retrieve(r.id), r);
    // Streamed responses are stored too, as the final event states them.
    const final = checkEventSequence(await sdkEvents(client, { input: ASK, max_output_tokens: 4 }));
    const got = await client.responses.retrieve(final.id);
    delete got.output_text;  // the SDK adds it to what it retrieves
    assert.deepEqual(got, final);
    await client.responses.delete(r.id);
    await assert.rejects(client.responses.retrieve(r.id), (e) => e.status === 404);
    await assert.rejects(client.responses.delete(r.id), (e) => e.status === 404);
    await assert.rejects(
      client.responses.create({ previous_response_id: r.id, input: 'more' }),
      (e) => e.status === 404 && e.param === 'previous_response_id' &&
             e.error?.type === 'not_found_error' && e.message.includes(r.id));
  });

  test('store: false keeps nothing', async () => {
    const r = await client.responses.create({ input: ASK, max_output_tokens: 2, store: false });
    assert.equal(r.store, false);
    await assert.rejects(client.responses.retrieve(r.id), (e) => e.status === 404);
    await assert.rejects(client.responses.create({ previous_response_id: r.id, input: 'more' }),
                         (e) => e.status === 404 && e.param === 'previous_response_id');
  });

  test('--responses-max 2 evicts the least recently used; --responses-ttl expires', async () => {
    const make = () => smallClient.responses.create({ input: 'hi', max_output_tokens: 1 });
    const a = await make();
    const b = await make();
    await smallClient.responses.retrieve(a.id);  // a is now more recent than b
    const c = await make();
    await assert.rejects(smallClient.responses.retrieve(b.id), (e) => e.status === 404);
    assert.equal((await smallClient.responses.retrieve(a.id)).id, a.id);
    assert.equal((await smallClient.responses.retrieve(c.id)).id, c.id);
    await new Promise((resolve) => setTimeout(resolve, TTL_S * 1000 + 300));
    for (const id of [a.id, c.id])
      await assert.rejects(smallClient.responses.retrieve(id), (e) => e.status === 404);
  });
});

describe('function calls', () => {
  const tools = [{
    type: 'function', name: 'get_weather', description: 'Weather forecast for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } },
                  required: ['city'] },
    strict: false,
  }];
  const ask = 'What will the weather be in Paris?';

  function assertCall(r) {
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.output.length, 1, JSON.stringify(r.output));
    const [fc] = r.output;
    assert.equal(fc.type, 'function_call');
    assert.match(fc.id, /^fc_/);
    assert.match(fc.call_id, /^call_[0-9A-Za-z]{24}$/);
    assert.equal(fc.name, 'get_weather');
    assert.equal(fc.status, 'completed');
    assert.deepEqual(JSON.parse(fc.arguments), { city: 'Paris', days: 3 });
    if ('output_text' in r) assert.equal(r.output_text, '');  // the SDK adds it, events do not
    return fc;
  }

  test('function_call -> function_call_output, stateless and by previous_response_id',
       async () => {
    const first = await toolClient.responses.create({ input: ask, tools, max_output_tokens: 100 });
    const call = assertCall(first);
    assert.equal(first.tools[0].name, 'get_weather');
    const output = { type: 'function_call_output', call_id: call.call_id, output: 'sunny, 24 C' };
    const chained = await toolClient.responses.create({
      previous_response_id: first.id, input: [output], tools, max_output_tokens: 100 });
    // The script model answers every turn with the same call; what matters is the conversation.
    assertCall(chained);
    assert.ok(chained.usage.input_tokens > first.usage.input_tokens + 5);
    // The client resending the items itself renders the very same prompt.
    const resent = await toolClient.responses.create({
      input: [{ role: 'user', content: ask }, ...first.output, output], tools,
      max_output_tokens: 100, store: false });
    assertCall(resent);
    assert.equal(resent.usage.input_tokens, chained.usage.input_tokens);
    // And it is the prompt the chat route renders for the same conversation in its own shape.
    const c = await chat(toolServer, {
      messages: [{ role: 'user', content: ask },
                 { role: 'assistant', content: null, tool_calls: [{ id: call.call_id,
                   type: 'function', function: { name: call.name, arguments: call.arguments } }] },
                 { role: 'tool', tool_call_id: call.call_id, content: 'sunny, 24 C' }],
      tools: tools.map(({ type, strict, ...fn }) => ({ type, function: fn })), max_tokens: 100,
    });
    assert.equal(chained.usage.input_tokens, c.usage.prompt_tokens);
  });

  test('streaming: one function_call item whose arguments arrive as deltas', async () => {
    const events = await sdkEvents(toolClient, { input: ask, tools, max_output_tokens: 100 });
    const final = checkEventSequence(events);
    const call = assertCall(final);
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(2), ['response.output_item.added',
                                      'response.function_call_arguments.delta',
                                      'response.function_call_arguments.done',
                                      'response.output_item.done', 'response.completed']);
    assert.equal(events[2].item.type, 'function_call');
    assert.equal(events[3].delta, call.arguments);
    assert.equal(events[4].arguments, call.arguments);
    assert.equal(events[4].name, 'get_weather');
  });

  test('tool_choice required and named are accepted; none leaves the markup as text', async () => {
    for (const tool_choice of ['required', { type: 'function', name: 'get_weather' }, 'auto']) {
      const r = await toolClient.responses.create({ input: ask, tools, tool_choice,
                                                    parallel_tool_calls: false,
                                                    max_output_tokens: 100 });
      assertCall(r);
      assert.deepEqual(r.tool_choice, tool_choice);
    }
    const none = await toolClient.responses.create({ input: ask, tools, tool_choice: 'none',
                                                     max_output_tokens: 100 });
    assert.equal(none.output[0].type, 'message');
    assert.match(none.output_text, /<tool_call>[\s\S]*get_weather[\s\S]*<\/tool_call>/);
  });
});

describe('bad requests', () => {
  async function assertServing() {
    const r = await client.responses.create({ input: 'hi', max_output_tokens: 1 });
    assert.equal(r.object, 'response');
  }

  const cases = [
    ['built-in tool', { input: 'hi', tools: [{ type: 'web_search_preview' }] }, 'tools[0].type',
     'unsupported_value'],
    ['image input', { input: [{ role: 'user', content: [
      { type: 'input_text', text: 'what is this?' },
      { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }] }] },
     'input[0].content[1].type', 'unsupported_value'],
    ['reasoning effort', { input: 'hi', reasoning: { effort: 'high' } }, 'reasoning.effort',
     'unsupported_value'],
    ['truncation auto', { input: 'hi', truncation: 'auto' }, 'truncation', 'unsupported_value'],
    ['missing input', { instructions: 'x' }, 'input', null],
    ['wrong type', { input: 'hi', max_output_tokens: 'four' }, 'max_output_tokens', null],
    ['unknown tool_choice name', { input: 'hi', tools: [{ type: 'function', name: 'f' }],
                                   tool_choice: { type: 'function', name: 'g' } },
     'tool_choice.name', null],
  ];
  for (const [name, body, param, code] of cases) {
    test(name, async () => {
      await assert.rejects(client.responses.create(body), (e) => {
        assert.equal(e.status, 400, String(e));
        assert.equal(e.error?.type, 'invalid_request_error', String(e));
        assert.equal(e.param, param, String(e));
        assert.equal(e.code, code, String(e));
        return true;
      });
      await assertServing();
    });
  }

  test('malformed JSON, an unknown model and an unknown id', async () => {
    const r = await fetch(`${server.url}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input": [',
    });
    assert.equal(r.status, 400);
    const j = await r.json();
    assert.equal(j.error.type, 'invalid_request_error');
    assert.match(j.error.message, /invalid JSON/);
    await assert.rejects(client.responses.create({ model: 'gpt-4o', input: 'hi' }),
                         (e) => e.status === 404 && e.code === 'model_not_found');
    await assert.rejects(client.responses.retrieve('resp_nope'),
                         (e) => e.status === 404 && e.error?.type === 'not_found_error');
    const put = await fetch(`${server.url}/v1/responses/resp_nope`, { method: 'PUT' });
    assert.equal(put.status, 405);
    await assertServing();
  });
});
