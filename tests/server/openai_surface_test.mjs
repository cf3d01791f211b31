// The OpenAI surface beyond one prompt and one choice (issue 30), with the official `openai`
// client: `n` choices and batched prompts fanned out into engine sequences that share one
// prefill (the prefix-cache counters of /metrics show it), prompt scoring in lm-eval-harness's
// loglikelihood shape (echo + logprobs + max_tokens 0) held against `brisk logits`, and the
// 400s of what stays refused. Each expectation is independent of the code under test: a choice
// equals a single request with that choice's seed, a score equals the log-softmax of the float
// reference's logits.
//
//   node tests/server/openai_surface_test.mjs --brisk build/src/brisk --model M.gguf
//     [--score-model F32.gguf]   (the golden tiny f32 model: scores checked to 1e-4 relative)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
  modelId = (await client.models.list()).data[0].id;
});

after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0, `server exit status after SIGTERM:\n${server.stderr()}`);
});

async function metric(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  assert.ok(line, `${name} in /metrics`);
  return Number(line.split(' ').pop());
}

// A prompt of about n tokens of the tiny model's vocabulary (ids below 2000: plain pieces).
function tokenPrompt(n, salt) {
  return Array.from({ length: n }, (_, i) => (i * 131 + salt * 977 + 7) % 2000);
}

const messages = [{ role: 'user', content: 'Write three words about the sea.' }];

describe('n choices', () => {
  test('n: 4 with a seed gives 4 different choices, each the single request with seed + index',
       async () => {
    const base = { model: modelId, messages, max_tokens: 8, temperature: 1, seed: 7 };
    const r = await client.chat.completions.create({ ...base, n: 4 });
    assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2, 3]);
    const texts = r.choices.map((c) => c.message.content);
    assert.equal(new Set(texts).size, 4, `distinct choices: ${JSON.stringify(texts)}`);
    for (const [i, c] of r.choices.entries()) {
      const one = await client.chat.completions.create({ ...base, seed: 7 + i });
      assert.equal(c.message.content, one.choices[0].message.content, `choice ${i}`);
      assert.equal(c.finish_reason, one.choices[0].finish_reason);
    }
    // Usage: the prompt once, every choice's completion.
    const single = await client.chat.completions.create({ ...base });
    assert.equal(r.usage.prompt_tokens, single.usage.prompt_tokens);
    const completion = r.choices.length * 8;
    assert.ok(r.usage.completion_tokens <= completion && r.usage.completion_tokens >= 4);
  });

  test('n copies of a prompt are prefilled once (prompt-token and prefix-cache counters)',
       async () => {
    const prompt = tokenPrompt(1000, 1);
    const counted0 = await metric(server.url, 'vllm:prompt_tokens_total');
    const computed0 = await metric(server.url, 'brisk:engine_prompt_tokens_computed_total');
    const hits0 = await metric(server.url, 'vllm:prefix_cache_hits_total');
    const r = await client.completions.create({
      model: modelId, prompt, n: 8, max_tokens: 4, temperature: 1, seed: 1,
    });
    assert.equal(r.choices.length, 8);
    assert.equal(r.usage.prompt_tokens, 1000);
    // vLLM's counter counts the request's prompt once; brisk's the tokens actually computed.
    const counted = (await metric(server.url, 'vllm:prompt_tokens_total')) - counted0;
    assert.equal(counted, 1000);
    const computed =
        (await metric(server.url, 'brisk:engine_prompt_tokens_computed_total')) - computed0;
    const hits = (await metric(server.url, 'vllm:prefix_cache_hits_total')) - hits0;
    // 1000 once; each of the 7 copies computes only what follows the last full 16-token block.
    assert.ok(computed >= 1000 && computed <= 1000 + 7 * 16, `prompt tokens computed: ${computed}`);
    assert.ok(hits >= 7 * 992, `prefix-cache hits: ${hits}`);
  });

  test('streamed choices carry their index and equal the whole response', async () => {
    const base = { model: modelId, messages, max_tokens: 6, temperature: 1, seed: 3, n: 3 };
    const whole = await client.chat.completions.create(base);
    const stream = await client.chat.completions.create({
      ...base, stream: true, stream_options: { include_usage: true },
    });
    const text = ['', '', ''];
    const finished = [];
    let usage = null;
    let chunks = 0;
    for await (const c of stream) {
      chunks++;
      if (c.usage) usage = c.usage;
      for (const ch of c.choices) {
        text[ch.index] += ch.delta.content ?? '';
        if (ch.finish_reason) finished.push(ch.index);
      }
    }
    assert.ok(chunks > 3);
    assert.deepEqual(finished.sort(), [0, 1, 2]);
    assert.deepEqual(text, whole.choices.map((c) => c.message.content));
    assert.deepEqual(usage, whole.usage);
  });
});

