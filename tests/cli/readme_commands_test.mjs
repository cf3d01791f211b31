// Every `brisk ...` command README.md shows, run as written against the build (issue 32): the
// rows of "Using the binary"'s command table and the quick start's lines, read from README.md at
// test time, so an edit that breaks a documented command fails here. A table row is a synopsis:
// `[...]` groups are kept with their first alternative, and each placeholder (MODEL, TEXT, FILE,
// ...) becomes a value this test owns; a placeholder it does not know fails the test, so a new
// row needs a value here. A command that starts a server runs until its "ready" line, then stops.
//
//   node tests/cli/readme_commands_test.mjs --brisk build/src/brisk --readme README.md \
//        --model tests/data/golden/tiny-untied-q4_k_m.gguf --report tests/data/bench/sample_report.json
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  assert.ok(i > 0 && process.argv[i + 1], `--${name} is required`);
  return path.resolve(process.argv[i + 1]);
};
const brisk = arg('brisk');
const readme = fs.readFileSync(arg('readme'), 'utf8');
const model = arg('model');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-readme-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
// Reports and any default model go to a private BRISK_HOME, not the user's.
const env = { ...process.env, BRISK_HOME: path.join(tmp, 'home') };

// The commands, as README.md writes them.
function tableCommands() {
  const rows = readme.split('\n').filter((l) => l.startsWith('| `brisk '));
  return rows.map((l) => l.match(/^\| `((?:[^`\\]|\\.)*)` \|/)[1].replace(/\\\|/g, '|'));
}
function quickStartCommands() {
  const block = readme.match(/## Quick start\n+```sh\n([\s\S]*?)```/);
  assert.ok(block, 'README.md has a "## Quick start" section with a ```sh block');
  return block[1].split('\n').map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => /^\S*brisk\s/.test(l)).map((l) => l.replace(/^\S*brisk/, 'brisk'));
}

// Placeholder values: "flag PLACEHOLDER" pairs first (S is a shape after --shape, seconds after
// --duration), then bare placeholders. URL is filled in once the test's server is up.
const files = {};
const values = {
  pairs: {
    '-p TEXT': '-p hello', '-n N': '-n 8', '-s SYSTEM': '-s brief', '-o FILE': null,
    '--shape S': '--shape tiny', '--type T': '--type q8_0', '--seed N': '--seed 7',
    '--pooling P': '--pooling none', '-o DIR': null, '--port 8080': '--port 0',
    '--duration S': '--duration 2', '--out DIR': null, '--url URL': null,
    '--slo ttft_p99:MS,tpot_p99:MS': '--slo ttft_p99:60000,tpot_p99:60000',
  },
  words: { MODEL: model, 'NAME|URL': null, IN: null, OUT: null, TYPE: 'q8_0',
    'F16.gguf': null, 'A.gguf': null, 'B.gguf': null, 'FILE.json': null },
};
let fresh = 0;
const newPath = (ext) => path.join(tmp, `out${++fresh}${ext}`);

function instantiate(synopsis) {
  // Optional groups: kept, first alternative ("[-m MODEL | --url URL]" -> "-m MODEL").
  let s = synopsis.replace(/\[([^\[\]]*)\]/g, (_, inner) => inner.split('|')[0].trim());
  const dynamic = { '-o FILE': () => `-o ${newPath('.bin')}`, '-o DIR': () => `-o ${newPath('')}`,
    '--out DIR': () => `--out ${newPath('')}`, '--url URL': () => `--url ${files.url}` };
  for (const [k, v] of Object.entries(values.pairs)) {
    if (s.includes(k)) s = s.split(k).join(v ?? dynamic[k]());
  }
  const words = { ...values.words, 'NAME|URL': files.pullUrl, IN: files.f16, OUT: newPath('.gguf'),
    'F16.gguf': files.f16, 'A.gguf': files.q8, 'B.gguf': files.q4, 'FILE.json': files.report };
  const argv = s.split(/\s+/).slice(1).map((w) => (w in words ? words[w] : w));
  const unknown = argv.filter((w) => /[A-Z]{2,}/.test(w) && !w.startsWith('/'));
  assert.deepEqual(unknown, [], `"${synopsis}": placeholders this test has no value for`);
  return argv;
}

