// brisk serve under bad input and bad clients (issue 7 acceptance): each case gets the expected
// HTTP status and an OpenAI error body, and the server stays healthy after every one of them.
//
//   node tests/server/bad_input_test.mjs --brisk build/src/brisk --model M.gguf
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';

import { parseArgs, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();
const KEY = 'sk-test-0123456789';
const MAX_MODEL_LEN = 320;  // room for a reply longer than the old default of 256 tokens
const ORIGIN = 'http://localhost:5173';  // the one origin --allowed-origins lets in
let server;
let port;

before(async () => {
  server = await startServer({
    brisk: opts.brisk, model: opts.model,
    args: ['--api-key', KEY, '--max-model-len', String(MAX_MODEL_LEN), '--allowed-origins', ORIGIN,
           '--header-timeout', '2',
           '--max-body-mib', '8', ...opts.serveArgs],
  });
  port = Number(new URL(server.url).port);
});

after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0, server.stderr());
});

const auth = { authorization: `Bearer ${KEY}` };

async function post(path, body, headers = auth) {
  const r = await fetch(server.url + path, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body,
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* checked by the caller */ }
  return { status: r.status, json, text, headers: r.headers };
}

// Healthy: /health is ok and a small generation still works.
async function assertHealthy() {
  const h = await fetch(server.url + '/health');
  assert.equal(h.status, 200);
  const r = await post('/v1/chat/completions', JSON.stringify({
    messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, temperature: 0 }));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.object, 'chat.completion');
}

function assertError(r, status, { param, type = 'invalid_request_error' } = {}) {
  assert.equal(r.status, status, r.text);
  assert.ok(r.json && r.json.error, `not an OpenAI error body: ${r.text}`);
  assert.equal(typeof r.json.error.message, 'string');
  assert.ok(r.json.error.message.length > 0);
  assert.equal(r.json.error.type, type, r.text);
  assert.ok('param' in r.json.error && 'code' in r.json.error, r.text);
  if (param !== undefined) assert.equal(r.json.error.param, param, r.text);
}

const msg = [{ role: 'user', content: 'hello' }];
const chat = (extra) => JSON.stringify({ messages: msg, max_tokens: 4, ...extra });

// The value of the first sample of `name` whose labels include `labels` (NaN when none).
async function metricValue(name, labels = {}) {
  const r = await fetch(server.url + '/metrics', { headers: auth });
  for (const line of (await r.text()).split('\n')) {
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)]
      .map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[4]);
  }
  return NaN;
}

