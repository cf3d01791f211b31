// brisk serve's operational behaviour (DESIGN §6 "Limits", "Operations", "Metrics"): metrics that
// agree with what clients received, 429 + Retry-After when the queue is full, SIGHUP reloading the
// batch settings, and SIGTERM draining (running streams finish, new work gets 503, exit 0).
//
//   node tests/server/lifecycle_test.mjs --brisk build/src/brisk --model M.gguf
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';

import { parseArgs, readSse, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();

function chatBody(extra = {}) {
  return JSON.stringify({ messages: [{ role: 'user', content: 'Count to ten.' }], max_tokens: 8,
                          temperature: 0, ignore_eos: true, ...extra });
}

async function chat(url, extra = {}) {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(extra) });
}

// name{labels} value lines -> [{name, labels, value}]
async function scrape(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = [];
  for (const line of text.split('\n')) {
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)]
      .map((x) => [x[1], x[2]]));
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}
const sum = (samples, name) =>
  samples.filter((s) => s.name === name).reduce((a, s) => a + s.value, 0);

describe('metrics after a load run', () => {
  test('generation tokens and histogram counts match what clients saw', async () => {
    const server = await startServer({ brisk: opts.brisk, model: opts.model });
    try {
      let received = 0;
      let finished = 0;
      const client = async (i) => {
        for (let k = 0; k < 3; k++) {
          const stream = k % 2 === 0;
          const r = await chat(server.url, { max_tokens: 5 + i + k, stream,
                                             stream_options: stream ? { include_usage: true } : undefined });
          assert.equal(r.status, 200);
          if (stream) {
            const events = await readSse(r);
            assert.equal(events[events.length - 1], '[DONE]');
            received += JSON.parse(events[events.length - 2]).usage.completion_tokens;
          } else {
            received += (await r.json()).usage.completion_tokens;
          }
          finished++;
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, i) => client(i)));
      const m = await scrape(server.url);
      assert.equal(sum(m, 'vllm:generation_tokens_total'), received);
      assert.equal(sum(m, 'vllm:request_success_total'), finished);
      for (const h of ['vllm:e2e_request_latency_seconds', 'vllm:time_to_first_token_seconds',
                       'vllm:request_queue_time_seconds']) {
        assert.equal(sum(m, `${h}_count`), finished, h);
        const inf = m.find((s) => s.name === `${h}_bucket` && s.labels.le === '+Inf');
        assert.equal(inf.value, finished, h);
      }
      assert.equal(sum(m, 'vllm:num_requests_running'), 0);
      assert.equal(sum(m, 'vllm:num_requests_waiting'), 0);
    } finally {
      await server.stop();
    }
  });
});

describe('overload', () => {
  test('a full queue answers 429 with Retry-After, and the server recovers', async () => {
    const server = await startServer({ brisk: opts.brisk, model: opts.model,
                                       args: ['--max-num-seqs', '1', '--max-waiting', '0'] });
    try {
      // A stream that runs for seconds even on the tiny model holds the only slot; it is known
      // to be running once its first event arrived (no timing guesses).
      const abort = new AbortController();
      const long = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, signal: abort.signal,
        body: chatBody({ max_tokens: 8000, stream: true }) });
      assert.equal(long.status, 200);
      const reader = long.body.getReader();
      await reader.read();
      const refused = await chat(server.url);
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      const body = await refused.json();
      assert.equal(body.error.code, 'overloaded');
      abort.abort();  // the disconnect cancels the long request and frees the slot
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await chat(server.url)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(status, 200);
    } finally {
      await server.stop();
    }
  });
});

describe('signals', () => {
  test('SIGHUP reloads the batch settings from --config', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-config-'));
    const config = path.join(dir, 'batch.json');
    fs.writeFileSync(config, JSON.stringify({ max_num_seqs: 8, max_num_batched_tokens: 256 }));
    const server = await startServer({ brisk: opts.brisk, model: opts.model,
                                       args: ['--config', config, '--max-num-seqs', '8'] });
    try {
      const before = await (await fetch(`${server.url}/admin/config`)).json();
      assert.equal(before.max_num_seqs, 8);
      assert.equal(before.max_num_batched_tokens, 256);
      fs.writeFileSync(config, JSON.stringify({ max_num_seqs: 3, batch_policy: 'static' }));
      server.proc.kill('SIGHUP');
      let now;
      for (let i = 0; i < 100; i++) {
        // Applied at the next engine step: a request makes one happen.
        assert.equal((await chat(server.url, { max_tokens: 1 })).status, 200);
        now = await (await fetch(`${server.url}/admin/config`)).json();
        if (now.max_num_seqs === 3) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(now.max_num_seqs, 3);
      // A broken file leaves the settings as they were.
      fs.writeFileSync(config, '{"max_num_seqs": "many"}');
      server.proc.kill('SIGHUP');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await chat(server.url, { max_tokens: 1 })).status, 200);
      assert.equal((await (await fetch(`${server.url}/admin/config`)).json()).max_num_seqs, 3);
      assert.match(server.stderr(), /reload failed/);
    } finally {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('SIGTERM drains: the running stream finishes, new work gets 503, exit 0', async () => {
    const server = await startServer({ brisk: opts.brisk, model: opts.model });
    // Long enough to still run when the signal lands (known running once its first event came).
    const response = await chat(server.url, { max_tokens: 1500, stream: true });
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    const rest = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += new TextDecoder().decode(value);
      }
    })();
    server.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const late = await chat(server.url).catch((e) => ({ status: `closed (${e.message})` }));
    assert.equal(late.status, 503);
    const health = await fetch(`${server.url}/health`).catch(() => null);
    if (health) assert.equal(health.status, 503);
    const got = (await rest).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    assert.equal(got[got.length - 1], '[DONE]');
    const finish = JSON.parse(got[got.length - 2]);
    assert.equal(finish.choices[0].finish_reason, 'length');
    const { code } = await server.exited;
    assert.equal(code, 0, server.stderr());
  });
});
