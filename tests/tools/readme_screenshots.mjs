#!/usr/bin/env node
// Makes the README's screenshots from a release build under a realistic load (not a test: the
// browser tests check the pages; this only photographs them).
//
//   cd tests && npm ci
//   node tools/readme_screenshots.mjs --brisk ../build/src/brisk --model ../build/tests/synth-0.5b.gguf
//
// It starts `brisk serve` with a private BRISK_HOME, runs `brisk bench --url` against it
// (closed-loop clients 1, 2, 4, 8) and photographs the dashboard while that load runs, then the
// chat at 1280x800 and 390x844, then /bench showing that run's report. Writes into
// docs/screenshots/ (or --screenshots DIR): chat.png, chat-phone.png, dashboard.png, bench.png.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { parseArgs, sleep, startServer, stopServer } from '../browser/harness.mjs';

const QUESTION = 'Explain in two short paragraphs why batching raises throughput on a CPU.';

function run(bin, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${bin} exited ${code}`))));
  });
}

async function photographDashboard(browser, url, file) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${url}/dashboard.html`);
  // The charts show the last two minutes: let the load fill them, then shoot while the highest
  // concurrency runs, so the legends show a loaded server rather than the tail of the run.
  await sleep(25_000);
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; await sleep(500)) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const m = /^vllm:num_requests_running(?:\{[^}]*\})?\s+(\S+)/m.exec(text);
    if (m && Number(m[1]) >= 6) break;
  }
  await sleep(1_500);  // one more poll of the page, so its legends carry this moment
  await page.screenshot({ path: file });
  await page.close();
}

async function photographChat(browser, url, viewport, file) {
  const page = await browser.newPage({ viewport });
  await page.goto(url);
  await page.getByTestId('message-input').fill(QUESTION);
  await page.getByTestId('send').click();
  await sleep(8_000);  // the synthetic model writes until max_tokens: show a few seconds of it
  const stop = page.getByTestId('stop');
  if (await stop.isVisible()) await stop.click();
  await sleep(500);
  await page.screenshot({ path: file });
  await page.close();
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  fs.mkdirSync(opts.screenshots, { recursive: true });
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-shots-'));
  process.env.BRISK_HOME = home;
  const server = await startServer(opts);
  const browser = await chromium.launch({ executablePath: opts.chromium, headless: !opts.headed });
  try {
    const bench = run(opts.brisk, ['bench', '--url', server.url, '--concurrency', '1,2,4,8',
                                   '--output-len', '64', '--server-pid', String(server.child.pid)],
                      process.env);
    await photographDashboard(browser, server.url, path.join(opts.screenshots, 'dashboard.png'));
    await bench;
    await photographChat(browser, server.url, { width: 1280, height: 800 },
                         path.join(opts.screenshots, 'chat.png'));
    await photographChat(browser, server.url, { width: 390, height: 844 },
                         path.join(opts.screenshots, 'chat-phone.png'));
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.url}/bench`);
    await page.screenshot({ path: path.join(opts.screenshots, 'bench.png') });
  } finally {
    await browser.close();
    await stopServer(server.child);
    fs.rmSync(home, { recursive: true, force: true });
  }
  console.log(`screenshots written to ${opts.screenshots}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
