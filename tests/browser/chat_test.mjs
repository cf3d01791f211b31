#!/usr/bin/env node
// Browser test of the chat page's conversation features (issue 32), at 1280x800 and at phone
// size 390x844: recovery from a failed (too long) message by edit-and-resend, answer branches,
// copy, export/import round trip, KaTeX math, <think> reasoning, undo of deletes, network
// errors, stored-data migration, the theme toggle, and a phone layout without horizontal
// scroll in which every control can be tapped.
//
//   node tests/browser/chat_test.mjs --brisk build/src/brisk --model M.gguf \
//       --serve-arg --max-model-len --serve-arg 256 [--screenshots DIR] [--url URL]
//
// The server must run with a small context (--max-model-len 256): the test's "too long"
// prompt has to exceed it.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

import {
  check, CheckError, parseArgs, sleep, startServer, stopServer, waitUntil,
} from './harness.mjs';
import { fixtureConversation, pageChecks } from './chat_checks.mjs';

const results = [];
const answers = (page) => page.locator('[data-testid="message"][data-role="assistant"]');
const users = (page) => page.locator('[data-testid="message"][data-role="user"]');
const lastAnswerState = () => {
  const all = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
  return all.length ? all[all.length - 1].dataset.state : null;
};

async function waitAnswer(page, state, what, timeoutMs = 60_000) {
  await waitUntil(page, `${what}: the last answer did not end in state ${state}`,
                  (s) => {
                    const all = document.querySelectorAll(
                        '[data-testid="message"][data-role="assistant"]');
                    return all.length > 0 && all[all.length - 1].dataset.state === s;
                  }, state, timeoutMs);
  const got = await page.evaluate(lastAnswerState);
  check(got === state, `${what}: state ${got}`);
}

async function send(page, text) {
  await page.fill('[data-testid="message-input"]', text);
  await page.click('[data-testid="send"]');
}

const phone = (page) => page.viewportSize().width < 800;

async function openDrawer(page) {
  if (phone(page) && !(await page.evaluate(() =>
    document.body.classList.contains('drawer-open')))) {
    await page.click('[data-testid="drawer-toggle"]');
    await sleep(250);  // the slide-in transition
  }
}

async function closeDrawer(page) {
  if (await page.evaluate(() => document.body.classList.contains('drawer-open'))) {
    await page.mouse.click(page.viewportSize().width - 10, page.viewportSize().height / 2);
    await sleep(250);
  }
}

async function setSettings(page, values) {
  await page.click('[data-testid="settings-toggle"]');
  for (const [k, v] of Object.entries(values)) {
    const sel = `[data-testid="setting-${k}"]`;
    if (await page.locator(sel).evaluate((e) => e.tagName) === 'SELECT') {
      await page.selectOption(sel, v);
    } else {
      await page.fill(sel, v);
    }
  }
  await page.click('[data-testid="settings-close"]');
}

// The stored conversation with `id` (from localStorage, as the page saved it).
const storedConversation = (page, id) => page.evaluate((id) =>
  JSON.parse(localStorage.getItem('brisk.conversations.v2')).find((c) => c.id === id), id);
const currentId = (page) => page.evaluate(() => JSON.parse(localStorage.getItem('brisk.current.v1')));

async function download(page, click) {
  const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
  return JSON.parse(fs.readFileSync(await dl.path(), 'utf8'));
}

async function importJson(page, data, dir, name) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof data === 'string' ? data : JSON.stringify(data));
  await page.setInputFiles('[data-testid="import-file"]', file);
}

