#!/usr/bin/env node
// Browser test of the `brisk bench` HTML report (src/bench/report_html.cc): renders a saved
// report.json with `brisk bench report`, opens report.html from disk in headless Chromium
// (playwright-core) and checks what a reader sees: every chart present, visible and drawn, the
// result table complete, no page errors, and no request to anything but the file itself (the
// page must work on a machine without network), the "measured on" line, and the layout at
// 1280 and 390 px (charts share rows; nothing scrolls sideways on a phone). Saves
// bench-report.png and bench-report-phone.png.
//
//   cd tests && node browser/report_test.mjs --brisk ../build/src/brisk \
//       --data data/bench/sample_report.json --screenshots /tmp/shots
//
// Options: --brisk BIN and --data REPORT.json (required), --screenshots DIR (default
// docs/screenshots), --chromium PATH (default /usr/bin/chromium), --headed, --keep (keep the
// rendered folder). Exits non-zero with a message on the first failure.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function parseArgs(argv) {
  const opts = { chromium: '/usr/bin/chromium', headed: false, keep: false,
                 screenshots: path.join(repoRoot, 'docs', 'screenshots') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--brisk') opts.brisk = value();
    else if (a === '--data') opts.data = value();
    else if (a === '--screenshots') opts.screenshots = value();
    else if (a === '--chromium') opts.chromium = value();
    else if (a === '--headed') opts.headed = true;
    else if (a === '--keep') opts.keep = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!opts.brisk) throw new Error('--brisk BINARY is required');
  if (!opts.data) throw new Error('--data REPORT.json is required');
  return opts;
}

class CheckError extends Error {}
function check(cond, message) {
  if (!cond) throw new CheckError(message);
}

// The charts report_html.cc promises for this report, with their series counts.
function expectedCharts(report) {
  const hasSlo = report.slo && (report.slo.ttft_ms > 0 || report.slo.tpot_ms > 0);
  const charts = { ttft: 3, tpot: 3, itl: 3, e2e: 3, throughput: 2, requests: hasSlo ? 2 : 1,
                   tpot_vs_throughput: 1, ttft_vs_throughput: 1 };
  if (report.points.some((p) => p.server && p.server.has)) charts.batch = 1;
  if (report.points.some((p) => p.peak_rss_mib > 0)) charts.memory = 1;
  return charts;
}

const results = [];

