// `brisk bench` and `brisk tune` as a user runs them (issue 8): in-process and over HTTP against
// a real `brisk serve` (the same requests must produce the same token counts, and the server's
// own counters must agree), an unreachable and a failing server (errors per point, exit code 1,
// a readable message, no hang), and `brisk tune` writing a config file that `brisk serve
// --config` then runs with.
//
//   node tests/server/bench_cli_test.mjs --brisk build/src/brisk --model M.gguf
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';

import { parseArgs, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();
// Every directory this test makes, removed when it exits (passed or not).
const made = [];
function mkTemp(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}
process.on('exit', () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});
// Reports' "latest" copies go to a private BRISK_HOME, not the user's.
const home = mkTemp('brisk-bench-home-');

function run(args, timeoutMs = 240000, env = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(opts.brisk, args, { env: { ...process.env, BRISK_HOME: home, ...env },
                                        stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`brisk ${args.join(' ')} hung:\n${stderr}`));
    }, timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const tmp = (name) => mkTemp(`brisk-${name}-`);
// Whether an nvidia-smi is on this machine's PATH (then GPU columns are expected everywhere).
const realNvidiaSmi = (process.env.PATH ?? '').split(':')
  .some((d) => { try { fs.accessSync(path.join(d || '.', 'nvidia-smi'), fs.constants.X_OK); return true; } catch { return false; } });
const readReport = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
const common = ['--workload', 'mix', '--concurrency', '1,2', '--num-prompts', '3',
                '--output-len', '5', '--warmup', '1', '--no-progress'];

function checkPoints(rep, label) {
  assert.equal(rep.points.length, 2, label);
  rep.points.forEach((p, i) => {
    assert.equal(p.concurrency, [1, 2][i], label);
    assert.equal(p.requests, 3, label);
    assert.equal(p.successes, 3, `${label}: ${JSON.stringify(p.failure_messages)}`);
    assert.equal(p.failures, 0, label);
    assert.equal(p.output_tokens, 15, label);  // 3 requests x 5 fixed tokens
    assert.ok(p.prompt_tokens > 0, label);
    assert.ok(p.ttft_ms.count === 3 && p.ttft_ms.p50 > 0, label);
    assert.ok(p.output_tok_s > 0 && p.total_tok_s > p.output_tok_s, label);
  });
}

