#!/usr/bin/env node
// Browser test of the dashboard (/dashboard.html) and the bench-report page (/bench) served by
// `brisk serve` (issue 32), at a desktop (1280x800) and a phone (390x844) size in the system
// Chromium (playwright-core): prompt throughput that moves while a long prompt is prefilled
// (checked against /metrics), a unit on every chart, whole-number ticks for counts, batch 0 when
// idle, no sideways scroll, every link tappable, and /bench's top bar, chart grid and
// "measured on" line. Writes {dashboard,bench}-{desktop,phone}.png.
//
//   cd tests && node browser/dashboard_test.mjs --brisk ../build/src/brisk --model M.gguf \
//       --report data/bench/sample_report.json
//
// Options: --brisk BIN and --report REPORT.json (required), --model GGUF (else the embedded
// default), --chromium PATH (default /usr/bin/chromium), --screenshots DIR (default
// docs/screenshots), --headed. Exits non-zero with a message on the first failure.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { check, CheckError, parseArgs, sleep, startServer, stopServer } from './harness.mjs';

const VIEWPORTS = [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]];
const CHART_UNITS = { requests: 'requests', batch: 'sequences per step', kv: '%',
                      tokens: 'tokens/s', ttft: 'ms', tpot: 'ms' };

// One metric from GET /metrics (the sum over its label sets), null when absent.
async function metric(base, name) {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = null;
  for (const line of text.split('\n')) {
    const m = /^([^\s{]+)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name) sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}

// ---- checks made inside the page ----

// No sideways scroll: the document is no wider than the window.
async function checkNoSidewaysScroll(page, what) {
  const { scroll, inner } = await page.evaluate(() => ({
    scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth }));
  check(scroll <= inner, `${what}: the page scrolls sideways (${scroll} px in a ${inner} px window)`);
}

// Every link and control, scrolled into view, lies inside the window and is what a tap at its
// centre hits (not covered by something else). Returns how many were checked.
async function checkTappable(page, what) {
  const bad = await page.evaluate(() => {
    const out = [];
    const controls = [...document.querySelectorAll(
        'a[href], button, input, select, textarea, [tabindex]')]
      .filter((e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden');
    for (const e of controls) {
      e.scrollIntoView({ block: 'center', inline: 'center' });
      const r = e.getBoundingClientRect();
      const name = `${e.tagName.toLowerCase()} "${(e.textContent || '').trim().slice(0, 30)}"`;
      if (r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight) {
        out.push(`${name} is outside the window: ${JSON.stringify(r)}`);
        continue;
      }
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (!hit || (hit !== e && !e.contains(hit))) {
        out.push(`${name}: a tap at its centre hits ${hit ? hit.outerHTML.slice(0, 80) : 'nothing'}`);
      }
    }
    window.scrollTo(0, 0);
    return controls.length ? out : ['no controls found'];
  });
  check(bad.length === 0, `${what}: ${bad.join('; ')}`);
}

// The dashboard's latest value of one series, as the legend holds it (null when a gap).
const legendValue = (page, key) => page.evaluate((k) => {
  const e = document.querySelector(`.legend-item[data-series="${k}"]`);
  return e && e.dataset.value !== '' ? Number(e.dataset.value) : null;
}, key);

async function waitFor(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    check(Date.now() < deadline, `${what} (not within ${timeoutMs / 1000} s)`);
    await sleep(200);
  }
}

// ---- the steps ----

async function dashboardLayout(page, base, size) {
  await page.goto(`${base}/dashboard.html`);
  await waitFor('the dashboard drew no points', () => page.evaluate(() => Number(
      document.querySelector('[data-testid="chart-requests"]').getAttribute('data-points')) >= 2),
  15_000);
  await checkNoSidewaysScroll(page, `dashboard at ${size}`);
  await checkTappable(page, `dashboard at ${size}`);
  for (const [id, unit] of Object.entries(CHART_UNITS)) {
    const title = await page.locator(`figure:has([data-testid="chart-${id}"]) .chart-title`)
        .textContent();
    check(title.endsWith(`(${unit})`), `chart ${id} is titled "${title}", not in ${unit}`);
  }
  check(await page.locator('.chart-title').count() === Object.keys(CHART_UNITS).length,
        'a chart the test does not know of (what is its unit?)');
  const axes = await page.evaluate(async () => {
    const { integerAxis } = await import('/js/chart.js');
    return [0, 0.4, 1, 3, 7, 16, 99, 1234].map((max) => ({ max, ...integerAxis(max) }));
  });
  for (const { max, top, step } of axes) {
    check(Number.isInteger(step) && step >= 1 && Number.isInteger(top / step) && top >= max &&
          top / step <= 5, `integerAxis(${max}) = top ${top}, step ${step}`);
  }
  for (const id of ['requests', 'batch']) {
    const ticks = await page.locator(`[data-testid="chart-${id}"] .y-tick`).allTextContents();
    check(ticks.length >= 2 && ticks.every((t) => /^\d+$/.test(t)),
          `chart ${id} (a count) has ticks ${JSON.stringify(ticks)}`);
  }
}

// A prompt of a few thousand tokens is prefilled in chunks over several engine steps: while it
// runs the dashboard's prompt rate must be above 0, and no higher than /metrics' counter moved.
async function prefillThroughput(page, base) {
  const before = await metric(base, 'brisk:engine_prompt_tokens_computed_total');
  check(before !== null, 'no brisk:engine_prompt_tokens_computed_total in /metrics');
  // A fresh prefix each run: prefix-cache hits are not computed, so they would not count.
  const words = Array.from({ length: 650 }, (_, i) => `w${(i * 7919) % 1000}`).join(' ');
  const prompt = `${Date.now()} ${words}`;
  const tokens = await (await fetch(`${base}/tokenize`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: prompt }) })).json();
  const n = tokens.tokens.length;
  check(n >= 2000, `the long prompt is only ${n} tokens`);
  const started = Date.now();
  let finished = null;
  const cancel = new AbortController();
  const request = fetch(`${base}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: cancel.signal,
    body: JSON.stringify({ prompt, max_tokens: 1 }),
  }).then(async (r) => {
    finished = Date.now();
    const text = await r.text();
    check(r.status === 200, `the long prompt got HTTP ${r.status}: ${text}`);
    return JSON.parse(text);
  });
  request.catch(() => {});
  let seen = null;
  while (finished === null && Date.now() - started < 90_000) {
    const shown = await legendValue(page, 'prompt_tps');
    const counter = await metric(base, 'brisk:engine_prompt_tokens_computed_total');
    if (finished === null && shown > 0) {
      seen = { shown, moved: counter - before, t: (Date.now() - started) / 1000 };
      break;
    }
    await sleep(150);
  }
  if (seen) {
    cancel.abort();  // seen in flight: the rest of the prefill would only cost time
  } else {
    const body = await request;
    check(false, `the prompt rate stayed 0 for the whole ${((finished - started) / 1000)
        .toFixed(1)} s prefill of ${body.usage.prompt_tokens} tokens`);
  }
  // The rate spans >= 1 s of polls inside [start - 5 s, now], and the counter did not move before
  // the request: it cannot exceed what the counter moved since the start, per second.
  check(seen.moved > 0 && seen.moved < n, `the counter moved ${seen.moved} of ${n} tokens ` +
        'before the request ended');
  check(seen.shown <= seen.moved / 0.9, `the dashboard shows ${seen.shown} prompt tokens/s ` +
        `while /metrics moved ${seen.moved} tokens`);
  console.log(`# prefill of ${n} tokens: ${seen.shown.toFixed(0)} tokens/s shown after ` +
              `${seen.t.toFixed(1)} s (counter +${seen.moved}), then cancelled`);
}

