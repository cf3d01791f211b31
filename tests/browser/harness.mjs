// Shared by the browser tests (ui_test, chat_test, dashboard_test) and tools/readme_screenshots:
// arguments, starting/stopping `brisk serve`, checks with readable failures.

import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function parseArgs(argv) {
  const opts = { serveArgs: [], chromium: '/usr/bin/chromium',
                 screenshots: path.join(repoRoot, 'docs', 'screenshots'), headed: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--brisk') opts.brisk = value();
    else if (a === '--model') opts.model = value();
    else if (a === '--url') opts.url = value().replace(/\/+$/, '');
    else if (a === '--serve-arg') opts.serveArgs.push(value());
    else if (a === '--report') opts.report = value();
    else if (a === '--chromium') opts.chromium = value();
    else if (a === '--screenshots') opts.screenshots = value();
    else if (a === '--headed') opts.headed = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!opts.brisk && !opts.url) throw new Error('--brisk BINARY (or --url URL) is required');
  return opts;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class CheckError extends Error {}
export function check(cond, message) {
  if (!cond) throw new CheckError(message);
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Starts `brisk serve` and resolves with { url, child, log() } once GET /health answers 200.
export async function startServer(opts) {
  const port = await freePort();
  const args = ['serve', ...(opts.model ? ['-m', opts.model] : []), '--host', '127.0.0.1',
                '--port', String(port), ...opts.serveArgs];
  console.log(`# starting ${opts.brisk} ${args.join(' ')}`);
  const child = spawn(opts.brisk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Safety net: whatever happens to this script, the server does not outlive it.
  process.on('exit', () => child.exitCode === null && child.kill('SIGKILL'));
  let output = '';
  let url = null;
  let exited = null;
  const onData = (d) => {
    output = (output + d.toString()).slice(-20000);
    const m = /listening on (http:\/\/[^\s]+)/.exec(output);
    if (m && !url) url = m[1].replace(/\/+$/, '');
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  child.on('exit', (code, signal) => (exited = { code, signal }));
  child.on('error', (e) => (exited = { error: e.message }));
  const tail = () => output.split('\n').slice(-25).join('\n');
  const deadline = Date.now() + 300_000;  // a first run may have to write the default model
  while (Date.now() < deadline) {
    if (exited) {
      throw new CheckError(`the server exited before it was ready (${JSON.stringify(exited)}):\n` +
                           tail());
    }
    const base = url || `http://127.0.0.1:${port}`;
    try {
      const r = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) });
      if (r.status === 200) return { url: base, child, log: tail };
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  child.kill('SIGKILL');
  throw new CheckError(`GET /health did not answer 200 within 300 s:\n${tail()}`);
}

export async function stopServer(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const killed = await Promise.race([done.then(() => true), sleep(10_000).then(() => false)]);
  if (!killed) {
    console.log('# server ignored SIGTERM for 10 s: killing it');
    child.kill('SIGKILL');
    await done;
  }
}

// page.waitForFunction with a readable failure message instead of a bare timeout.
export async function waitUntil(page, what, fn, arg, timeoutMs) {
  try {
    await page.waitForFunction(fn, arg, { timeout: timeoutMs });
  } catch (e) {
    throw new CheckError(`${what} (not within ${timeoutMs / 1000} s)`);
  }
}

