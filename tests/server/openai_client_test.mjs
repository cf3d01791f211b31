// brisk serve against the official `openai` npm client (DESIGN §6, issue 7 acceptance): chat and
// completions, streaming and not, include_usage, stop, seeds, max_tokens, logprobs, tool calls,
// json_object, and errors — each result checked against an independent expectation (the same
// request non-streamed, the same seed, the text before the stop string, ...).
//
//   node tests/server/openai_client_test.mjs --brisk build/src/brisk --model M.gguf
//     [--tool-model CHAIN.gguf]   (a model scripted to answer with a tool call; see make_chain_model)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';

import { parseArgs, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();
let server;
let client;
let modelId;

before(async () => {
  server = await startServer({ brisk: opts.brisk, model: opts.model, args: opts.serveArgs });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const models = await client.models.list();
  modelId = models.data[0].id;
});

after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0, `server exit status after SIGTERM:\n${server.stderr()}`);
});

const chatMessages = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Tell me about the sea.' },
];

async function collectChatStream(params) {
  const stream = await client.chat.completions.create({ ...params, stream: true });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

describe('models', () => {
  test('lists the served model', async () => {
    const models = await client.models.list();
    assert.equal(models.data.length, 1);
    assert.equal(models.data[0].object, 'model');
    assert.ok(modelId.length > 0);
  });

  test('retrieves the served model; another id is 404 model_not_found', async () => {
    const listed = (await client.models.list()).data[0];
    assert.deepEqual(await client.models.retrieve(modelId), listed);
    await assert.rejects(client.models.retrieve('no-such-model'),
                         (e) => e.status === 404 && e.code === 'model_not_found');
  });

  test('without --allowed-origins there is no CORS: OPTIONS is 405, no header', async () => {
    const r = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' },
    });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('access-control-allow-origin'), null);
  });
});

describe('chat', () => {
  test('non-streaming reply with usage and length finish', async () => {
    const r = await client.chat.completions.create({
      model: modelId, messages: chatMessages, max_tokens: 12, temperature: 0, ignore_eos: true,
    });
    assert.equal(r.object, 'chat.completion');
    assert.match(r.id, /^chatcmpl-/);
    assert.equal(r.choices.length, 1);
    assert.equal(r.choices[0].message.role, 'assistant');
    assert.equal(typeof r.choices[0].message.content, 'string');
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.equal(r.usage.completion_tokens, 12);
    assert.ok(r.usage.prompt_tokens > 10);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 12);
  });

  test('streaming equals non-streaming, role first, one id, usage chunk last', async () => {
    const params = { model: modelId, messages: chatMessages, max_tokens: 16, temperature: 0,
                     ignore_eos: true };
    const whole = await client.chat.completions.create(params);
    const chunks = await collectChatStream({ ...params, stream_options: { include_usage: true } });
    assert.ok(chunks.length >= 3);
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.ok(chunks.every((c) => c.id === chunks[0].id && c.object === 'chat.completion.chunk'));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    assert.equal(text, whole.choices[0].message.content);
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    assert.equal(finish.length, 1);
    assert.equal(finish[0].choices[0].finish_reason, 'length');
    const last = chunks[chunks.length - 1];
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage.completion_tokens, 16);
    assert.equal(last.usage.prompt_tokens, whole.usage.prompt_tokens);
    assert.ok(last.timings && last.timings.predicted_n === 16, JSON.stringify(last.timings));
  });

  test('without include_usage no usage chunk is sent', async () => {
    const chunks = await collectChatStream({ model: modelId, messages: chatMessages,
                                             max_tokens: 4, temperature: 0 });
    assert.ok(chunks.every((c) => c.choices.length === 1 && !c.usage));
  });

  test('stop string ends the reply before it', async () => {
    const base = { model: modelId, messages: chatMessages, max_tokens: 32, temperature: 0,
                   ignore_eos: true };
    const full = (await client.chat.completions.create(base)).choices[0].message.content;
    assert.ok(full.length >= 12, `reply too short to pick a stop string: ${JSON.stringify(full)}`);
    const stop = full.slice(6, 9);
    const expected = full.slice(0, full.indexOf(stop));
    const r = await client.chat.completions.create({ ...base, stop: [stop] });
    assert.equal(r.choices[0].finish_reason, 'stop');
    assert.equal(r.choices[0].message.content, expected);
    const streamed = await collectChatStream({ ...base, stop });
    assert.equal(streamed.map((c) => c.choices[0]?.delta?.content ?? '').join(''), expected);
  });

  test('a seed reproduces a sampled reply', async () => {
    const p = { model: modelId, messages: chatMessages, max_tokens: 24, temperature: 1.0,
                top_p: 0.95, ignore_eos: true };
    const a = await client.chat.completions.create({ ...p, seed: 42 });
    const b = await client.chat.completions.create({ ...p, seed: 42 });
    const c = await client.chat.completions.create({ ...p, seed: 4242 });
    assert.equal(a.choices[0].message.content, b.choices[0].message.content);
    assert.notEqual(a.choices[0].message.content, c.choices[0].message.content);
  });

  test('logprobs and top_logprobs', async () => {
    const r = await client.chat.completions.create({
      model: modelId, messages: chatMessages, max_tokens: 6, temperature: 0, ignore_eos: true,
      logprobs: true, top_logprobs: 3,
    });
    const lp = r.choices[0].logprobs.content;
    assert.equal(lp.length, 6);
    for (const t of lp) {
      assert.ok(t.logprob <= 0);
      assert.equal(t.top_logprobs.length, 3);
      // Greedy: the chosen token is the most likely one.
      assert.equal(t.top_logprobs[0].token, t.token);
      assert.ok(Math.abs(t.top_logprobs[0].logprob - t.logprob) < 1e-6);
      for (let i = 1; i < 3; i++) assert.ok(t.top_logprobs[i].logprob <= t.top_logprobs[i - 1].logprob);
      assert.ok(Array.isArray(t.bytes));
    }
    assert.equal(lp.map((t) => Buffer.from(t.bytes).toString('utf8')).join(''),
                 r.choices[0].message.content);
  });

  test('json_object output is a JSON object', async () => {
    const r = await client.chat.completions.create({
      model: modelId, messages: chatMessages, max_tokens: 200, temperature: 0.7, seed: 7,
      response_format: { type: 'json_object' },
    });
    const content = r.choices[0].message.content;
    assert.equal(content.trim()[0], '{', content);
    if (r.choices[0].finish_reason === 'stop') assert.equal(typeof JSON.parse(content), 'object');
  });
});