describe('batched prompts', () => {
  test('an array of strings with n: 2 gives prompts x n choices in order', async () => {
    const base = { model: modelId, max_tokens: 5, temperature: 1, seed: 11 };
    const r = await client.completions.create({ ...base, prompt: ['Once upon a', 'The sea'], n: 2 });
    assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2, 3]);
    // Choice 2 is prompt 1's first: the single request with seed + 2.
    const one = await client.completions.create({ ...base, prompt: 'The sea', seed: 13 });
    assert.equal(r.choices[2].text, one.choices[0].text);
    const a = await client.completions.create({ ...base, prompt: 'Once upon a', max_tokens: 1 });
    assert.equal(r.usage.prompt_tokens, a.usage.prompt_tokens + one.usage.prompt_tokens);
  });

  test('token-id prompts, streamed', async () => {
    const prompts = [tokenPrompt(20, 2), tokenPrompt(7, 3)];
    const stream = await client.completions.create({
      model: modelId, prompt: prompts, max_tokens: 3, temperature: 0, stream: true,
    });
    const seen = new Map();
    for await (const c of stream)
      for (const ch of c.choices) seen.set(ch.index, (seen.get(ch.index) ?? '') + ch.text);
    assert.deepEqual([...seen.keys()].sort(), [0, 1]);
    for (const [i, p] of prompts.entries()) {
      const one = await client.completions.create({
        model: modelId, prompt: p, max_tokens: 3, temperature: 0,
      });
      assert.equal(seen.get(i), one.choices[0].text, `prompt ${i}`);
    }
  });
});

// lm-eval-harness `local-completions` loglikelihood: token-id prompts, echo, logprobs 1,
// max_tokens 0, temperature 0.
function logSoftmaxAt(logits, V, row, token) {
  let m = -Infinity;
  for (let j = 0; j < V; j++) m = Math.max(m, logits[row * V + j]);
  let z = 0;
  for (let j = 0; j < V; j++) z += Math.exp(logits[row * V + j] - m);
  return logits[row * V + token] - m - Math.log(z);
}

function briskLogits(model, tokens) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-logits-'));
  const out = path.join(dir, 'logits.bin');
  execFileSync(opts.brisk, ['logits', '-m', model, '--tokens', tokens.join(','), '-o', out],
               { stdio: ['ignore', 'ignore', 'pipe'] });
  const buf = fs.readFileSync(out);
  fs.rmSync(dir, { recursive: true });
  const n = buf.readInt32LE(0), V = buf.readInt32LE(4);
  return { n, V, logits: new Float32Array(buf.buffer.slice(buf.byteOffset + 8, buf.byteOffset + 8 + n * V * 4)) };
}