async function run(opts) {
  const report = JSON.parse(fs.readFileSync(opts.data, 'utf8'));
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-report-'));
  const step = async (name, fn) => {
    const t = Date.now();
    try {
      await fn();
      results.push(name);
      console.log(`ok ${results.length} - ${name} (${Date.now() - t} ms)`);
    } catch (e) {
      console.log(`not ok ${results.length + 1} - ${name}`);
      throw e;
    }
  };
  let browser = null;
  try {
    await step('brisk bench report renders every format', async () => {
      const r = spawnSync(opts.brisk, ['bench', 'report', opts.data, '--out', outDir],
                          { encoding: 'utf8', timeout: 60_000 });
      check(r.status === 0, `brisk bench report exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
      const html = path.join(outDir, 'report.html');
      check(r.stdout.includes(`report: ${html}`), `no "report: ${html}" line:\n${r.stdout}`);
      for (const f of ['report.json', 'report.csv', 'report.md', 'report.html']) {
        check(fs.existsSync(path.join(outDir, f)), `${f} was not written`);
      }
      const bad = spawnSync(opts.brisk, ['bench', 'report', path.join(outDir, 'report.csv')],
                            { encoding: 'utf8', timeout: 60_000 });
      check(bad.status !== 0 && /not valid JSON/.test(bad.stderr),
            `a CSV file was accepted as a report (exit ${bad.status}): ${bad.stderr}`);
    });

    browser = await chromium.launch({
      executablePath: opts.chromium, headless: !opts.headed,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    // The page is one file: anything else it asks for is a failure (and is not fetched).
    page.on('request', (req) => {
      if (!req.url().startsWith('file://')) problems.push(`request to ${req.url()}`);
    });
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file://')) return route.continue();
      problems.push(`request to ${url}`);
      return route.abort();
    });

    await step('report.html loads from disk without any other request', async () => {
      const url = pathToFileURL(path.join(outDir, 'report.html')).href;
      await page.goto(url, { waitUntil: 'load' });
      check(/brisk bench report/.test(await page.title()), `title "${await page.title()}"`);
      check(await page.locator('script').count() === 0, 'the page has a <script>');
    });

    await step('the result table has one row per point', async () => {
      const rows = page.locator('table.results tbody tr');
      check(await rows.count() === report.points.length,
            `${await rows.count()} rows for ${report.points.length} points`);
      for (let i = 0; i < report.points.length; i++) {
        const first = (await rows.nth(i).locator('td').first().textContent()).trim();
        check(first === report.points[i].label, `row ${i} is "${first}"`);
      }
      const failing = report.points.filter((p) => p.failures > 0).length;
      check(await page.locator('table.results tr.fail').count() === failing,
            'failing points are not marked');
      if (report.synthetic) {
        check(await page.locator('[data-testid="synthetic"]').isVisible(),
              'the synthetic-model note is not visible');
      }
    });

    await step('every chart is present, visible and drawn', async () => {
      const charts = expectedCharts(report);
      const all = await page.locator('svg.chart').evaluateAll(
          (els) => els.map((e) => e.getAttribute('data-metric')));
      check(all.length === Object.keys(charts).length,
            `charts ${JSON.stringify(all)}, expected ${JSON.stringify(Object.keys(charts))}`);
      for (const [metric, series] of Object.entries(charts)) {
        const svg = page.locator(`svg.chart[data-metric="${metric}"]`);
        check(await svg.count() === 1, `${await svg.count()} charts for ${metric}`);
        check(await svg.isVisible(), `chart ${metric} is not visible`);
        const box = await svg.boundingBox();
        check(box && box.width > 100 && box.height > 100,
              `chart ${metric} has size ${JSON.stringify(box)}`);
        const lines = svg.locator('polyline, path');
        check(await lines.count() >= series,
              `chart ${metric}: ${await lines.count()} lines for ${series} series`);
        const drawn = await svg.locator('polyline').evaluateAll(
            (els) => els.map((e) => e.getAttribute('points').trim().split(/\s+/).length));
        check(drawn.every((n) => n >= 2), `chart ${metric}: a line with < 2 points ${drawn}`);
        const text = await svg.textContent();
        check(!/no data/.test(text), `chart ${metric} says "no data"`);
        check(!/NaN|Infinity/.test(await svg.innerHTML()), `chart ${metric} has NaN/Infinity`);
      }
      for (const metric of ['ttft', 'tpot']) {
        const limit = report.slo && report.slo[`${metric}_ms`];
        if (!(limit > 0)) continue;
        const ref = page.locator(`svg.chart[data-metric="${metric}"] line.reference`);
        check(await ref.count() === 1, `chart ${metric} has no SLO line`);
      }
    });

    await step('a line says where and when it was measured; no server frame offline',
               async () => {
      const line = await page.locator('[data-testid="measured-on"]').textContent();
      for (const part of [report.started_at, report.cpu, report.model]) {
        check(line.includes(part), `the "measured" line "${line}" does not name ${part}`);
      }
      check(await page.locator('.topbar, [data-testid="report-origin"]').count() === 0,
            'the file on disk has the server page\'s top bar or "this server" verdict');
    });

    await step('charts fill the width: two or more per row at 1280 px', async () => {
      await page.setViewportSize({ width: 1280, height: 800 });
      const tops = await page.locator('svg.chart').evaluateAll(
          (els) => els.map((e) => Math.round(e.getBoundingClientRect().top)));
      const firstRow = tops.filter((t) => t === tops[0]).length;
      check(firstRow >= 2, `${firstRow} chart(s) in the first row at 1280 px`);
      const fill = await page.evaluate(() => {
        const charts = [...document.querySelectorAll('svg.chart')];
        const row = charts.filter((c) => c.getBoundingClientRect().top ===
                                         charts[0].getBoundingClientRect().top);
        const used = row.reduce((w, c) => w + c.getBoundingClientRect().width, 0);
        return used / document.querySelector('.charts').clientWidth;
      });
      check(fill >= 0.85, `the first row of charts fills ${(fill * 100).toFixed(0)}% of the width`);
    });

    await step('at 390 px: no sideways scroll, one full-width chart per row', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      const { scroll, inner, widths, row } = await page.evaluate(() => ({
        scroll: document.scrollingElement.scrollWidth,
        inner: window.innerWidth,
        widths: [...document.querySelectorAll('svg.chart')].map(
            (e) => e.getBoundingClientRect().width),
        row: document.querySelector('.charts').clientWidth,
      }));
      check(scroll <= inner, `the page scrolls sideways: ${scroll} px in a ${inner} px window`);
      check(widths.every((w) => w >= 0.95 * row), `charts ${widths} px wide in a ${row} px row`);
      fs.mkdirSync(opts.screenshots, { recursive: true });
      await page.screenshot({ path: path.join(opts.screenshots, 'bench-report-phone.png'),
                              fullPage: true });
      await page.setViewportSize({ width: 1400, height: 900 });
    });

    await step('full-page screenshot', async () => {
      fs.mkdirSync(opts.screenshots, { recursive: true });
      const shot = path.join(opts.screenshots, 'bench-report.png');
      await page.screenshot({ path: shot, fullPage: true });
      const size = fs.statSync(shot).size;
      check(size > 10 * 1024, `screenshot is only ${size} bytes`);
      console.log(`# screenshot ${shot} (${size} bytes)`);
    });

    await step('no page errors and no outside requests', async () => {
      check(problems.length === 0, problems.join('\n'));
    });
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (!opts.keep) fs.rmSync(outDir, { recursive: true, force: true });
    else console.log(`# kept ${outDir}`);
  }
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`report_test: ${e.message}`);
    process.exit(2);
  }
  try {
    await run(opts);
    console.log(`${results.length} passed, 0 failed`);
  } catch (e) {
    console.error(`FAIL: ${e instanceof CheckError ? e.message : e.stack || e}`);
    console.log(`${results.length} passed, 1 failed`);
    process.exitCode = 1;
  }
}

main();