describe('completions', () => {
  test('streaming equals non-streaming; echo prepends the prompt', async () => {
    const p = { model: modelId, prompt: 'Once upon a time', max_tokens: 10, temperature: 0,
                ignore_eos: true };
    const whole = await client.completions.create(p);
    assert.equal(whole.object, 'text_completion');
    assert.equal(whole.choices[0].finish_reason, 'length');
    assert.equal(whole.usage.completion_tokens, 10);
    const stream = await client.completions.create({ ...p, stream: true,
                                                     stream_options: { include_usage: true } });
    let text = '';
    let usage = null;
    for await (const c of stream) {
      if (c.choices.length) text += c.choices[0].text;
      if (c.usage) usage = c.usage;
    }
    assert.equal(text, whole.choices[0].text);
    assert.equal(usage.completion_tokens, 10);
    const echoed = await client.completions.create({ ...p, echo: true });
    assert.equal(echoed.choices[0].text, 'Once upon a time' + whole.choices[0].text);
  });

  test('max_tokens gives finish_reason length', async () => {
    const r = await client.completions.create({ model: modelId, prompt: 'Hello', max_tokens: 3,
                                                temperature: 0, ignore_eos: true });
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.equal(r.usage.completion_tokens, 3);
  });
});

describe('errors', () => {
  test('bad parameters are 400 with an OpenAI error body', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: modelId, messages: chatMessages, temperature: -1 }),
      (e) => e.status === 400 && e.error?.type === 'invalid_request_error');
    await assert.rejects(
      client.chat.completions.create({ model: modelId, messages: chatMessages, max_tokens: -5 }),
      (e) => e.status === 400 && /max_tokens/.test(e.error?.param ?? e.message));
  });

  test('unknown model is 404', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'no-such-model', messages: chatMessages }),
      (e) => e.status === 404);
  });
});