// Runs to the end (or, for a server, to its ready line); resolves {code, out, url}.
function run(argv, { input = '', server = false, timeoutMs = 300000 } = {}) {
  return new Promise((resolve) => {
    const p = spawn(brisk, argv, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    const onData = (d) => {
      out += d;
      if (server && /^ready$/m.test(out)) {
        clearTimeout(timer);
        resolve({ code: 0, out, proc: p, url: out.match(/listening on (http:\S+)/)[1] });
      }
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, out }); });
    // A command that never reads stdin may exit before the line is written: not an error.
    p.stdin.on('error', () => {});
    p.stdin.end(input);
  });
}

const servers = [];
let fileServer;
before(async () => {
  // Inputs the synopses name: an F16 reference and two quantized copies of one synthetic model, a
  // bench report to re-render, a model file to pull from a local HTTP server.
  files.f16 = path.join(tmp, 'ref-f16.gguf');
  files.q8 = path.join(tmp, 'a-q8_0.gguf');
  files.q4 = path.join(tmp, 'b-q4_k_m.gguf');
  for (const [f, type] of [[files.f16, 'f16'], [files.q8, 'q8_0'], [files.q4, 'q4_k_m']]) {
    const r = spawnSync(brisk, ['synth', '--shape', 'tiny', '--type', type, '-o', f], { env });
    assert.equal(r.status, 0, String(r.stderr));
  }
  files.report = path.join(tmp, 'report', 'report.json');
  fs.mkdirSync(path.dirname(files.report));
  fs.copyFileSync(arg('report'), files.report);
  fileServer = http.createServer((req, res) => fs.createReadStream(model).pipe(res));
  await new Promise((r) => fileServer.listen(0, '127.0.0.1', r));
  files.pullUrl = `http://127.0.0.1:${fileServer.address().port}/tiny.gguf`;
  // `bench http --url URL` needs a server: the table's own `brisk serve` row.
  const serve = tableCommands().find((c) => /^brisk serve/.test(c));
  assert.ok(serve, 'the table has a `brisk serve` row');
  const s = await run(instantiate(serve), { server: true });
  assert.ok(s.proc, `serve did not print ready:\n${s.out}`);
  servers.push(s.proc);
  files.url = s.url;
});
after(() => {
  for (const p of servers) p.kill('SIGTERM');
  fileServer?.close();
});

test('the README command table has the commands it had', () => {
  const names = tableCommands().map((c) => c.split(/\s+/).slice(0, 2).join(' '));
  for (const c of ['brisk info', 'brisk run', 'brisk chat', 'brisk tokenize', 'brisk serve',
    'brisk bench', 'brisk synth', 'brisk quantize', 'brisk pull', 'brisk tune', 'brisk logits'])
    assert.ok(names.includes(c), `no ${c} row in the table`);
});

test('every command of the table runs as written', async () => {
  for (const synopsis of tableCommands()) {
    const argv = instantiate(synopsis);
    const server = argv[0] === 'serve';
    // --decode reads what tokenize prints; everything else that reads stdin takes a line of text.
    const input = argv.includes('--decode') ? '{"text":"hello","ids":[101]}\n' : 'hello\n';
    const r = await run(argv, { input, server });
    r.proc?.kill('SIGTERM');
    assert.equal(r.code, 0, `${synopsis}\n  ran as: brisk ${argv.join(' ')}\n${r.out.slice(-2000)}`);
  }
});

test('the quick start serves the web UI at the URL it prints', async () => {
  const lines = quickStartCommands();
  assert.ok(lines.some((l) => /^brisk serve\b/.test(l)), `no brisk serve line in ${lines}`);
  for (const line of lines) {
    // The embedded default would be generated first (minutes): the test's model instead, and a
    // free port so parallel tests never collide.
    const argv = [...instantiate(line), '-m', model, ...(/^brisk serve\b/.test(line) ? ['--port', '0'] : [])];
    const r = await run(argv, { server: argv[0] === 'serve' });
    if (r.proc) servers.push(r.proc);
    assert.equal(r.code, 0, `${line}\n${r.out}`);
    if (!r.url) continue;
    const page = await fetch(r.url + '/');
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i);
  }
});