describe('invalid requests', () => {
  const cases = [
    ['malformed JSON', '{"messages": [', 400, {}],
    ['not an object', '[1,2,3]', 400, {}],
    ['wrong field type', chat({ max_tokens: 'ten' }), 400, { param: 'max_tokens' }],
    ['messages not an array', JSON.stringify({ messages: 'hi' }), 400, { param: 'messages' }],
    ['missing messages', JSON.stringify({ max_tokens: 3 }), 400, { param: 'messages' }],
    ['unknown role', JSON.stringify({ messages: [{ role: 'wizard', content: 'x' }] }), 400,
     { param: 'messages[0].role' }],
    ['negative max_tokens', chat({ max_tokens: -1 }), 400, { param: 'max_tokens' }],
    ['temperature below 0', chat({ temperature: -0.5 }), 400, { param: 'temperature' }],
    ['top_p above 1', chat({ top_p: 1.5 }), 400, { param: 'top_p' }],
    ['unknown model', chat({ model: 'gpt-17' }), 404, { type: 'not_found_error' }],
    ['1000 messages', JSON.stringify({
      messages: Array.from({ length: 1000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user',
                                                           content: `m${i}` })) }), 400, {}],
    ['prompt over max_model_len',
     JSON.stringify({ messages: [{ role: 'user', content: 'word '.repeat(MAX_MODEL_LEN * 2) }] }),
     400, {}],
  ];
  for (const [name, body, status, expect] of cases) {
    test(name, async () => {
      const r = await post('/v1/chat/completions', body);
      assertError(r, status, expect);
      if (name === 'prompt over max_model_len') {
        assert.equal(r.json.error.code, 'context_length_exceeded', r.text);
      }
      await assertHealthy();
    });
  }

  test('invalid UTF-8 in a string', async () => {
    const body = Buffer.concat([Buffer.from('{"messages":[{"role":"user","content":"a'),
                                Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}]}')]);
    const r = await post('/v1/chat/completions', body);
    assertError(r, 400);
    await assertHealthy();
  });

  test('20 MB body is refused with 413', async () => {
    const big = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(20 << 20) }] });
    let r;
    try {
      r = await post('/v1/chat/completions', big);
    } catch (e) {
      // The server may close before the client finished sending; that is a refusal too, but
      // then it must have said 413 on a raw connection: checked below.
      r = null;
    }
    if (r) assertError(r, 413);
    const raw = await rawExchange(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${20 << 20}\r\n\r\n`, 3000);
    assert.match(raw, /^HTTP\/1\.1 413/);
    await assertHealthy();
  });
});

describe('lengths and field combinations', () => {
  const cases = [
    ['max_tokens beyond the context', chat({ max_tokens: MAX_MODEL_LEN }), 'max_tokens'],
    ['max_completion_tokens beyond the context',
     JSON.stringify({ messages: msg, max_completion_tokens: MAX_MODEL_LEN }), 'max_completion_tokens'],
    ['stream_options without stream', chat({ stream_options: { include_usage: true } }),
     'stream_options'],
    ['continue_final_message after a user message', chat({ continue_final_message: true }),
     'continue_final_message'],
    ['continue_final_message with add_generation_prompt',
     JSON.stringify({ messages: [...msg, { role: 'assistant', content: 'Hi, I' }], max_tokens: 4,
                      continue_final_message: true, add_generation_prompt: true }),
     'continue_final_message'],
    ['add_generation_prompt not a boolean', chat({ add_generation_prompt: 'no' }),
     'add_generation_prompt'],
  ];
  for (const [name, body, param] of cases) {
    test(name, async () => {
      const r = await post('/v1/chat/completions', body);
      assertError(r, 400, { param });
      if (name.includes('beyond the context')) {
        assert.equal(r.json.error.code, 'context_length_exceeded', r.text);
        assert.match(r.json.error.message, new RegExp(`${MAX_MODEL_LEN} > ${MAX_MODEL_LEN} - \\d+`),
                     r.text);
      }
      await assertHealthy();
    });
  }

  test('completions and /v1/messages hold max_tokens to the context too', async () => {
    const c = await post('/v1/completions',
                         JSON.stringify({ prompt: 'hello', max_tokens: MAX_MODEL_LEN }));
    assertError(c, 400, { param: 'max_tokens' });
    const m = await post('/v1/messages', JSON.stringify({ messages: msg, max_tokens: MAX_MODEL_LEN }));
    assert.equal(m.status, 400, m.text);
    assert.equal(m.json.type, 'error', m.text);
    assert.equal(m.json.error.type, 'invalid_request_error', m.text);
    assert.match(m.json.error.message, /'max_tokens' is too large/, m.text);
    await assertHealthy();
  });

  test('without max_tokens a reply runs to the end of the context, past 256 tokens', async () => {
    for (const [path, body] of [['/v1/chat/completions', { messages: msg }],
                                ['/v1/completions', { prompt: 'Once upon a time' }]]) {
      const r = await post(path, JSON.stringify({ ...body, ignore_eos: true, temperature: 0 }));
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.choices[0].finish_reason, 'length', path);
      assert.equal(r.json.usage.total_tokens, MAX_MODEL_LEN, path);
      assert.ok(r.json.usage.completion_tokens > 256, `${path}: ${JSON.stringify(r.json.usage)}`);
    }
  });

  test('a prompt that fits with max_tokens exactly is served', async () => {
    const count = (await post('/tokenize', JSON.stringify({ messages: msg }))).json.count;
    const r = await post('/v1/chat/completions', chat({ max_tokens: MAX_MODEL_LEN - count,
                                                        ignore_eos: true }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.usage.prompt_tokens, count);
    assert.equal(r.json.usage.completion_tokens, MAX_MODEL_LEN - count);
  });
});

describe('/tokenize in vLLM\'s shapes', () => {
  const tokenize = async (body) => {
    const r = await post('/tokenize', JSON.stringify(body));
    assert.equal(r.status, 200, r.text);
    return r.json;
  };

  test('prompt: the same tokens as llama.cpp\'s content, with count and max_model_len', async () => {
    const llama = await tokenize({ content: 'Hello world, hello brisk' });
    const vllm = await tokenize({ prompt: 'Hello world, hello brisk' });
    assert.deepEqual(Object.keys(llama), ['tokens']);
    assert.deepEqual(vllm, { count: llama.tokens.length, max_model_len: MAX_MODEL_LEN,
                             tokens: llama.tokens });
  });

  test('messages: the prompt the chat route generates from', async () => {
    const convo = [{ role: 'user', content: 'Name a colour.' }];
    const t = await tokenize({ messages: convo });
    const r = await post('/v1/chat/completions', JSON.stringify({ messages: convo, max_tokens: 1 }));
    assert.equal(t.count, r.json.usage.prompt_tokens);
    assert.equal(t.tokens.length, t.count);
    // Without the generation prompt: the same conversation, no assistant header after it.
    const closed = await tokenize({ messages: convo, add_generation_prompt: false });
    assert.ok(closed.count < t.count);
    assert.deepEqual(t.tokens.slice(0, closed.count), closed.tokens);
    // Continuing an assistant message: its text ends the prompt (no end-of-turn after it).
    const prefill = [...convo, { role: 'assistant', content: 'Blue' }];
    const open = await tokenize({ messages: prefill, continue_final_message: true });
    const shut = await tokenize({ messages: prefill, add_generation_prompt: false });
    assert.ok(open.count < shut.count);
    assert.deepEqual(shut.tokens.slice(0, open.count), open.tokens);
    const text = await post('/detokenize', JSON.stringify({ tokens: open.tokens }));
    assert.ok(text.json.content.endsWith('Blue'), text.text);
  });

  test('bad shapes are 400s naming the field', async () => {
    assertError(await post('/tokenize', JSON.stringify({ messages: 'hi' })), 400,
                { param: 'messages' });
    assertError(await post('/tokenize', JSON.stringify({ prompt: 5 })), 400, { param: 'prompt' });
    assertError(await post('/tokenize', JSON.stringify({ text: 'hi' })), 400, { param: 'content' });
  });
});

describe('CORS (--allowed-origins)', () => {
  const preflight = (origin) => fetch(server.url + '/v1/chat/completions', {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST',
               'access-control-request-headers': 'authorization, content-type' },
  });

  test('a preflight from an allowed origin is a 204 without a key', async () => {
    const r = await preflight(ORIGIN);
    assert.equal(r.status, 204, await r.text());
    assert.equal(r.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(r.headers.get('access-control-allow-methods'), /POST/);
    assert.equal(r.headers.get('access-control-allow-headers'), 'authorization, content-type');
    assert.ok(Number(r.headers.get('access-control-max-age')) > 0);
    assert.match(r.headers.get('vary'), /Origin/);
    const other = await preflight('http://evil.example');
    assert.equal(other.status, 400);
    assert.equal(other.headers.get('access-control-allow-origin'), null);
  });

  test('answers, errors and streams carry the header for the allowed origin only', async () => {
    const withOrigin = { ...auth, origin: ORIGIN };
    const ok = await post('/v1/chat/completions', chat({}), withOrigin);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(ok.headers.get('vary'), /Origin/);
    const denied = await post('/v1/chat/completions', chat({}), { origin: ORIGIN });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), ORIGIN);
    const stream = await post('/v1/chat/completions', chat({ stream: true }), withOrigin);
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type'), /text\/event-stream/);
    assert.equal(stream.headers.get('access-control-allow-origin'), ORIGIN);
    assert.match(stream.text, /\[DONE\]/);
    for (const headers of [auth, { ...auth, origin: 'http://evil.example' }]) {
      const r = await post('/v1/chat/completions', chat({}), headers);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('access-control-allow-origin'), null);
    }
  });
});

describe('authentication', () => {
  test('missing key is 401', async () => {
    const r = await post('/v1/chat/completions', chat({}), {});
    assertError(r, 401, { type: 'authentication_error' });
  });
  test('wrong key is 401', async () => {
    const r = await post('/v1/chat/completions', chat({}), { authorization: 'Bearer sk-wrong' });
    assertError(r, 401, { type: 'authentication_error' });
    const r2 = await post('/v1/chat/completions', chat({}), { authorization: `Bearer ${KEY}x` });
    assertError(r2, 401, { type: 'authentication_error' });
  });
  test('/health and the UI need no key; /metrics does', async () => {
    assert.equal((await fetch(server.url + '/health')).status, 200);
    assert.equal((await fetch(server.url + '/')).status, 200);
    assert.equal((await fetch(server.url + '/metrics')).status, 401);
    await assertHealthy();
  });
});

// Sends raw bytes, returns what the server answered before closing (or after `waitMs`).
function rawExchange(bytes, waitMs) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    const done = () => { s.destroy(); resolve(got); };
    const timer = setTimeout(done, waitMs);
    s.on('data', (d) => { got += d; });
    s.on('close', () => { clearTimeout(timer); resolve(got); });
    s.on('error', () => {});
    s.write(bytes);
  });
}

describe('slow and vanishing clients', () => {
  test('slowloris (1 header byte per second) is cut off; others are served meanwhile', async () => {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    const header = 'POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Slow: ' + 'a'.repeat(100);
    const t0 = Date.now();
    let i = 0;
    const drip = setInterval(() => { if (!s.destroyed) s.write(header[i++ % header.length]); }, 1000);
    const closed = new Promise((resolve) => s.on('close', () => resolve(Date.now() - t0)));
    await assertHealthy();  // served while the slow client holds its connection
    const ms = await Promise.race([closed, new Promise((r) => setTimeout(() => r(-1), 8000))]);
    clearInterval(drip);
    s.destroy();
    assert.ok(ms > 0 && ms < 5000, `slow client was not cut off in time (${ms} ms)`);
    await assertHealthy();
  });

  test('a client that disconnects mid-stream is cancelled and its KV freed', async () => {
    const abortsBefore = await metricValue('vllm:request_success_total', { finished_reason: 'abort' });
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    // No max_tokens: the reply may run to the end of the context, long enough to be cut off.
    const body = JSON.stringify({ messages: msg, ignore_eos: true, stream: true });
    s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
            body);
    await new Promise((resolve) => {
      let got = '';
      s.on('data', (d) => { got += d; if ((got.match(/data: /g) || []).length >= 3) resolve(); });
    });
    assert.equal(await metricValue('vllm:num_requests_running'), 1);
    s.destroy();
    const t0 = Date.now();
    while (Date.now() - t0 < 5000 && (await metricValue('vllm:num_requests_running')) !== 0) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await metricValue('vllm:num_requests_running'), 0);
    assert.equal(await metricValue('vllm:kv_cache_usage_perc'), 0);
    const abortsAfter = await metricValue('vllm:request_success_total', { finished_reason: 'abort' });
    assert.equal((Number.isNaN(abortsBefore) ? 0 : abortsBefore) + 1, abortsAfter);
    await assertHealthy();
  });
});
