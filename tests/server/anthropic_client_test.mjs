// brisk serve's Anthropic Messages API (POST /v1/messages, /v1/messages/count_tokens) driven with
// raw fetch, as Anthropic's wire protocol is documented: text answers equal what
// /v1/chat/completions answers for the same conversation, streams are the documented event
// sequence and add up to the whole answer, a tool_use round trip works on a script model that
// always answers with one Qwen <tool_call>, stop_sequences end the answer before the match,
// count_tokens counts the prompt /v1/messages renders, and bad requests are 400s in Anthropic's
// error shape with the server still serving.
//
//   node tests/server/anthropic_client_test.mjs --brisk build/src/brisk --model M.gguf \
//     --tool-model tool-call-script.gguf
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assembleStream, parseEvents } from './lib/anthropic_sse.mjs';
import { parseArgs, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();
if (!opts.toolModel) throw new Error('--tool-model is required');
const KEY = 'sk-ant-test-42';
let server;      // the tiny golden model, behind --api-key
let toolServer;  // the script model (no key)

before(async () => {
  [server, toolServer] = await Promise.all([
    startServer({ brisk: opts.brisk, model: opts.model, args: ['--api-key', KEY, ...opts.serveArgs] }),
    startServer({ brisk: opts.brisk, model: opts.toolModel, args: opts.serveArgs }),
  ]);
});

after(async () => {
  for (const s of [server, toolServer]) {
    const { code } = await s.stop();
    assert.equal(code, 0, `server exit status after SIGTERM:\n${s.stderr()}`);
  }
});

// Anthropic's SDKs send the key in x-api-key and the API version in anthropic-version.
const anthropicHeaders = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };

async function post(srv, path, body, headers = anthropicHeaders) {
  const r = await fetch(srv.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* a stream, or checked by the caller */ }
  return { status: r.status, json, text, headers: r.headers };
}

const messages = (srv, body, headers) => post(srv, '/v1/messages', body, headers);

async function stream(srv, body) {
  const r = await messages(srv, { ...body, stream: true });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  assert.ok(!r.text.includes('[DONE]'), 'an Anthropic stream has no [DONE]');
  return assembleStream(parseEvents(r.text));
}

function assertAnthropicError(r, status, type, messagePart) {
  assert.equal(r.status, status, r.text);
  assert.ok(r.json, `not JSON: ${r.text}`);
  assert.equal(r.json.type, 'error', r.text);
  assert.equal(r.json.error.type, type, r.text);
  assert.equal(typeof r.json.error.message, 'string');
  if (messagePart) assert.ok(r.json.error.message.includes(messagePart), r.text);
}

