// Starts `brisk serve` for a test and stops it afterwards. The server prints
// "listening on http://HOST:PORT" first and "ready" once the model is loaded.
import { spawn } from 'node:child_process';

// Command line: --brisk BIN --model GGUF [--tool-model GGUF] [--score-model GGUF]
// [--serve-arg ARG]...
export function parseArgs(argv = process.argv.slice(2)) {
  const o = { serveArgs: [] };
  for (let i = 0; i < argv.length; i++) {
    const v = () => argv[++i];
    if (argv[i] === '--brisk') o.brisk = v();
    else if (argv[i] === '--model') o.model = v();
    else if (argv[i] === '--tool-model') o.toolModel = v();
    else if (argv[i] === '--score-model') o.scoreModel = v();
    else if (argv[i] === '--serve-arg') o.serveArgs.push(v());
    else if (argv[i].startsWith('--test')) continue;  // node:test's own flags
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!o.brisk || !o.model) throw new Error('usage: --brisk BIN --model GGUF');
  return o;
}

export async function startServer({ brisk, model, args = [], timeoutMs = 60000 }) {
  const proc = spawn(brisk, ['serve', '-m', model, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), timeoutMs);
    let base = null;
    proc.stdout.on('data', (d) => {
      stdout += d;
      const m = stdout.match(/listening on (http:\/\/[^\s]+)/);
      if (m) base = m[1];
      if (base && /\nready\n/.test(stdout)) {
        clearTimeout(timer);
        resolve(base);
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before it was ready:\n${stderr}`));
    });
  });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    url,
    proc,
    stderr: () => stderr,
    exited,
    // SIGTERM drains; the exit status is returned.
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

// Reads an SSE body into its `data:` payloads (strings, "[DONE]" included).
export async function readSse(response) {
  const text = await response.text();
  return text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
}
