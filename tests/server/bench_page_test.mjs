// GET /bench over a real socket (issue 8): `brisk serve` finds `brisk bench`'s latest report in
// $BRISK_HOME/bench/latest/ by default (or --bench-dir), reads it again on every request, and the
// report's strict headers reach the client intact. The route's details are unit-tested in
// tests/unit/server/bench_route_test.cc; this checks the wiring that only a running server has.
//
//   node tests/server/bench_page_test.mjs --brisk build/src/brisk --model M.gguf
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';

import { parseArgs, startServer } from './lib/brisk_server.mjs';

const opts = parseArgs();
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'";

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-bench-page-'));
}

function writeReport(benchDir, name, text) {
  fs.mkdirSync(path.join(benchDir, 'latest'), { recursive: true });
  fs.writeFileSync(path.join(benchDir, 'latest', name), text);
}

describe('bench report page', () => {
  test('default folder is $BRISK_HOME/bench, re-read per request, headers on the wire', async () => {
    const home = tempDir();
    const saved = process.env.BRISK_HOME;
    process.env.BRISK_HOME = home;  // the spawned server inherits it
    let server;
    try {
      server = await startServer({ brisk: opts.brisk, model: opts.model });
    } finally {
      if (saved === undefined) delete process.env.BRISK_HOME;
      else process.env.BRISK_HOME = saved;
    }
    try {
      const none = await fetch(`${server.url}/bench`);
      assert.equal(none.status, 404);
      assert.equal(none.headers.get('content-security-policy'), CSP);
      assert.match(await none.text(), /No benchmark report yet — run `brisk bench`/);

      const report = '<!doctype html><title>bench</title><p>TTFT p99 — 12.5 ms</p>' +
                     '<svg width="10" height="10"><rect width="10" height="10"/></svg>\n';
      writeReport(path.join(home, 'bench'), 'report.html', report);
      const r = await fetch(`${server.url}/bench`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(r.headers.get('content-security-policy'), CSP);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.equal(await r.text(), report);

      const head = await fetch(`${server.url}/bench`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-security-policy'), CSP);
      assert.equal(await head.text(), '');

      // A new bench run replaces the file: the next request shows it without a restart.
      writeReport(path.join(home, 'bench'), 'report.html', '<p>second run</p>');
      assert.equal(await (await fetch(`${server.url}/bench`)).text(), '<p>second run</p>');

      const json = { runs: [{ concurrency: 4, ttft_ms: { p99: 12.5 } }] };
      writeReport(path.join(home, 'bench'), 'report.json', JSON.stringify(json));
      const j = await fetch(`${server.url}/bench/latest.json`);
      assert.equal(j.status, 200);
      assert.equal(j.headers.get('content-type'), 'application/json');
      assert.deepEqual(await j.json(), json);
    } finally {
      await server.stop();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  test('--bench-dir, and no API key needed for the report (like the UI pages)', async () => {
    const dir = tempDir();
    writeReport(dir, 'report.html', '<p>from --bench-dir</p>');
    const server = await startServer({ brisk: opts.brisk, model: opts.model,
                                       args: ['--bench-dir', dir, '--api-key', 'k3y'] });
    try {
      const r = await fetch(`${server.url}/bench`);
      assert.equal(r.status, 200);
      assert.equal(await r.text(), '<p>from --bench-dir</p>');
      assert.equal((await fetch(`${server.url}/`)).status, 200);
      assert.equal((await fetch(`${server.url}/metrics`)).status, 401);
      const missing = await fetch(`${server.url}/bench/latest.json`);
      assert.equal(missing.status, 404);
      assert.equal((await missing.json()).error.type, 'not_found_error');
    } finally {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