// Idle: /metrics says batch 0 beside 0 running, and so does the dashboard.
async function idleBatch(page, base) {
  await waitFor('/metrics: running stays above 0 after every request ended',
                async () => await metric(base, 'vllm:num_requests_running') === 0, 10_000);
  check(await metric(base, 'brisk:batch_size') === 0,
        `idle /metrics says batch ${await metric(base, 'brisk:batch_size')} with 0 running`);
  await waitFor('the dashboard does not show running 0 and batch 0 together', async () =>
    await legendValue(page, 'running') === 0 && await legendValue(page, 'batch') === 0, 5_000);
}

// Writes latest/report.json into the bench folder (the server reads it again per request).
function writeReport(benchDir, report) {
  fs.mkdirSync(path.join(benchDir, 'latest'), { recursive: true });
  fs.writeFileSync(path.join(benchDir, 'latest', 'report.json'), JSON.stringify(report));
}

async function benchPage(page, base, size) {
  await page.goto(`${base}/bench`);
  await checkNoSidewaysScroll(page, `/bench at ${size}`);
  await checkTappable(page, `/bench at ${size}`);
  const current = page.locator('.topbar nav a[aria-current="page"]');
  check(await current.count() === 1 && (await current.textContent()).trim() === 'Bench',
        '/bench does not mark Bench as the current page');
  const boxes = await page.locator('svg.chart').evaluateAll((els) => els.map((e) => {
    const r = e.getBoundingClientRect();
    return { top: Math.round(r.top), width: r.width };
  }));
  check(boxes.length >= 4, `/bench shows ${boxes.length} charts`);
  const firstRow = boxes.filter((b) => b.top === boxes[0].top).length;
  const width = await page.evaluate(() => document.querySelector('.charts').clientWidth);
  if (size === 'desktop') {
    check(firstRow >= 2, `/bench at ${size}: ${firstRow} chart in the first row`);
    check(boxes[0].width * firstRow >= 0.85 * width, `/bench charts fill ${boxes[0].width} x ` +
          `${firstRow} of ${width} px`);
  } else {
    check(firstRow === 1, `/bench at ${size}: ${firstRow} charts in the first row`);
    check(boxes.every((b) => b.width >= 0.95 * width), `/bench charts are narrower than the row`);
  }
  const line = await page.locator('[data-testid="measured-on"]').textContent();
  check(/Measured .* on .*model/.test(line), `/bench says "${line}"`);
}

