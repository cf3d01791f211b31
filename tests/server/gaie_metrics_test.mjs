// The Gateway API Inference Extension's model-server protocol on a live `brisk serve` (the
// synthetic Qwen2.5-0.5B: real shapes, steps slow enough to look at) under load: /metrics carries
// every series the endpoint picker reads, by vLLM's exact names and label names, and the values
// agree with the engine:
//   - vllm:cache_config_info: num_gpu_blocks = the KV blocks `brisk serve` printed and /props
//     reports, block_size = /props's;
//   - with STREAMS streams open (a stream opens at its first token: its prompt is computed and it
//     is running) and nothing else, vllm:num_requests_running = STREAMS and waiting = 0; EXTRA
//     more requests while every sequence slot is taken wait: waiting = EXTRA, running unchanged;
//   - vllm:kv_cache_usage_perc is referenced blocks / all blocks (the engine's definition): under
//     load a whole number of blocks, about the KV rows the engine counts as written (its prompt
//     and generation token counters) over the block size; idle again it is exactly 0 although
//     the prefix cache still holds those blocks (a repeated prompt then hits the cache);
//   - GET /ready is 200 throughout (loaded, not draining, the engine steps).
// No timing is asserted: the streams ask for far more tokens than the test needs and are
// cancelled by disconnecting once it has looked.
//
//   node tests/server/gaie_metrics_test.mjs --brisk build/src/brisk --model build/tests/synth-0.5b.gguf
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { parseArgs, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();
const STREAMS = 4;  // = --max-num-seqs: every slot taken
const EXTRA = 2;    // then these must wait
const MAX_TOKENS = 2000;
let server;

before(async () => {
  server = await startServer({ brisk: opts.brisk, model: opts.model,
                               args: ['--max-num-seqs', String(STREAMS), ...opts.serveArgs] });
});

after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0, `server exit status after SIGTERM:\n${server.stderr()}`);
});

// Prometheus text -> Map(name -> { type, samples: [{ labels, value }] }); throws on a line it
// cannot read, so a malformed exposition fails the test.
function parseExposition(text) {
  const families = new Map();
  const family = (name) => {
    if (!families.has(name)) families.set(name, { type: undefined, samples: [] });
    return families.get(name);
  };
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP')) continue;
    const t = line.match(/^# TYPE (\S+) (\S+)$/);
    if (t) { family(t[1]).type = t[2]; continue; }
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$/);
    assert.ok(m, `unreadable sample line: ${line}`);
    const labels = {};
    for (const [, k, v] of m[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    family(m[1]).samples.push({ labels, value: Number(m[3]) });
  }
  return families;
}

// The one sample of a GAIE series, checked for its exact name, type and label names.
function gauge(families, name, labelNames) {
  const f = families.get(name);
  assert.ok(f, `no ${name} in /metrics`);
  assert.equal(f.type, 'gauge', `${name} type`);
  assert.equal(f.samples.length, 1, `${name}: one sample`);
  assert.deepEqual(Object.keys(f.samples[0].labels).sort(), [...labelNames].sort(), `${name} labels`);
  return f.samples[0];
}

const counter = (families, name) => {
  const f = families.get(name);
  assert.ok(f, `no ${name} in /metrics`);
  return f.samples.reduce((sum, x) => sum + x.value, 0);
};

const PLAIN = ['model_name'];
const CACHE_INFO = ['model_name', 'block_size', 'cache_dtype', 'enable_prefix_caching', 'engine',
  'num_gpu_blocks'];

// The three load gauges, with /ready checked at the same moment.
async function look() {
  const r = await fetch(`${server.url}/metrics`);
  assert.equal(r.status, 200);
  const fams = parseExposition(await r.text());
  const ready = await fetch(`${server.url}/ready`);
  assert.equal(ready.status, 200, `/ready: ${await ready.text()}`);
  const v = {
    running: gauge(fams, 'vllm:num_requests_running', PLAIN).value,
    waiting: gauge(fams, 'vllm:num_requests_waiting', PLAIN).value,
    kv: gauge(fams, 'vllm:kv_cache_usage_perc', PLAIN).value,
    info: gauge(fams, 'vllm:cache_config_info', CACHE_INFO),
    hits: counter(fams, 'vllm:prefix_cache_hits_total'),
    // KV rows the engine wrote: prompt tokens computed (cache hits excluded) and tokens sampled.
    written: counter(fams, 'brisk:engine_prompt_tokens_computed_total') +
      counter(fams, 'brisk:engine_generation_tokens_total'),
    generated: counter(fams, 'brisk:engine_generation_tokens_total'),
  };
  assert.ok(Number.isInteger(v.running) && Number.isInteger(v.waiting), JSON.stringify(v));
  assert.ok(v.kv >= 0 && v.kv <= 1, `kv_cache_usage_perc ${v.kv}`);
  return v;
}

// The engine publishes its counts once per step (and when a request ends): a scrape may see the
// step before. Looks until `want` holds, checking `always` on every look; fails after `tries`.
async function lookUntil(what, want, always = () => {}, tries = 4000) {
  let v;
  for (let i = 0; i < tries; i++) {
    v = await look();
    always(v);
    if (want(v)) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`${what}: never seen; last ${JSON.stringify({ ...v, info: undefined })}`);
}

const prompt = (i) => `Request ${i} of the GAIE test. Count slowly from one to a thousand, in words.`;

// A streaming chat request; resolves when the stream opens (its first token was generated).
function openStream(model, i, signal) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST', signal, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, max_tokens: MAX_TOKENS, temperature: 0,
                           ignore_eos: true, messages: [{ role: 'user', content: prompt(i) }] }),
  });
}