async function runViewport(browser, base, props, viewport, opts, tmp) {
  const tag = `${viewport.width}x${viewport.height}`;
  const context = await browser.newContext({ viewport, hasTouch: viewport.width < 800,
                                             acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const errors = [];
  const external = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) {
      errors.push(`console error: ${m.text()}`);
    }
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith('blob:') &&
        !r.url().startsWith('data:')) external.push(r.url());
  });
  const step = async (name, fn) => {
    const t = Date.now();
    try {
      await fn();
      results.push(name);
      console.log(`ok ${results.length} - [${tag}] ${name} (${Date.now() - t} ms)`);
    } catch (e) {
      console.log(`not ok ${results.length + 1} - [${tag}] ${name}`);
      if (opts.screenshots) {
        fs.mkdirSync(opts.screenshots, { recursive: true });
        await page.screenshot({ path: path.join(opts.screenshots, `chat-fail-${tag}.png`) })
            .catch(() => {});
      }
      throw e;
    }
  };

  await page.goto(`${base}/`);
  await waitUntil(page, 'model name not shown', (m) =>
    document.getElementById('model-name').textContent === m, props.model, 15_000);
  await setSettings(page, { max_tokens: '8' });

  await step('a too-long message fails once, then edit-and-resend recovers', async () => {
    const long = 'alpha beta gamma delta '.repeat(120);
    await send(page, long);
    await waitAnswer(page, 'error', 'too-long prompt');
    const failed = answers(page).last();
    const err = await failed.locator('[data-testid="message-error"]').textContent();
    check(/max_model_len|context|too long|token/i.test(err), `unclear error "${err}"`);
    check(await page.locator('[data-testid="message-error"]:visible').count() === 1,
          'the error is shown more than once');
    check(await failed.locator('[data-testid="message-content"]').isHidden(),
          'an empty answer bubble is shown above the error');
    // Edit the failed question into a short one: a sibling branch, answered.
    const user = users(page).last();
    await user.locator('[data-testid="edit-message"]').click();
    await user.locator('[data-testid="edit-input"]').fill('Hello there');
    await user.locator('[data-testid="edit-save"]').click();
    await waitAnswer(page, 'done', 'edited message');
    check(await users(page).last().locator('[data-testid="message-content"]').textContent() ===
          'Hello there', 'edited text not shown');
    check(await users(page).last().locator('[data-testid="branch-label"]').textContent() ===
          '2 / 2', 'the edit is not a second branch of the question');
    // The next message succeeds, and the failed text is not sent again.
    const req = page.waitForRequest((r) => r.url().endsWith('/v1/chat/completions'));
    await send(page, 'And a follow-up');
    const body = JSON.parse((await req).postData());
    check(!JSON.stringify(body.messages).includes('alpha beta gamma'),
          'the failed message is still sent');
    await waitAnswer(page, 'done', 'follow-up');
  });

  await step('after a failed message the next one succeeds; the failed one can be deleted',
             async () => {
    await send(page, 'zeta eta theta '.repeat(150));
    await waitAnswer(page, 'error', 'second too-long prompt');
    const req = page.waitForRequest((r) => r.url().endsWith('/v1/chat/completions'));
    await send(page, 'Short again');
    const body = JSON.parse((await req).postData());
    check(!JSON.stringify(body.messages).includes('zeta eta'),
          'the failed message is sent with the next one (the conversation is poisoned)');
    await waitAnswer(page, 'done', 'message after a failed one');
    const n = await users(page).count();
    // Deleting the failed question removes it and what follows it; Undo brings all back.
    await users(page).nth(n - 2).locator('[data-testid="delete-message"]').click();
    check(await users(page).count() === n - 2, 'delete did not remove the failed message');
    await page.click('[data-testid="toast-undo"]');
    check(await users(page).count() === n, 'undo did not restore the messages');
    await users(page).nth(n - 2).locator('[data-testid="delete-message"]').click();
    check(await users(page).count() === n - 2, 'second delete failed');
  });

  await step('two regenerations give "3 / 3"; going back shows the first answer', async () => {
    const last = () => answers(page).last();
    const first = await last().locator('[data-testid="message-content"]').textContent();
    for (let k = 0; k < 2; k++) {
      await last().locator('[data-testid="regenerate"]').click();
      await waitAnswer(page, 'done', `regeneration ${k + 1}`);
    }
    const label = last().locator('[data-testid="branch-label"]');
    check(await label.textContent() === '3 / 3', `branch label "${await label.textContent()}"`);
    await last().locator('[data-testid="branch-prev"]').click();
    await last().locator('[data-testid="branch-prev"]').click();
    check(await label.textContent() === '1 / 3', `after two back: "${await label.textContent()}"`);
    const shown = await last().locator('[data-testid="message-content"]').textContent();
    check(shown === first, `1 / 3 shows "${shown}", not the first answer "${first}"`);
    check(await last().locator('[data-testid="branch-prev"]').isDisabled(), 'prev at 1 / 3');
  });

  await step('copy puts the whole message on the clipboard', async () => {
    const id = await answers(page).last().getAttribute('data-id');
    const conv = await storedConversation(page, await currentId(page));
    await answers(page).last().locator('[data-testid="copy-message"]').click();
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    check(clip === conv.nodes[id].content, `clipboard "${clip}" is not the message`);
    await users(page).last().locator('[data-testid="copy-message"]').click();
    const clip2 = await page.evaluate(() => navigator.clipboard.readText());
    check(clip2 === 'And a follow-up', `user message copy gave "${clip2}"`);
  });

  await step('export, delete, import: the same JSON; bad files change nothing', async () => {
    const id = await currentId(page);
    await openDrawer(page);
    const row = page.locator(`[data-testid="conversation"][data-id="${id}"]`);
    const exported = await download(page, () =>
      row.locator('[data-testid="conversation-export"]').click());
    check(exported.conversations.length === 1 && exported.conversations[0].id === id,
          'export is not that conversation');
    await row.locator('[data-testid="conversation-delete"]').click();
    check(await row.count() === 0, 'delete did not remove the conversation');
    check(!(await page.evaluate(() => localStorage.getItem('brisk.conversations.v2')))
        .includes(id), 'the deleted conversation is still stored');
    await importJson(page, exported, tmp, `export-${tag}.json`);
    await waitUntil(page, 'import did not add the conversation', (id) =>
      !!document.querySelector(`[data-testid="conversation"][data-id="${id}"]`), id, 5000);
    await openDrawer(page);
    const again = await download(page, () => page.locator(
        `[data-testid="conversation"][data-id="${id}"] [data-testid="conversation-export"]`)
        .click());
    check(JSON.stringify(again) === JSON.stringify(exported),
          'export → import → export is not identical');
    const before = await page.evaluate(() => localStorage.getItem('brisk.conversations.v2'));
    for (const [name, bad] of [['notjson.json', '{oops'],
      ['cycle.json', { format: 'brisk.conversations', version: 2, conversations: [{
        ...exported.conversations[0], id: 'x', nodes: { a: { id: 'a', parent: null,
          role: 'user', content: '', children: ['a'], sel: 0 } }, children: ['a'], sel: 0 }] }]]) {
      await importJson(page, bad, tmp, name);
      await waitUntil(page, `no error for a bad import (${name})`, () =>
        /Import failed/.test(document.getElementById('toast').textContent), null, 5000);
    }
    check(await page.evaluate(() => localStorage.getItem('brisk.conversations.v2')) === before,
          'a bad import changed the stored conversations');
    await closeDrawer(page);
  });

  await step('math renders with KaTeX (MathML), not in code; <think> is collapsed', async () => {
    await openDrawer(page);
    await importJson(page, { format: 'brisk.conversations', version: 2,
                             conversations: [fixtureConversation(`math-${tag}`)] },
                     tmp, `math-${tag}.json`);
    await waitUntil(page, 'the math conversation did not open', () =>
      document.querySelectorAll('[data-testid="message"]').length === 2, null, 5000);
    await closeDrawer(page);
    const problems = await page.evaluate(pageChecks);
    check(problems.length === 0, problems.join('\n'));
  });

  await step('no horizontal scroll (drawer closed and open, long code block)', async () => {
    const over = () => page.evaluate(() =>
      document.scrollingElement.scrollWidth - window.innerWidth);
    check(await over() <= 0, `page ${await over()} px wider than the window`);
    await openDrawer(page);
    check(await over() <= 0, `drawer open: page ${await over()} px too wide`);
    await closeDrawer(page);
  });

  await step('every visible control is inside the window and not covered', async () => {
    const scopes = [['page', 'body']];
    if (phone(page)) scopes.push(['drawer', '#sidebar']);
    scopes.push(['settings', '#settings-panel']);
    for (const [name, scope] of scopes) {
      if (name === 'drawer') await openDrawer(page);
      if (name === 'settings') await page.click('[data-testid="settings-toggle"]');
      // One pass inside the page (fast): scroll each visible control into view, then ask
      // whether it lies inside the window and whether a tap at its centre reaches it.
      const { checked, problems } = await page.evaluate(({ scope, name }) => {
        const problems = [];
        let checked = 0;
        const all = document.querySelectorAll(
            `${scope} :is(button, a, input, select, textarea, summary)`);
        for (const e of all) {
          if (!e.checkVisibility({ visibilityProperty: true }) || e.getClientRects().length === 0) {
            continue;
          }
          const overlay = e.closest('#sidebar, #settings-panel');
          if (name === 'page' && overlay && getComputedStyle(overlay).position === 'fixed') {
            continue;  // a drawer/panel: checked in its own scope, when open
          }
          e.scrollIntoView({ block: 'center', inline: 'center' });
          const b = e.getBoundingClientRect();
          const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
          const what = `${e.tagName.toLowerCase()}#${e.id}.${e.className} "${
            (e.textContent || e.placeholder || '').trim().slice(0, 20)}" (${
            [b.left, b.top, b.width, b.height].map(Math.round)})`;
          if (b.left < -0.5 || b.top < -0.5 || b.right > innerWidth + 0.5 ||
              b.bottom > innerHeight + 0.5) {
            problems.push(`${name}: ${what} is outside the window`);
          } else if (!hit || !(hit === e || e.contains(hit))) {
            problems.push(`${name}: ${what} is covered by ${
              hit ? `${hit.tagName}.${hit.className}` : 'nothing'}`);
          }
          checked++;
        }
        return { checked, problems };
      }, { scope, name });
      check(problems.length === 0, problems.join('\n'));
      check(checked >= (name === 'page' ? 8 : 4), `${name}: only ${checked} controls checked`);
      if (name === 'drawer') await closeDrawer(page);
      if (name === 'settings') await page.click('[data-testid="settings-close"]');
    }
    if (opts.screenshots) {
      fs.mkdirSync(opts.screenshots, { recursive: true });
      await page.screenshot({ path: path.join(opts.screenshots, `chat-${tag}.png`) });
      await openDrawer(page);
      await page.screenshot({ path: path.join(opts.screenshots, `chat-drawer-${tag}.png`) });
      await closeDrawer(page);
    }
  });

  if (!phone(page)) await desktopOnly(page, step, props);
  check(errors.length === 0, errors.join('\n'));
  check(external.length === 0, `requests left the machine: ${external.join(', ')}`);
  await context.close();
}

