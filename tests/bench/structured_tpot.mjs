// What structured outputs cost a running server, end to end (a benchmark, not a test): TPOT of
// requests constrained by the schemas of tests/data/structured/schemas (a different schema per
// request) against requests of the same lengths without a constraint, at one concurrency level,
// in alternating rounds so both see the same machine.
// TPOT is each request's own, from the server's llama-server `timings` (decode time / (n - 1)).
//
//   node tests/bench/structured_tpot.mjs --brisk build/src/brisk --model synth.gguf \
//        --concurrency 16 --rounds 3 --requests 48 --max-tokens 96
import { readdirSync, readFileSync } from 'node:fs';

import { startServer } from '../server/lib/brisk_server.mjs';

function parseOptions(argv) {
  const o = { concurrency: 1, rounds: 3, requests: 16, maxTokens: 96 };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (k === '--brisk') o.brisk = v;
    else if (k === '--model') o.model = v;
    else if (k === '--concurrency') o.concurrency = Number(v);
    else if (k === '--rounds') o.rounds = Number(v);
    else if (k === '--requests') o.requests = Number(v);
    else if (k === '--max-tokens') o.maxTokens = Number(v);
    else throw new Error(`unknown option ${k}`);
  }
  if (!o.brisk || !o.model) throw new Error('need --brisk and --model');
  return o;
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

const schemaDir = new URL('../data/structured/schemas/', import.meta.url);
const schemas = readdirSync(schemaDir).filter((f) => f.endsWith('.json')).sort()
  .map((f) => JSON.parse(readFileSync(new URL(f, schemaDir), 'utf8')).schema);

async function complete(url, body) {
  const r = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = await r.json();
  if (r.status !== 200) throw new Error(JSON.stringify(j));
  return j;
}

// One round: `requests` requests, `concurrency` in flight; per-request TPOT (ms), lengths and
// tokens. Plain request i is as long as constrained request i was (`lengths`, ignore_eos), so both
// kinds see the same mix of prefills and decodes per step.
async function round(url, o, constrained, lengths) {
  const tpot = [];
  const out = [];
  let tokens = 0;
  let next = 0;
  const worker = async () => {
    while (next < o.requests) {
      const i = next++;
      const body = {
        messages: [{ role: 'user', content: `Request ${i}: answer in JSON.` }],
        max_tokens: o.maxTokens, temperature: 1.0, seed: i + 1,
      };
      if (constrained) {
        body.response_format = { type: 'json_schema', json_schema: {
          name: 'out', schema: schemas[i % schemas.length] } };
      } else {
        body.max_tokens = lengths?.[i] ?? o.maxTokens;
        body.ignore_eos = true;
      }
      const j = await complete(url, body);
      // predicted_ms runs from the first token to the last: n - 1 intervals.
      const n = j.timings.predicted_n;
      if (n > 1) tpot.push(j.timings.predicted_ms / (n - 1));
      tokens += j.usage.completion_tokens;
      out[i] = j.usage.completion_tokens;
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  return { tpot, tokens, lengths: out };
}

const o = parseOptions(process.argv.slice(2));
const server = await startServer({ brisk: o.brisk, model: o.model,
                                   args: ['--max-num-seqs', String(o.concurrency)] });
try {
  // Warm-up, and the constrained answers' lengths (seeded: the same in every round).
  const { lengths } = await round(server.url, o, true);
  const all = { plain: [], constrained: [] };
  for (let r = 0; r < o.rounds; ++r) {
    for (const constrained of r % 2 ? [true, false] : [false, true]) {
      const res = await round(server.url, o, constrained, lengths);
      const key = constrained ? 'constrained' : 'plain';
      all[key].push(...res.tpot);
      console.log(`round ${r + 1} ${key.padEnd(11)} TPOT median ${median(res.tpot).toFixed(2)} ms` +
                  ` over ${res.tpot.length} requests, ${res.tokens} tokens`);
    }
  }
  const p = median(all.plain);
  const c = median(all.constrained);
  console.log(`concurrency ${o.concurrency}: TPOT median plain ${p.toFixed(2)} ms, constrained ` +
              `${c.toFixed(2)} ms, added ${(c - p).toFixed(2)} ms (${((c / p - 1) * 100).toFixed(1)}%)`);
} finally {
  await server.stop();
}