test('GAIE series by exact name and labels, agreeing with the engine under load', async () => {
  const props = await (await fetch(`${server.url}/props`)).json();
  const blocks = props.kv.blocks;
  const printed = server.stderr().match(/(\d+) KV blocks/);
  assert.ok(printed, `brisk serve printed no KV block count:\n${server.stderr()}`);

  const idle = await look();
  assert.equal(idle.info.value, 1);
  assert.equal(Number(idle.info.labels.num_gpu_blocks), Number(printed[1]), 'num_gpu_blocks vs serve');
  assert.equal(Number(idle.info.labels.num_gpu_blocks), blocks, 'num_gpu_blocks vs /props');
  assert.equal(Number(idle.info.labels.block_size), props.kv.block_size);
  assert.equal(idle.info.labels.model_name, props.model);
  assert.deepEqual([idle.running, idle.waiting, idle.kv], [0, 0, 0]);
  assert.ok(MAX_TOKENS + 100 <= props.max_model_len,
    `max_model_len ${props.max_model_len}: the streams could end before the test looks`);

  const aborts = [];
  const cancel = () => { for (const a of aborts) a.abort(); };
  try {
    // Every slot taken: all STREAMS running, none waiting.
    const streams = Array.from({ length: STREAMS }, (_, i) => {
      aborts.push(new AbortController());
      return openStream(props.model, i, aborts[i].signal);
    });
    for (const r of await Promise.all(streams)) assert.equal(r.status, 200);
    const bounded = (v) => {
      assert.ok(v.running <= STREAMS, `running ${v.running} > ${STREAMS} slots`);
      assert.ok(v.running + v.waiting <= STREAMS + EXTRA, JSON.stringify(v));
    };
    await lookUntil(`${STREAMS} open streams running`,
      (v) => v.running === STREAMS && v.waiting === 0, bounded);
    // KV usage against what the engine wrote. Since the idle look only these streams ran, and
    // every block they reference holds rows they wrote (a shared prefix is written once, by the
    // first): referenced blocks ~ written / block_size, plus per sequence its partly filled last
    // block, a block taken ahead for the next token, a partly reused prefix block and one step of
    // lag between the token counters and the published usage. Looked at once a few blocks'
    // worth of tokens exist, so the bounds mean something.
    const bs = props.kv.block_size;
    const full = await lookUntil('a few blocks generated',
      (v) => v.generated - idle.generated >= STREAMS * 2 * bs, bounded);
    assert.deepEqual([full.running, full.waiting], [STREAMS, 0]);
    const used = full.kv * blocks;
    assert.ok(Math.abs(used - Math.round(used)) < 1e-6 * blocks, `kv ${full.kv} of ${blocks} blocks`);
    const written = full.written - idle.written;
    const slack = 4 * STREAMS;
    assert.ok(Math.round(used) >= Math.max(STREAMS, Math.floor(written / bs) - slack) &&
              Math.round(used) <= Math.ceil(written / bs) + slack,
      `${Math.round(used)} blocks referenced after ${written} rows written (${bs} per block)`);

    // EXTRA more: no slot, so they wait (their streams cannot open yet).
    const extra = Array.from({ length: EXTRA }, (_, k) => {
      aborts.push(new AbortController());
      return openStream(props.model, STREAMS + k, aborts[STREAMS + k].signal).catch(() => null);
    });
    const queued = await lookUntil(`${EXTRA} waiting`, (v) => v.waiting === EXTRA, bounded);
    assert.equal(queued.running, STREAMS);
    assert.ok(queued.kv > 0);

    // Disconnecting cancels them all; idle again, nothing is referenced.
    cancel();
    await Promise.allSettled(extra);
    const idleAgain = await lookUntil('idle after the disconnects',
      (v) => v.running === 0 && v.waiting === 0 && v.kv === 0);
    assert.equal(idleAgain.kv, 0);

    // ... while the prefix cache still holds the blocks: the first prompt again hits it.
    const again = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: props.model, max_tokens: 1,
                             messages: [{ role: 'user', content: prompt(0) }] }),
    });
    assert.equal(again.status, 200, await again.text());
    const end = await lookUntil('idle after the repeat', (v) => v.running === 0 && v.kv === 0);
    assert.ok(end.hits > idleAgain.hits, `prefix cache hits ${idleAgain.hits} -> ${end.hits}`);
  } finally {
    cancel();
  }
});

test('/ready and /health answer without an API key check of their own', async () => {
  const ready = await fetch(`${server.url}/ready`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: 'ready' });
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
});