// Behaviour that does not depend on the layout: checked once, at desktop size.
async function desktopOnly(page, step, props) {
  await step('network errors: unreachable server; dropped stream keeps the partial answer',
             async () => {
    await page.click('[data-testid="new-chat"]');
    await page.route('**/v1/chat/completions', (r) => r.abort('connectionrefused'));
    await send(page, 'Are you there?');
    await waitAnswer(page, 'error', 'unreachable');
    const err = await answers(page).last().locator('[data-testid="message-error"]').textContent();
    check(/cannot reach the server/.test(err), `unreachable error "${err}"`);
    await page.unroute('**/v1/chat/completions');
    await page.route('**/v1/chat/completions', (r) => r.fulfill({
      status: 200, contentType: 'text/event-stream',
      body: 'data: {"choices":[{"index":0,"delta":{"content":"half an ans"}}]}\n\n',
    }));
    await answers(page).last().locator('[data-testid="regenerate"]').click();
    await waitAnswer(page, 'interrupted', 'dropped stream');
    const last = answers(page).last();
    check(await last.locator('[data-testid="message-content"]').textContent() === 'half an ans',
          'partial answer not kept');
    check(/closed before the answer was complete/.test(await last.locator(
        '[data-testid="message-error"]').textContent()), 'interruption not explained');
    await page.unroute('**/v1/chat/completions');
    // A connection lost mid-answer: the body stream fails as Chromium's does on a reset
    // (reader.read() rejects with TypeError "network error") after some text arrived.
    await page.evaluate(() => {
      window.realFetch = window.fetch;
      window.fetch = async (url, options) => {
        if (!String(url).endsWith('/v1/chat/completions')) return window.realFetch(url, options);
        const enc = new TextEncoder();
        const body = new ReadableStream({
          start(c) {
            c.enqueue(enc.encode('data: {"choices":[{"index":0,"delta":{"content":"cut "}}]}\n\n'));
            setTimeout(() => c.error(new TypeError('network error')), 50);
          },
        });
        return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
      };
    });
    await answers(page).last().locator('[data-testid="regenerate"]').click();
    await waitAnswer(page, 'interrupted', 'connection lost mid-answer', 10_000);
    await page.evaluate(() => (window.fetch = window.realFetch));
    check(await answers(page).last().locator('[data-testid="message-content"]').textContent() ===
          'cut', 'the partial answer was lost');
    check(/dropped mid-answer \(network error\)/.test(await answers(page).last()
        .locator('[data-testid="message-error"]').textContent()), 'lost connection not explained');
  });

  await step('sampling settings and the chat system prompt are sent', async () => {
    await setSettings(page, { top_k: '20', min_p: '0.05', seed: '7', stop: 'END\nSTOP',
                              json_mode: 'on' });
    await page.click('[data-testid="settings-toggle"]');
    await page.fill('[data-testid="conv-system_prompt"]', 'You are terse.');
    await page.click('[data-testid="settings-close"]');
    const req = page.waitForRequest((r) => r.url().endsWith('/v1/chat/completions'));
    await send(page, 'Give JSON');
    const body = JSON.parse((await req).postData());
    check(body.top_k === 20 && body.min_p === 0.05 && body.seed === 7 &&
          JSON.stringify(body.stop) === '["END","STOP"]' &&
          body.response_format && body.response_format.type === 'json_object',
          `settings not sent: ${JSON.stringify(body)}`);
    check(body.messages[0].role === 'system' && body.messages[0].content === 'You are terse.',
          'chat system prompt not sent first');
    await waitAnswer(page, 'done', 'json answer');
    await setSettings(page, { top_k: '', min_p: '', seed: '', stop: '', json_mode: '' });
  });

  await step('context meter counts tokens of max_model_len', async () => {
    const meter = page.locator('[data-testid="context-meter"]');
    await waitUntil(page, 'meter shows no usage', () => {
      const m = document.querySelector('[data-testid="context-meter"]');
      return Number(m.dataset.used) > 0;
    }, null, 5000);
    const max = String(props.max_model_len);
    check(await meter.getAttribute('data-max') === max, 'meter max is not max_model_len');
    check(new RegExp(`context \\d+ / ${max} tokens`).test(await meter.textContent()),
          `meter label "${await meter.textContent()}"`);
  });

  await step('long paste becomes an attachment and is sent ahead of the text', async () => {
    const long = 'line of pasted text\n'.repeat(150);
    await page.evaluate((t) => {
      const dt = new DataTransfer();
      dt.setData('text/plain', t);
      document.getElementById('message-input').dispatchEvent(
          new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    }, long);
    check(await page.locator('[data-testid="attachment-chip"]').count() === 1, 'no chip');
    check(await page.inputValue('[data-testid="message-input"]') === '', 'paste went in');
    const req = page.waitForRequest((r) => r.url().endsWith('/v1/chat/completions'));
    await send(page, 'Summarise');
    const body = JSON.parse((await req).postData());
    const last = body.messages.at(-1).content;
    check(last.startsWith('pasted-1.txt:\n```\nline of pasted text') &&
          last.endsWith('Summarise'), `attachment not sent: ${last.slice(0, 80)}`);
    check(await page.locator('[data-testid="attachment-chip"]').count() === 0,
          'the attachment stayed in the composer after sending');
    // Files: text is attached, binary is refused with a message.
    await page.setInputFiles('[data-testid="attach-file"]', [
      { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Notes\nsome text') },
    ]);
    check(/notes\.md \(17 chars\)/.test(await page.locator('[data-testid="attachment-chip"]')
        .textContent()), 'text file not attached');
    await page.setInputFiles('[data-testid="attach-file"]', [
      { name: 'blob.bin', mimeType: 'application/octet-stream', buffer: Buffer.from([1, 0, 2]) },
    ]);
    await waitUntil(page, 'no message for a binary file', () =>
      /blob\.bin is not a text file/.test(document.getElementById('toast').textContent),
      null, 5000);
    check(await page.locator('[data-testid="attachment-chip"]').count() === 1,
          'binary file attached');
    await page.locator('[data-testid="attachment-chip"] button').click();
    check(await page.locator('[data-testid="attachment-chip"]').count() === 0, 'chip not removed');
    // (over the test server's small context: the answer is an error, which is fine here)
    await waitUntil(page, 'the attachment request did not end', () => !document.querySelector(
        '[data-testid="message"][data-state="streaming"]'), null, 30_000);
  });

  await step('theme toggle overrides the OS and persists', async () => {
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme || '');
    await page.click('[data-testid="theme-toggle"]');
    const t1 = await theme();
    check(t1 === 'dark' || t1 === 'light', `no theme set (${t1})`);
    const bg1 = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.click('[data-testid="theme-toggle"]');
    const bg2 = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    check(bg1 !== bg2 && await theme() !== t1, 'toggle did not change the colours');
    await page.reload();
    check(await theme() !== t1 && await theme() !== '', 'theme not kept after reload');
  });

  await step('stored v1 conversations are migrated; unreadable data is kept aside', async () => {
    await page.evaluate(() => {
      localStorage.removeItem('brisk.conversations.v2');
      localStorage.setItem('brisk.conversations.v1', JSON.stringify([{ id: 'old1', title: 'Old',
        updated: 5, messages: [{ role: 'user', content: 'old question' },
                               { role: 'assistant', content: 'old answer' }] }]));
      localStorage.setItem('brisk.current.v1', JSON.stringify('old1'));
    });
    await page.reload();
    const texts = await page.locator('[data-testid="message-content"]').allTextContents();
    check(JSON.stringify(texts) === '["old question","old answer"]',
          `v1 conversation not migrated: ${JSON.stringify(texts)}`);
    await page.evaluate(() => localStorage.setItem('brisk.conversations.v2',
                                                   '[{"id":"bad","nodes":7}]'));
    await page.reload();
    const err = await page.textContent('[data-testid="store-error"]');
    check(await page.locator('[data-testid="store-error"]').isVisible() &&
          /could not be read/.test(err), `no error for unreadable data: "${err}"`);
    const kept = await page.evaluate(() => Object.keys(localStorage)
        .filter((k) => k.startsWith('brisk.conversations.unreadable.'))
        .map((k) => localStorage.getItem(k)));
    check(kept.some((v) => v.includes('"nodes":7')), 'unreadable data was not kept');
  });
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
    // Screenshots only where asked for (the shared default is docs/screenshots, which holds the
    // README's pictures).
    if (!process.argv.includes('--screenshots')) opts.screenshots = null;
  } catch (e) {
    console.error(`chat_test: ${e.message}`);
    process.exit(2);
  }
  let server = null;
  let browser = null;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-chat-'));
  try {
    let base = opts.url;
    if (!base) {
      server = await startServer(opts);
      base = server.url;
    }
    const props = await (await fetch(`${base}/props`)).json();
    check(props.max_model_len <= 512, `run the server with a small --max-model-len (got ${
      props.max_model_len}): the too-long prompt must exceed it`);
    browser = await chromium.launch({
      executablePath: opts.chromium, headless: !opts.headed,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
             '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      await runViewport(browser, base, props, viewport, opts, tmp);
    }
    console.log(`${results.length} passed, 0 failed`);
  } catch (e) {
    console.error(`FAIL: ${e instanceof CheckError ? e.message : e.stack || e}`);
    console.log(`${results.length} passed, 1 failed`);
    process.exitCode = 1;
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (server) await stopServer(server.child);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main();