// The server still answers a small /v1/messages request.
async function assertServing(srv = server) {
  const r = await messages(srv, { max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.type, 'message');
}

const convo = {
  system: 'You are a helpful assistant.',
  messages: [{ role: 'user', content: 'Tell me about the sea.' }],
};

describe('text', () => {
  test('non-streaming: the chat route\'s answer as an Anthropic message', async () => {
    const r = await messages(server, { ...convo, max_tokens: 12, temperature: 0 });
    assert.equal(r.status, 200, r.text);
    const m = r.json;
    assert.match(m.id, /^msg_[0-9A-Za-z]{24}$/);
    assert.equal(m.type, 'message');
    assert.equal(m.role, 'assistant');
    assert.equal(typeof m.model, 'string');
    // The same conversation through /v1/chat/completions, independently.
    const c = await post(server, '/v1/chat/completions', {
      messages: [{ role: 'system', content: convo.system }, ...convo.messages], max_tokens: 12,
      temperature: 0,
    }, { authorization: `Bearer ${KEY}` });
    assert.equal(c.status, 200, c.text);
    const choice = c.json.choices[0];
    const text = choice.message.content;
    assert.deepEqual(m.content, text ? [{ type: 'text', text }] : []);
    assert.equal(m.stop_reason, { length: 'max_tokens', stop: 'end_turn' }[choice.finish_reason]);
    assert.equal(m.stop_sequence, null);
    assert.deepEqual(m.usage, { input_tokens: c.json.usage.prompt_tokens,
                                output_tokens: c.json.usage.completion_tokens });
  });

  test('streaming adds up to the non-streamed message', async () => {
    const body = { ...convo, max_tokens: 16, temperature: 0 };
    const whole = (await messages(server, body)).json;
    const s = await stream(server, body);
    assert.match(s.id, /^msg_/);
    assert.notEqual(s.id, whole.id);
    assert.deepEqual(s.content, whole.content);
    assert.equal(s.stop_reason, whole.stop_reason);
    assert.equal(s.stop_sequence, null);
    assert.equal(s.input_tokens, whole.usage.input_tokens);
    assert.equal(s.output_tokens, whole.usage.output_tokens);
  });

  test('content blocks, system blocks and a Bearer key work too', async () => {
    const blocks = {
      system: [{ type: 'text', text: convo.system }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Tell me about the sea.' }] }],
      max_tokens: 8, temperature: 0, metadata: { user_id: 'u-1' },
    };
    const a = await messages(server, blocks, { authorization: `Bearer ${KEY}` });
    const b = await messages(server, { ...convo, max_tokens: 8, temperature: 0 });
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.json.content, b.json.content);
    assert.deepEqual(a.json.usage, b.json.usage);
  });

  test('errors before and during routing are Anthropic-shaped too', async () => {
    const body = { ...convo, max_tokens: 4 };
    assertAnthropicError(await messages(server, body, {}), 401, 'authentication_error');
    assertAnthropicError(await messages(server, body, { 'x-api-key': 'wrong' }), 401,
                         'authentication_error');
    const g = await fetch(`${server.url}/v1/messages`, { headers: anthropicHeaders });
    assertAnthropicError({ status: g.status, json: await g.json(), text: '' }, 405,
                         'invalid_request_error');
    assertAnthropicError(await messages(server, { ...body, model: 'claude-sonnet-4' }), 404,
                         'not_found_error', 'claude-sonnet-4');
    await assertServing();
  });
});

describe('stop_sequences', () => {
  // The script model's fixed answer (without tools it is plain text).
  const scripted = { messages: [{ role: 'user', content: 'weather?' }], max_tokens: 100,
                     temperature: 0 };
  test('the answer ends before the stop sequence, which is reported', async () => {
    const full = (await messages(toolServer, scripted)).json;
    assert.equal(full.stop_reason, 'end_turn');
    const text = full.content[0].text;
    assert.match(text, /Paris/);
    const expected = text.slice(0, text.indexOf('Paris'));
    const body = { ...scripted, stop_sequences: ['Zürich', 'Paris'] };
    const r = (await messages(toolServer, body)).json;
    assert.deepEqual(r.content, [{ type: 'text', text: expected }]);
    assert.equal(r.stop_reason, 'stop_sequence');
    assert.equal(r.stop_sequence, 'Paris');
    const s = await stream(toolServer, body);
    assert.deepEqual(s.content, r.content);
    assert.equal(s.stop_reason, 'stop_sequence');
    assert.equal(s.stop_sequence, 'Paris');
  });
});

describe('tool use', () => {
  const tools = [{
    name: 'get_weather',
    description: 'Weather forecast for a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } },
                    required: ['city'] },
  }];
  const ask = [{ role: 'user', content: 'What will the weather be in Paris?' }];
  const expectedInput = { city: 'Paris', days: 3 };

  function assertToolUse(m) {
    assert.equal(m.stop_reason, 'tool_use', JSON.stringify(m));
    assert.equal(m.stop_sequence, null);
    assert.equal(m.content.length, 1, JSON.stringify(m.content));
    const [b] = m.content;
    assert.equal(b.type, 'tool_use');
    assert.match(b.id, /^toolu_[0-9A-Za-z]{24}$/);
    assert.equal(b.name, 'get_weather');
    assert.deepEqual(b.input, expectedInput);
    return b;
  }

  test('tool_use -> tool_result -> answer', async () => {
    const first = await messages(toolServer, { tools, messages: ask, max_tokens: 100 });
    assert.equal(first.status, 200, first.text);
    const call = assertToolUse(first.json);
    const second = await messages(toolServer, {
      tools, max_tokens: 100,
      messages: [...ask, { role: 'assistant', content: first.json.content },
                 { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id,
                                             content: [{ type: 'text', text: 'sunny, 24 C' }] }] }],
    });
    assert.equal(second.status, 200, second.text);
    // The script model answers every turn with the same call; what matters is that the tool_use
    // and tool_result blocks were accepted and rendered into a longer prompt.
    assertToolUse(second.json);
    assert.ok(second.json.usage.input_tokens > first.json.usage.input_tokens + 5);
    const count = await post(toolServer, '/v1/messages/count_tokens', {
      tools, messages: [...ask, { role: 'assistant', content: first.json.content },
                        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id,
                                                    content: [{ type: 'text', text: 'sunny, 24 C' }] }] }],
    });
    assert.deepEqual(count.json, { input_tokens: second.json.usage.input_tokens });
  });

  test('streaming: one tool_use block whose input_json_delta is the input', async () => {
    const s = await stream(toolServer, { tools, messages: ask, max_tokens: 100 });
    assertToolUse(s);
  });

  test('tool_choice tool and any are accepted; none leaves the markup as text', async () => {
    for (const tool_choice of [{ type: 'tool', name: 'get_weather' }, { type: 'any' },
                               { type: 'auto', disable_parallel_tool_use: true }]) {
      const r = await messages(toolServer, { tools, tool_choice, messages: ask, max_tokens: 100 });
      assert.equal(r.status, 200, r.text);
      assertToolUse(r.json);
    }
    const none = await messages(toolServer, { tools, tool_choice: { type: 'none' }, messages: ask,
                                              max_tokens: 100 });
    assert.equal(none.json.stop_reason, 'end_turn');
    assert.match(none.json.content[0].text, /<tool_call>[\s\S]*get_weather[\s\S]*<\/tool_call>/);
  });
});