// Each top-bar link of /bench leads to its page.
async function benchLinks(page, base) {
  for (const [name, target, ready] of [
    ['Dashboard', '/dashboard.html', '[data-testid="chart-requests"]'],
    ['Chat', '/', '#app, main, body'],
  ]) {
    await page.goto(`${base}/bench`);
    await page.locator('.topbar nav a', { hasText: name }).click();
    await page.waitForURL(`${base}${target}`);
    await page.locator(ready).first().waitFor();
    const title = await page.title();
    check(/brisk/.test(title), `${name} from /bench led to "${title}"`);
  }
}

// The verdict under "Measured ...": this server only when the report's URL and model are ours.
async function benchOrigin(page, base, benchDir, sample) {
  const models = await (await fetch(`${base}/v1/models`)).json();
  const id = models.data[0].id;
  const port = new URL(base).port;
  for (const [report, want] of [
    [{ ...sample, mode: 'http', url: `http://localhost:${port}`, model: id }, 'this-server'],
    [{ ...sample, mode: 'http', url: `http://127.0.0.1:${port}`, model: `${id}-other` },
     'other-server'],
    [{ ...sample, mode: 'http', url: 'http://10.1.2.3:8000', model: id }, 'other-server'],
    [sample, 'in-process'],
  ]) {
    writeReport(benchDir, report);
    await page.goto(`${base}/bench`);
    const origin = await page.locator('[data-testid="report-origin"]').getAttribute('data-origin');
    check(origin === want, `a report from ${report.url || 'in-process'} (model ${report.model}) ` +
          `is said to be from "${origin}", not "${want}"`);
  }
}

const results = [];

async function run(opts) {
  const sample = JSON.parse(fs.readFileSync(opts.report, 'utf8'));
  const benchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-dash-bench-'));
  writeReport(benchDir, sample);
  fs.mkdirSync(opts.screenshots, { recursive: true });
  const step = async (name, fn) => {
    const t = Date.now();
    await fn();
    results.push(name);
    console.log(`ok ${results.length} - ${name} (${Date.now() - t} ms)`);
  };
  let server = null;
  let browser = null;
  try {
    server = await startServer({ ...opts, serveArgs: [...opts.serveArgs, '--bench-dir', benchDir] });
    const base = server.url;
    browser = await chromium.launch({
      executablePath: opts.chromium, headless: !opts.headed,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    for (const [size, viewport] of VIEWPORTS) {
      const context = await browser.newContext({ viewport, hasTouch: size === 'phone' });
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      const problems = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      await step(`dashboard at ${size}: units, integer ticks, no sideways scroll, tappable`,
                 () => dashboardLayout(page, base, size));
      if (size === 'desktop') {
        await step('dashboard prompt rate moves during a long prefill, as /metrics does',
                   () => prefillThroughput(page, base));
      }
      await step(`dashboard at ${size}: idle shows batch 0 with 0 running`,
                 () => idleBatch(page, base));
      await page.screenshot({ path: path.join(opts.screenshots, `dashboard-${size}.png`) });
      await step(`/bench at ${size}: top bar, chart grid, measured-on line, no sideways scroll`,
                 () => benchPage(page, base, size));
      await page.screenshot({ path: path.join(opts.screenshots, `bench-${size}.png`) });
      await step(`/bench at ${size}: its links lead to the dashboard and the chat`,
                 () => benchLinks(page, base));
      check(problems.length === 0, problems.join('\n'));
      await context.close();
    }
    const page = await browser.newPage();
    await step('/bench says whether the report was measured on this server',
               () => benchOrigin(page, base, benchDir, sample));
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (server) await stopServer(server.child);
    fs.rmSync(benchDir, { recursive: true, force: true });
  }
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
    if (!opts.report) throw new Error('--report REPORT.json is required');
  } catch (e) {
    console.error(`dashboard_test: ${e.message}`);
    process.exit(2);
  }
  const t = Date.now();
  try {
    await run(opts);
    console.log(`${results.length} passed, 0 failed (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  } catch (e) {
    console.error(`FAIL: ${e instanceof CheckError ? e.message : e.stack || e}`);
    console.log(`${results.length} passed, 1 failed`);
    process.exitCode = 1;
  }
}

main();