describe('prompt scoring', () => {
  async function score(url, prompts) {
    const c = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const id = (await c.models.list()).data[0].id;
    return c.completions.create({
      model: id, prompt: prompts, echo: true, logprobs: 1, max_tokens: 0, temperature: 0,
    });
  }

  test('echo + logprobs + max_tokens 0: every prompt token scored, OpenAI offsets', async () => {
    const prompts = [tokenPrompt(40, 4), tokenPrompt(12, 5)];
    const r = await score(server.url, prompts);
    assert.equal(r.choices.length, 2);
    for (const [i, ch] of r.choices.entries()) {
      const lp = ch.logprobs;
      assert.equal(ch.finish_reason, 'length');
      assert.equal(lp.tokens.length, prompts[i].length);
      assert.equal(lp.token_logprobs[0], null);  // nothing precedes the first token
      assert.equal(lp.top_logprobs[0], null);
      assert.ok(lp.token_logprobs.slice(1).every((x) => x < 0));
      assert.ok(lp.top_logprobs.slice(1).every((t) => Object.keys(t).length === 1));
      assert.equal(ch.text, lp.tokens.join(''));  // the echoed prompt is the whole text
      assert.equal(lp.text_offset[0], 0);
      for (let k = 1; k < lp.tokens.length; k++)
        assert.equal(lp.text_offset[k], lp.text_offset[k - 1] + [...lp.tokens[k - 1]].length);
    }
    assert.equal(r.usage.completion_tokens, 0);
    assert.equal(r.usage.prompt_tokens, 52);
  });

  test('generated tokens continue the offsets after an echoed, scored prompt (streamed)',
       async () => {
    const stream = await client.completions.create({
      model: modelId, prompt: 'Once upon a time', echo: true, logprobs: 2, max_tokens: 3,
      temperature: 0, stream: true,
    });
    const tokens = [], offsets = [], logprobs = [];
    let text = '';
    for await (const c of stream) {
      const ch = c.choices[0];
      if (!ch) continue;
      text += ch.text;
      if (ch.logprobs) {
        tokens.push(...ch.logprobs.tokens);
        offsets.push(...ch.logprobs.text_offset);
        logprobs.push(...ch.logprobs.token_logprobs);
      }
    }
    assert.ok(text.startsWith('Once upon a time'));
    assert.equal(logprobs[0], null);
    assert.equal(tokens.join(''), text);
    for (let k = 1; k < tokens.length; k++)
      assert.equal(offsets[k], offsets[k - 1] + [...tokens[k - 1]].length);
  });

  test('scores equal the log-softmax of `brisk logits` to 1e-4 (golden tiny f32 model)',
       async (t) => {
    if (!opts.scoreModel || !fs.existsSync(opts.scoreModel)) {
      t.skip('no --score-model (the golden tiny f32 model lives in ../shared/golden)');
      return;
    }
    const scorer = await startServer({ brisk: opts.brisk, model: opts.scoreModel });
    try {
      const prompts = [tokenPrompt(60, 6), tokenPrompt(25, 8)];
      const r = await score(scorer.url, prompts);
      let worst = 0;
      for (const [i, p] of prompts.entries()) {
        const ref = briskLogits(opts.scoreModel, p);
        const got = r.choices[i].logprobs.token_logprobs;
        for (let k = 1; k < p.length; k++) {
          const want = logSoftmaxAt(ref.logits, ref.V, k - 1, p[k]);
          worst = Math.max(worst, Math.abs(got[k] - want) / Math.abs(want));
        }
      }
      assert.ok(worst <= 1e-4, `max relative difference ${worst}`);
    } finally {
      await scorer.stop();
    }
  });
});

describe('refused', () => {
  const bad = async (body, param, text, route = 'completions') => {
    const r = await fetch(`${server.url}/v1/${route}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    assert.equal(r.status, 400, JSON.stringify(body));
    const e = (await r.json()).error;
    assert.equal(e.param, param);
    assert.ok(e.message.includes(text), e.message);
  };
  test('out-of-range n, best_of != n, mixed or empty batches, max_tokens 0 on chat', async () => {
    await bad({ prompt: 'x', n: 0 }, 'n', 'in [1, 128]');
    await bad({ prompt: 'x', n: 129 }, 'n', 'in [1, 128]');
    await bad({ prompt: ['a', 'b'], n: 65 }, 'n', 'at most 128');
    await bad({ prompt: 'x', n: 2, best_of: 3 }, 'best_of', 'must equal n');
    await bad({ prompt: ['a', [1, 2]] }, 'prompt[1]', 'not a mix');
    await bad({ prompt: ['a', ''] }, 'prompt[1]', 'must not be empty');
    await bad({ messages, max_tokens: 0 }, 'max_tokens', 'in [1,', 'chat/completions');
    // The server still answers.
    const ok = await client.completions.create({ model: modelId, prompt: 'x', max_tokens: 1 });
    assert.equal(ok.choices.length, 1);
  });
});
