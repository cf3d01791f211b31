#!/usr/bin/env node
// Browser test of the web UI served by `brisk serve` (DESIGN §6 "Web UI", §8 "Testing").
// Starts the server, drives the system Chromium (headless) with playwright-core, and checks what
// a user sees: streaming answers, stop, regenerate, errors, settings that survive a reload,
// conversations, and a live dashboard. Writes docs/screenshots/{chat,dashboard}.png.
//
//   cd tests && npm ci && node browser/ui_test.mjs --brisk ../build/src/brisk --model M.gguf
//
// Options: --brisk BIN (required unless --url), --model GGUF (else the embedded default),
// --url URL (test a server that is already running), --serve-arg ARG (repeatable, extra flags
// for `serve`), --chromium PATH (default /usr/bin/chromium), --screenshots DIR (default
// docs/screenshots), --headed. Exits non-zero with a message on the first failure.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import OpenAI from 'openai';
import { chromium } from 'playwright-core';
import {
  check, CheckError, parseArgs, sleep, startServer, stopServer, waitUntil,
} from './harness.mjs';

import { libraryChecks } from './ui_library_checks.mjs';

// A raw GET (node keeps the path as written; fetch() would normalise "/../").
function rawGet(base, rawPath, headers = {}) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: rawPath, headers }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${rawPath} timed out`)));
    req.end();
  });
}

async function metricsValue(base, name) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const re = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\{[^}]*\\})?\\s+(\\S+)`,
                        'm');
  const m = re.exec(text);
  return m ? Number(m[2]) : null;
}

// ---- page helpers ----

// True in the page when the newest answer is in `state` (done, stopped, error).
const lastAnswerIs = (state) => {
  const all = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
  return all.length > 0 && all[all.length - 1].dataset.state === state;
};

const assistantMessages = (page) =>
  page.locator('[data-testid="message"][data-role="assistant"]');

// Sends `text` and samples the newest answer's length every few ms until it stops streaming.
async function sendAndWatch(page, text, { until = 'done', timeoutMs = 120_000 } = {}) {
  const before = await assistantMessages(page).count();
  const watcher = page.evaluate(({ before, timeoutMs }) => new Promise((resolve) => {
    const lengths = [];
    const started = Date.now();
    const timer = setInterval(() => {
      const all = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
      if (all.length <= before) return;
      const m = all[all.length - 1];
      if (m.dataset.state === 'streaming') {
        const c = m.querySelector('[data-testid="message-content"]');
        if (!c.querySelector('.typing')) lengths.push(c.textContent.length);
      }
      if (m.dataset.state !== 'streaming' || Date.now() - started > timeoutMs) {
        clearInterval(timer);
        resolve({ lengths, state: m.dataset.state });
      }
    }, 10);
  }), { before, timeoutMs });
  watcher.catch(() => {});  // if the browser closes first (a failed step), nobody awaits it
  await page.fill('[data-testid="message-input"]', text);
  await page.click('[data-testid="send"]');
  if (until === 'started') return null;
  return watcher;
}

function distinctGrowth(lengths) {
  const seen = [];
  for (const n of lengths) {
    if (n > 0 && (seen.length === 0 || n > seen[seen.length - 1])) seen.push(n);
  }
  return seen;
}

async function setSetting(page, key, value) {
  const sel = `[data-testid="setting-${key}"]`;
  if (key === 'mode') await page.selectOption(sel, value);
  else await page.fill(sel, value);
}

async function openSettings(page) {
  if (await page.locator('[data-testid="settings-panel"]').isHidden()) {
    await page.click('[data-testid="settings-toggle"]');
  }
}

// ---- the test ----

const results = [];

