// brisk serve inside a real cgroup (v1 memory and cpu controllers, created by the test as root):
// with a 1 GiB memory limit and half a CPU it picks 1 compute thread and a KV budget under the
// limit, says so, serves 16 streaming clients with no failure and is never OOM-killed; with a
// limit below the model's size it refuses at start with a clear message. Skipped, with a notice,
// where no cgroup can be created (not root, no v1 hierarchy). cgroup v2 parsing is tested on
// fixture trees (tests/unit/runtime/cgroup_limits_test.cc).
//
//   node tests/server/cgroup_test.mjs --brisk build/src/brisk --model synth-0.5b.gguf
//     [--serve-arg SECONDS_OF_LOAD]
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, test } from 'node:test';

import { parseArgs, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();
const loadSeconds = Number(opts.serveArgs[0] ?? 20);
const MEM = '/sys/fs/cgroup/memory', CPU = '/sys/fs/cgroup/cpu';

function canMakeCgroups() {
  try {
    const probe = `${MEM}/brisk-probe-${process.pid}`;
    fs.mkdirSync(probe);
    fs.rmdirSync(probe);
    return fs.existsSync(`${CPU}/cpu.cfs_quota_us`);
  } catch {
    return false;
  }
}

function makeCgroup(memoryBytes, quotaUs) {
  const name = `brisk-test-${process.pid}-${Math.floor(Math.random() * 1e9)}`;
  fs.mkdirSync(`${MEM}/${name}`);
  fs.mkdirSync(`${CPU}/${name}`);
  fs.writeFileSync(`${MEM}/${name}/memory.limit_in_bytes`, String(memoryBytes));
  fs.writeFileSync(`${CPU}/${name}/cpu.cfs_period_us`, '100000');
  fs.writeFileSync(`${CPU}/${name}/cpu.cfs_quota_us`, String(quotaUs));
  return {
    name,
    oomKills: () => Number(/oom_kill (\d+)/.exec(fs.readFileSync(`${MEM}/${name}/memory.oom_control`, 'utf8'))[1]),
    maxUsage: () => Number(fs.readFileSync(`${MEM}/${name}/memory.max_usage_in_bytes`, 'utf8')),
    remove: () => {
      for (const d of [`${MEM}/${name}`, `${CPU}/${name}`]) {
        try { fs.rmdirSync(d); } catch { /* a process may linger a moment */ }
      }
    },
  };
}

// Starts `brisk serve` as a member of the cgroup (a shell joins it, then execs the server).
function serveIn(cg, extra = []) {
  const cmd = `echo $$ > ${MEM}/${cg.name}/cgroup.procs && echo $$ > ${CPU}/${cg.name}/cgroup.procs && exec "$0" "$@"`;
  const proc = spawn('sh', ['-c', cmd, opts.brisk, 'serve', '-m', opts.model, '--port', '0', ...extra],
                     { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  const ready = new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      stdout += d;
      const m = stdout.match(/listening on (http:\/\/[^\s]+)/);
      if (m && /\nready\n/.test(stdout)) resolve(m[1]);
    });
    exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
  return { proc, ready, exited, stderr: () => stderr };
}

// VmRSS of a process in bytes: anonymous and file-backed pages (the mapped model file) together.
function vmRss(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}

async function client(url, until, stats) {
  while (performance.now() < until) {
    try {
      const r = await fetch(`${url}/v1/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'Tell me about the sea', max_tokens: 32, ignore_eos: true,
                               temperature: 0, stream: true }),
      });
      const text = await r.text();
      if (r.status === 200 && text.includes('[DONE]')) stats.ok++;
      else stats.failed++;
    } catch {
      stats.failed++;
    }
  }
}

describe('cgroup v1 limits', { skip: !canMakeCgroups() && 'cannot create cgroup v1 directories here (needs root and a v1 hierarchy)' }, () => {
  test('1 GiB and half a CPU: 1 thread, a KV budget that fits, 16 clients, no OOM kill', async () => {
    const cg = makeCgroup(1 << 30, 50000);
    const s = serveIn(cg);
    try {
      const url = await s.ready;
      const line = s.stderr().split('\n').find((l) => l.includes('compute threads'));
      assert.ok(line, s.stderr());
      assert.match(line, /^brisk serve: 1 compute threads, cgroup CPU quota 0\.50; /);
      assert.match(line, new RegExp(`memory limit 1\\.0 GiB \\(cgroup v1 ${MEM}/${cg.name}\\)`));
      const kv = /KV cache (\d+) MiB/.exec(line);
      assert.ok(kv, line);
      assert.ok(Number(kv[1]) >= 96 && Number(kv[1]) < 1024, line);
      // Resident, not only charged: the mapped file's pages of packed weights are let go.
      assert.ok(vmRss(s.proc.pid) < 1 << 30, `idle VmRSS ${vmRss(s.proc.pid)}`);
      const stats = { ok: 0, failed: 0 };
      const until = performance.now() + loadSeconds * 1000;
      await Promise.all(Array.from({ length: 16 }, () => client(url, until, stats)));
      assert.equal(stats.failed, 0);
      assert.ok(stats.ok >= 16, `completed requests: ${stats.ok}`);
      assert.equal(cg.oomKills(), 0);
      assert.ok(cg.maxUsage() <= 1 << 30);
      assert.equal(s.proc.exitCode, null, 'still running');
      assert.ok(vmRss(s.proc.pid) < 1 << 30, `VmRSS after the load ${vmRss(s.proc.pid)}`);
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
      cg.remove();
    }
  });

  test('a limit below the model size is refused at start, before loading', async () => {
    const cg = makeCgroup(300 << 20, 100000);
    const s = serveIn(cg);
    try {
      await assert.rejects(s.ready);
      assert.notEqual(await s.exited, 0);
      assert.match(s.stderr(), /memory limit 300 MiB is below what the model needs resident/);
      assert.equal(cg.oomKills(), 0);
    } finally {
      cg.remove();
    }
  });
});

describe('--memory-limit without a cgroup', () => {
  test('1.4G: the KV cache is sized to fit, and the idle resident set stays under the limit', async () => {
    const s = await startServer({ brisk: opts.brisk, model: opts.model, args: ['--memory-limit', '1.4G'] });
    try {
      const line = s.stderr().split('\n').find((l) => l.includes('compute threads'));
      assert.match(line ?? '', /memory limit 1\.4 GiB \(--memory-limit\)/, s.stderr());
      await new Promise((r) => setTimeout(r, 500));
      const limit = 1.4 * 2 ** 30;
      assert.ok(vmRss(s.proc.pid) < limit, `idle VmRSS ${vmRss(s.proc.pid)} >= ${limit}`);
    } finally {
      await s.stop();
    }
  });
});