describe('count_tokens', () => {
  test('counts the prompt /v1/messages renders', async () => {
    const r = await post(server, '/v1/messages/count_tokens', convo);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.json), ['input_tokens']);
    const m = await messages(server, { ...convo, max_tokens: 1 });
    assert.equal(r.json.input_tokens, m.json.usage.input_tokens);
    // Tools are part of the prompt.
    const withTools = await post(server, '/v1/messages/count_tokens', {
      ...convo, tools: [{ name: 'f', description: 'does f', input_schema: { type: 'object' } }],
    });
    assert.ok(withTools.json.input_tokens > r.json.input_tokens + 10, withTools.text);
    assertAnthropicError(await post(server, '/v1/messages/count_tokens', { system: 'x' }), 400,
                         'invalid_request_error', 'messages');
  });
});

describe('bad requests', () => {
  const user = [{ role: 'user', content: 'hi' }];
  const cases = [
    ['missing max_tokens', { messages: user }, 'max_tokens'],
    ['bad role', { max_tokens: 4, messages: [{ role: 'system', content: 'x' }] },
     'messages[0].role'],
    ['image block', { max_tokens: 4, messages: [{ role: 'user', content: [
      { type: 'text', text: 'what is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ] }] }, 'messages[0].content[1].type: image blocks are not supported'],
    ['unknown tool_choice name', {
      max_tokens: 4, messages: user, tools: [{ name: 'f', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'g' } }, 'tool_choice.name'],
    ['malformed JSON', '{"max_tokens": 4, "messages": [', 'invalid JSON'],
    ['wrong type', { max_tokens: 'four', messages: user }, 'max_tokens must be an integer'],
    ['final assistant message', { max_tokens: 4, messages: [...user, { role: 'assistant',
                                                                       content: 'Sure' }] },
     'prefill'],
  ];
  for (const [name, body, messagePart] of cases) {
    test(name, async () => {
      assertAnthropicError(await messages(server, body), 400, 'invalid_request_error', messagePart);
      await assertServing();
    });
  }
});
