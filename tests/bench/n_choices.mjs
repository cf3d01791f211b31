// Benchmark (not a test): `n: 8` on one prompt vs 8 separate concurrent requests for the same
// prompt, through brisk serve. Each round uses a fresh prompt (so no round warms the next one's
// prefix cache), the two forms alternate, and the medians of TTFT (first token of any choice) and
// total time are printed with the prompt tokens the engine computed.
//
//   node tests/bench/n_choices.mjs --brisk build/src/brisk --model build/tests/synth-0.5b.gguf
//     [--prompt-tokens 1000] [--max-tokens 32] [--rounds 5]
import { parseArgs as nodeParseArgs } from 'node:util';

import { startServer } from '../server/lib/brisk_server.mjs';

const { values: o } = nodeParseArgs({
  options: {
    brisk: { type: 'string' }, model: { type: 'string' },
    'prompt-tokens': { type: 'string', default: '1000' },
    'max-tokens': { type: 'string', default: '32' }, rounds: { type: 'string', default: '5' },
  },
});
const P = Number(o['prompt-tokens']), M = Number(o['max-tokens']), R = Number(o.rounds);
const server = await startServer({ brisk: o.brisk, model: o.model });

async function computed() {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('brisk:engine_prompt_tokens_computed_total'));
  return Number(line.split(' ').pop());
}

// Streams one completion request; resolves with the time of its first text and of its end.
async function stream(body, t0) {
  const r = await fetch(`${server.url}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  let first = null;
  const reader = r.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (first === null && new TextDecoder().decode(value).includes('"text":"')) first = performance.now() - t0;
  }
  return { first, end: performance.now() - t0 };
}

const prompt = (salt) => Array.from({ length: P }, (_, i) => 1000 + ((i * 7919 + salt * 104729) % 100000));
const base = { max_tokens: M, temperature: 1, ignore_eos: true };
const rows = { n8: [], sep8: [] };
let salt = 1;
async function runN() {
  const c0 = await computed(), t0 = performance.now();
  const s = await stream({ ...base, prompt: prompt(salt++), n: 8, seed: 1 }, t0);
  rows.n8.push({ ttft: s.first, total: s.end, computed: (await computed()) - c0 });
}
async function runSep() {
  const c0 = await computed(), t0 = performance.now();
  const p = prompt(salt++);
  const all = await Promise.all(Array.from({ length: 8 }, (_, i) => stream({ ...base, prompt: p, seed: 1 + i }, t0)));
  rows.sep8.push({ ttft: Math.min(...all.map((x) => x.first)), total: Math.max(...all.map((x) => x.end)),
                   computed: (await computed()) - c0 });
}
await runN();  // warm-up (page faults, thread start)
rows.n8.length = 0;
for (let r = 0; r < R; r++) {
  if (r % 2) { await runSep(); await runN(); } else { await runN(); await runSep(); }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
for (const [name, rs] of Object.entries(rows))
  console.log(`${name}: ttft p50 ${median(rs.map((x) => x.ttft)).toFixed(0)} ms, total p50 ${median(rs.map((x) => x.total)).toFixed(0)} ms, prompt tokens computed ${median(rs.map((x) => x.computed))} (rounds: ${rs.map((x) => `${x.ttft.toFixed(0)}/${x.total.toFixed(0)}`).join(' ')})`);
await server.stop();