describe('brisk bench', () => {
  let inProcess;

  test('in-process: table, every report format, latest copy', async () => {
    const out = tmp('bench-in');
    const r = await run(['bench', '-m', opts.model, ...common, '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /c=1/);
    assert.match(r.stdout, /c=2/);
    assert.match(r.stdout, new RegExp(`report: ${out}/report.html`));
    for (const f of ['report.json', 'report.csv', 'report.md', 'report.html'])
      assert.ok(fs.statSync(path.join(out, f)).size > 100, f);
    inProcess = readReport(out);
    assert.equal(inProcess.mode, 'in-process');
    assert.equal(inProcess.workload, 'mix');
    checkPoints(inProcess, 'in-process');
    // The engine's counters: it generated exactly what the clients received.
    inProcess.points.forEach((p) => {
      assert.equal(p.server.has, true);
      assert.equal(p.server.generation_tokens, p.output_tokens);
      assert.ok(p.server.mean_batch_seqs >= 1 && p.server.mean_batch_seqs <= p.concurrency);
      assert.ok(p.peak_rss_mib > 0);
    });
    const csv = fs.readFileSync(path.join(out, 'report.csv'), 'utf8').trim().split('\n');
    assert.equal(csv.length, 3);
    assert.deepEqual(fs.readFileSync(path.join(home, 'bench', 'latest', 'report.json')),
                     fs.readFileSync(path.join(out, 'report.json')));
  });

  test('over HTTP against brisk serve: same requests, same token counts, server counters agree',
       async () => {
    const server = await startServer({ brisk: opts.brisk, model: opts.model });
    try {
      const out = tmp('bench-http');
      const r = await run(['bench', '--url', server.url, ...common, '--out', out,
                           '--server-pid', String(server.proc.pid), '--api-key', 'sekrit-123']);
      assert.equal(r.code, 0, r.stderr);
      const rep = readReport(out);
      assert.equal(rep.mode, 'http');
      // The report (served at /bench without a key) never holds the key.
      assert.match(rep.command, /--api-key REDACTED/);
      for (const f of ['report.json', 'report.html', 'report.md', 'report.csv'])
        assert.ok(!fs.readFileSync(path.join(out, f), 'utf8').includes('sekrit'), f);
      checkPoints(rep, 'http');
      rep.points.forEach((p, i) => {
        // The same chat turns rendered by the same template: the same prompt tokens.
        assert.equal(p.prompt_tokens, inProcess.points[i].prompt_tokens);
        assert.equal(p.server.has, true);
        assert.equal(p.server.generation_tokens, p.output_tokens);
        assert.ok(p.peak_rss_mib > 0);
        // brisk serve exports vLLM's gauges: sampled beside every point.
        assert.equal(p.gauges?.has, true, JSON.stringify(p));
        assert.ok(p.gauges.running_max >= 0 && p.gauges.running_max <= p.concurrency);
        assert.ok(p.gauges.kv_usage_max >= 0 && p.gauges.kv_usage_max <= 1);
        if (!realNvidiaSmi) assert.equal(p.gpu, undefined, 'a GPU point without nvidia-smi');
      });
      assert.match(r.stdout, /KV use max %/);
      if (!realNvidiaSmi) assert.doesNotMatch(r.stdout, /GPU/, 'no nvidia-smi: no GPU column');
    } finally {
      await server.stop();
    }
  });

  test('--url with nvidia-smi on the PATH: GPU columns and charts per point (a stand-in script)',
       async () => {
    // Prints nvidia-smi's CSV for exactly the query brisk sends; anything else fails.
    const bin = tmp('fake-gpu');
    const query = '--query-gpu=utilization.gpu,memory.used,power.draw --format=csv,noheader,nounits';
    fs.writeFileSync(path.join(bin, 'nvidia-smi'),
      `#!/bin/sh\n[ "$*" = "${query}" ] || exit 9\nprintf '60, 1000, 100.5\\n40, 3000, [N/A]\\n'\n`,
      { mode: 0o755 });
    const server = await startServer({ brisk: opts.brisk, model: opts.model });
    try {
      const out = tmp('bench-gpu');
      const r = await run(['bench', '--url', server.url, ...common, '--out', out], 240000,
                          { PATH: `${bin}:${process.env.PATH}` });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /GPU util %/);
      assert.match(r.stdout, /GPU mem MiB/);
      const rep = readReport(out);
      rep.points.forEach((p) => {
        assert.equal(p.gpu?.has, true, JSON.stringify(p));
        assert.equal(p.gpu.gpus, 2);
        assert.equal(p.gpu.util_mean_pct, 50);        // mean over the GPUs
        assert.equal(p.gpu.mem_used_max_mib, 4000);   // summed
        assert.equal(p.gpu.power_mean_w, 100.5);      // [N/A] left out, not 0
      });
      const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
      for (const m of ['gpu_util', 'gpu_memory', 'gpu_power', 'server_requests', 'kv_usage'])
        assert.match(html, new RegExp(`data-metric="${m}"`), m);
      // In-process the engine runs on the CPUs: the same stand-in on the PATH adds nothing.
      const inOut = tmp('bench-gpu-in');
      const inRun = await run(['bench', '-m', opts.model, ...common, '--out', inOut], 240000,
                              { PATH: `${bin}:${process.env.PATH}` });
      assert.equal(inRun.code, 0, inRun.stderr);
      assert.doesNotMatch(inRun.stdout, /GPU/);
      readReport(inOut).points.forEach((p) => assert.equal(p.gpu, undefined));
    } finally {
      await server.stop();
    }
  });

  test('an unreachable server: failures per point, exit 1, a readable message, no hang', async () => {
    // A port that was just free: nothing listens there.
    const port = await new Promise((resolve) => {
      const s = http.createServer();
      s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
    });
    const out = tmp('bench-down');
    const t0 = Date.now();
    const r = await run(['bench', '--url', `http://127.0.0.1:${port}`, ...common, '--out', out],
                        60000);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(Date.now() - t0 < 60000);
    assert.match(r.stderr, /6 of 6 requests failed/);
    assert.match(r.stderr, /refused|connect/i);
    const rep = readReport(out);
    rep.points.forEach((p) => {
      assert.equal(p.failures, 3);
      assert.equal(p.successes, 0);
      assert.ok(p.failure_messages.length >= 1);
    });
  });

  test('a failing server: its error message per point, exit 1', async () => {
    const srv = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url.startsWith('/v1/models')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ data: [{ id: 'broken' }] }));
          return;
        }
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the GPU caught fire', type: 'server_error' } }));
      });
    });
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
    try {
      const out = tmp('bench-500');
      const r = await run(['bench', '--url', `http://127.0.0.1:${srv.address().port}`, ...common,
                           '--out', out], 60000);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /HTTP 500: the GPU caught fire/);
      assert.match(r.stdout, /the GPU caught fire/);  // the table lists it under its points
      readReport(out).points.forEach((p) => assert.equal(p.failures, 3));
    } finally {
      srv.close();
    }
  });

  test('a server still loading its model: the bench waits for /health before measuring',
       async () => {
    let healthCalls = 0;
    const srv = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const loading = healthCalls < 3;
        if (req.url.startsWith('/health')) {
          healthCalls += 1;
          res.writeHead(loading ? 503 : 200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ status: loading ? 'loading' : 'ok' }));
          return;
        }
        if (req.url.startsWith('/v1/models')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ data: [{ id: 'slow' }] }));
          return;
        }
        // Generation: "loading" while /health says so, then an error the points must all show.
        res.writeHead(loading ? 503 : 500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: loading ? 'the model is still loading'
                                                            : 'the GPU caught fire',
                                          type: 'server_error' } }));
      });
    });
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
    try {
      const out = tmp('bench-loading');
      const r = await run(['bench', '--url', `http://127.0.0.1:${srv.address().port}`, ...common,
                           '--out', out], 60000);
      assert.match(r.stderr, /waiting for the server: GET \/health answers 503/);
      assert.equal(healthCalls, 4);  // 503 three times, then 200
      assert.doesNotMatch(r.stdout + r.stderr, /still loading/);
      readReport(out).points.forEach((p) => assert.equal(p.failures, 3));
    } finally {
      srv.close();
    }
  });

  test('bad options are refused before anything runs', async () => {
    for (const args of [['--concurrency', '0'], ['--workload', 'poetry'], ['--slo', 'ttft:abc'],
                        ['--request-rate', '-1'], ['--output-len', 'lots'],
                        ['--concurrency', '1', '--request-rate', '2']]) {
      const r = await run(['bench', '-m', opts.model, '--no-progress', ...args], 60000);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, /error/i, args.join(' '));
    }
  });
});