async function run(opts) {
  let server = null;
  let browser = null;
  const pageErrors = [];
  let base = opts.url;
  let props = null;
  let page = null;

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

  try {
    if (!base) {
      server = await startServer(opts);
      base = server.url;
    }
    console.log(`# server at ${base}`);
    props = await (await fetch(`${base}/props`)).json();
    console.log(`# props ${JSON.stringify(props)}`);

    browser = await chromium.launch({
      executablePath: opts.chromium, headless: !opts.headed,
      // No sandbox (CI runs as root); no background traffic: the machine has no outside network,
      // and Chromium's refused background connections only add noise and delay.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      // Failed loads are expected where the test provokes HTTP errors; CSP violations and
      // script errors are not.
      if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) {
        pageErrors.push(`console error: ${m.text()}`);
      }
    });
    const noPageErrors = () => check(pageErrors.length === 0, pageErrors.join('\n'));

    await step('static UI over HTTP: types, ETag/304, no traversal', async () => {
      const root = await rawGet(base, '/');
      check(root.status === 200, `GET / gave ${root.status}`);
      check(/^text\/html/.test(root.headers['content-type'] || ''),
            `GET / content-type ${root.headers['content-type']}`);
      check(/data-testid="message-input"/.test(root.body), 'GET / is not the chat page');
      const etag = root.headers.etag;
      check(etag && /^"[^"]+"$/.test(etag), `GET / has no strong ETag (${etag})`);
      const again = await rawGet(base, '/', { 'If-None-Match': etag });
      check(again.status === 304, `GET / with If-None-Match gave ${again.status}, want 304`);
      const js = await rawGet(base, '/js/chat_page.js');
      check(js.status === 200 && /^text\/javascript/.test(js.headers['content-type'] || ''),
            `GET /js/chat_page.js: ${js.status} ${js.headers['content-type']}`);
      for (const p of ['/../../../../etc/passwd', '/js/../../web/index.html',
                       '/%2e%2e/%2e%2e/etc/passwd', '/no-such-file.html']) {
        const r = await rawGet(base, p);
        check(r.status === 404 || r.status === 400, `GET ${p} gave ${r.status}, want 404`);
        check(!/root:/.test(r.body), `GET ${p} leaked a file`);
      }
    });

    await step('page loads: model name and synthetic notice', async () => {
      await page.goto(`${base}/`);
      await waitUntil(page, `model name "${props.model}" not shown`,
                      (m) => document.getElementById('model-name').textContent === m,
                      props.model, 15_000);
      const notice = page.locator('[data-testid="synthetic-notice"]');
      if (props.synthetic === true) {
        check(await notice.isVisible(), 'synthetic model but no visible notice');
        check(/random|synthetic/i.test(await notice.textContent()), 'notice text');
      } else {
        check(await notice.isHidden(), 'notice shown for a real model');
      }
      noPageErrors();
    });

    await step('markdown, highlighting, SSE and metrics parsers (in the page)', async () => {
      const problems = await page.evaluate(libraryChecks);
      check(problems.length === 0, problems.join('\n'));
    });

    await step('settings persist after reload; invalid values are refused', async () => {
      await openSettings(page);
      await setSetting(page, 'temperature', '0.7');
      await setSetting(page, 'top_p', '0.9');
      await setSetting(page, 'repetition_penalty', '1.1');
      await setSetting(page, 'max_tokens', '24');
      await setSetting(page, 'mode', 'qa');
      await setSetting(page, 'system_prompt', 'Be brief.');
      // A server started without --api-key accepts any key, so this one is only checked for
      // being stored and sent.
      await setSetting(page, 'api_key', 'sk-ui-test');
      await setSetting(page, 'temperature', '5');  // out of range: shown, not saved
      const err = await page.textContent('[data-testid="settings-error"]');
      check(/Temperature/.test(err), `no error shown for temperature 5 (got "${err}")`);
      await page.reload();
      await openSettings(page);
      const want = { temperature: '0.7', top_p: '0.9', repetition_penalty: '1.1',
                     max_tokens: '24', mode: 'qa', system_prompt: 'Be brief.',
                     api_key: 'sk-ui-test' };
      for (const [k, v] of Object.entries(want)) {
        const got = await page.inputValue(`[data-testid="setting-${k}"]`);
        check(got === v, `setting ${k} after reload: "${got}", want "${v}"`);
      }
    });

    await step('send: tokens stream in, settings are sent, stats shown', async () => {
      const reqPromise = page.waitForRequest((r) => r.url().endsWith('/v1/chat/completions'));
      const watch = await sendAndWatch(page, 'Hello, who are you?');
      const req = await reqPromise;
      const body = JSON.parse(req.postData());
      check(body.stream === true && body.stream_options && body.stream_options.include_usage,
            'stream/include_usage not requested');
      check(body.temperature === 0.7 && body.top_p === 0.9 && body.repetition_penalty === 1.1 &&
            body.max_tokens === 24 && body.mode === 'qa',
            `settings not sent: ${JSON.stringify(body)}`);
      check(body.messages[0].role === 'system' && body.messages[0].content === 'Be brief.',
            'system prompt not sent first');
      check(body.messages.at(-1).content === 'Hello, who are you?', 'user message not last');
      check(req.headers()['authorization'] === 'Bearer sk-ui-test',
            `API key not sent as Bearer (${req.headers()['authorization']})`);
      check(watch.state === 'done', `answer ended in state ${watch.state}`);
      const growth = distinctGrowth(watch.lengths);
      check(growth.length >= 2, `text did not grow while streaming (lengths ${watch.lengths})`);
      const last = assistantMessages(page).last();
      const text = await last.locator('[data-testid="message-content"]').textContent();
      check(text.length > 0, 'empty answer');
      const stats = await last.locator('[data-testid="message-stats"]').textContent();
      check(/TTFT \d+ ms/.test(stats) && /tok\/s/.test(stats), `stats line "${stats}"`);
      noPageErrors();
    });

    await step('stop ends a long generation (client and server)', async () => {
      await setSetting(page, 'max_tokens', '4000');
      await sendAndWatch(page, 'Write a very long story.', { until: 'started' });
      const last = assistantMessages(page).last();
      const content = last.locator('[data-testid="message-content"]');
      await waitUntil(page, 'the long answer did not start streaming', () => {
        const all = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
        const c = all[all.length - 1].querySelector('[data-testid="message-content"]');
        return !c.querySelector('.typing') && c.textContent.length > 20;
      }, null, 60_000);
      await page.click('[data-testid="stop"]');
      await waitUntil(page, 'Stop did not stop the answer', lastAnswerIs, 'stopped', 5_000);
      const n1 = (await content.textContent()).length;
      await sleep(1500);
      const n2 = (await content.textContent()).length;
      check(n1 === n2, `text kept growing after stop (${n1} -> ${n2})`);
      check(await page.locator('[data-testid="send"]').isVisible(), 'send button not back');
      check(/stopped/.test(await last.locator('[data-testid="message-stats"]').textContent()),
            'stopped answer not marked');
      // The closed connection must cancel the request inside the server too.
      const deadline = Date.now() + 15_000;
      let running = null;
      while (Date.now() < deadline) {
        running = await metricsValue(base, 'vllm:num_requests_running');
        if (running === 0) break;
        await sleep(250);
      }
      check(running === 0, `server still runs the stopped request (running=${running})`);
    });

    await step('regenerate replaces the last answer', async () => {
      await setSetting(page, 'max_tokens', '16');
      const count = await assistantMessages(page).count();
      await page.locator('[data-testid="regenerate"]:visible').last().click();
      await waitUntil(page, 'the regenerated answer did not finish', lastAnswerIs, 'done',
                      120_000);
      check(await assistantMessages(page).count() === count, 'regenerate added a message');
      const text = await assistantMessages(page).last()
          .locator('[data-testid="message-content"]').textContent();
      check(text.length > 0, 'regenerated answer is empty');
    });

    await step('errors from the server are shown (HTTP error and mid-stream error)', async () => {
      await page.route('**/v1/chat/completions', (route) => route.fulfill({
        status: 400, contentType: 'application/json',
        body: JSON.stringify({ error: { message: 'prompt is too long (test)',
                                        type: 'invalid_request_error' } }),
      }));
      await sendAndWatch(page, 'this one fails');
      let err = await assistantMessages(page).last().locator('[data-testid="message-error"]');
      check(/prompt is too long \(test\)/.test(await err.textContent()),
            `HTTP error not shown: "${await err.textContent()}"`);
      await page.unroute('**/v1/chat/completions');
      await page.route('**/v1/chat/completions', (route) => route.fulfill({
        status: 200, contentType: 'text/event-stream',
        body: 'data: {"choices":[{"index":0,"delta":{"content":"partial"}}]}\n\n' +
              'data: {"error":{"message":"engine failed (test)"}}\n\n',
      }));
      await page.locator('[data-testid="regenerate"]:visible').last().click();
      await waitUntil(page, 'a mid-stream error was not shown', lastAnswerIs, 'error', 10_000);
      const last = assistantMessages(page).last();
      err = last.locator('[data-testid="message-error"]');
      check(/engine failed \(test\)/.test(await err.textContent()), 'stream error not shown');
      check((await last.locator('[data-testid="message-content"]').textContent()) === 'partial',
            'partial text before the stream error was lost');
      await page.unroute('**/v1/chat/completions');
      noPageErrors();
    });

    await step('conversations: new, switch, persist, delete', async () => {
      const list = page.locator('[data-testid="conversation"]');
      const before = await list.count();
      const firstId = await page.locator('[data-testid="conversation"].current')
          .getAttribute('data-id');
      const firstMessages = await page.locator('[data-testid="message"]').count();
      await page.click('[data-testid="new-chat"]');
      check(await list.count() === before + 1, 'new chat not listed');
      check(await page.locator('[data-testid="message"]').count() === 0, 'new chat not empty');
      await sendAndWatch(page, 'Second conversation');
      await page.reload();
      check(await list.count() === before + 1, 'conversations lost on reload');
      check(await page.locator('[data-testid="message"]').count() === 2,
            'current conversation not restored after reload');
      await page.locator(`[data-testid="conversation"][data-id="${firstId}"] .conversation-open`)
          .click();
      check(await page.locator('[data-testid="message"]').count() === firstMessages,
            'switching back did not restore the first conversation');
      const secondId = await list.first().getAttribute('data-id');
      check(secondId !== firstId, 'newest conversation is not listed first');
      await page.locator(`[data-testid="conversation"][data-id="${secondId}"] ` +
                         '[data-testid="conversation-delete"]').click();
      check(await list.count() === before, 'delete did not remove the conversation');
      await page.reload();
      check(await list.count() === before, 'deleted conversation came back after reload');
    });

    await step('chat screenshot', async () => {
      await openSettings(page);
      await setSetting(page, 'max_tokens', '48');
      await sendAndWatch(page, 'Explain batching in **one** paragraph.');
      fs.mkdirSync(opts.screenshots, { recursive: true });
      await page.screenshot({ path: path.join(opts.screenshots, 'chat.png') });
    });

    await step('dashboard charts update live (with load from the openai client)', async () => {
      const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
      const load = async () => {
        const stream = await client.chat.completions.create({
          model: props.model, max_tokens: 48, stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'Count to twenty.' }],
        });
        let text = '';
        let usage = null;
        for await (const chunk of stream) {
          const delta = chunk.choices[0] && chunk.choices[0].delta.content;
          if (delta) text += delta;
          if (chunk.usage) usage = chunk.usage;
        }
        check(text.length > 0, 'openai client: empty streamed answer');
        check(usage && usage.completion_tokens > 0, 'openai client: no usage chunk');
      };
      await page.goto(`${base}/dashboard.html`);
      const ids = ['requests', 'batch', 'kv', 'tokens', 'ttft', 'tpot'];
      const points = async () => Promise.all(ids.map(async (id) =>
        Number(await page.getAttribute(`[data-testid="chart-${id}"]`, 'data-points'))));
      await waitUntil(page, 'the dashboard drew no points', () => Number(document.querySelector(
          '[data-testid="chart-requests"]').getAttribute('data-points')) >= 2, null, 10_000);
      const loads = Promise.all([load(), load(), load()]);
      loads.catch(() => {});  // awaited below; this only keeps an early failure from crashing
      const p1 = await points();
      await sleep(3500);
      const p2 = await points();
      ids.forEach((id, k) => check(p2[k] > p1[k],
                                   `chart ${id} did not update (${p1[k]} -> ${p2[k]})`));
      await loads;
      await sleep(1500);
      for (const [id, series] of [['requests', 'running'], ['tokens', 'gen_tps'],
                                  ['batch', 'cap']]) {
        check(await page.locator(`[data-testid="chart-${id}"] path[data-series="${series}"]`)
            .count() === 1, `chart ${id} draws no ${series} line`);
      }
      const status = await page.textContent('[data-testid="poll-status"]');
      check(/updated/.test(status), `dashboard poll status "${status}"`);
      await page.screenshot({ path: path.join(opts.screenshots, 'dashboard.png'), fullPage: true });
      noPageErrors();
    });
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (server) await stopServer(server.child);
  }
  return results.length;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`ui_test: ${e.message}`);
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