describe('brisk tune', () => {
  test('writes a config that brisk serve --config runs with', async () => {
    const out = tmp('tune');
    const cfg = path.join(out, 'tuned.json');
    const r = await run(['tune', '-m', opts.model, '--slo', 'ttft_p99:60000,tpot_p99:60000',
                         '--seqs', '1,2', '--batched-tokens', '64,128', '--prefill-chunks', '32,0',
                         '--num-prompts', '2', '--output-len', '4', '--warmup', '1', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /BEST/);
    assert.match(r.stdout, /It chose max_num_seqs=/);
    const config = JSON.parse(fs.readFileSync(cfg, 'utf8'));
    assert.equal(config.batch_policy, 'static');
    assert.ok([1, 2].includes(config.max_num_seqs));
    assert.ok([64, 128].includes(config.max_num_batched_tokens));
    const server = await startServer({ brisk: opts.brisk, model: opts.model,
                                       args: ['--config', cfg] });
    try {
      const now = await (await fetch(`${server.url}/admin/config`)).json();
      assert.equal(now.max_num_seqs, config.max_num_seqs);
      assert.equal(now.max_num_batched_tokens, config.max_num_batched_tokens);
    } finally {
      await server.stop();
    }
  });

  test('an SLO nothing meets: exit 1, says so, writes no config', async () => {
    const out = tmp('tune-none');
    const r = await run(['tune', '-m', opts.model, '--slo', 'tpot_p99:0.0001', '--seqs', '1',
                         '--batched-tokens', '64', '--prefill-chunks', '0', '--num-prompts', '2',
                         '--output-len', '4', '--warmup', '0', '--out', out]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /None of them met it/);
    assert.ok(!fs.existsSync(path.join(out, 'tuned.json')));
  });
});
