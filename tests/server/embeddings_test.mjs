// The pooling routes with real clients (issue 30): /v1/embeddings driven by the official `openai`
// npm client (single, batch, dimensions, base64 — the SDK's default — token inputs, errors), and
// /v1/rerank, /rerank with fetch (Jina/Cohere shape, sorted, top_n, return_documents), on the
// tiny synthetic Qwen3 embedding model and reranker; a chat model refuses embeddings with a 400
// naming --pooling, and serves them once the operator opts in with --pooling last.
//
//   node tests/server/embeddings_test.mjs --brisk build/src/brisk --model EMB.gguf
//     --rerank-model RERANK.gguf --chat-model CHAT.gguf
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';

import { startServer } from './lib/brisk_server.mjs';

function parseArgs(argv = process.argv.slice(2)) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const v = () => argv[++i];
    if (argv[i] === '--brisk') o.brisk = v();
    else if (argv[i] === '--model') o.model = v();
    else if (argv[i] === '--rerank-model') o.rerankModel = v();
    else if (argv[i] === '--chat-model') o.chatModel = v();
    else if (argv[i].startsWith('--test')) continue;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!o.brisk || !o.model || !o.rerankModel || !o.chatModel)
    throw new Error('usage: --brisk BIN --model EMB --rerank-model RERANK --chat-model CHAT');
  return o;
}

const opts = parseArgs();
const N_EMBD = 256;  // qwen3-embedding-tiny
const servers = {};
const clients = {};

before(async () => {
  const start = async (name, model, args = []) => {
    servers[name] = await startServer({ brisk: opts.brisk, model, args });
    clients[name] = new OpenAI({ baseURL: `${servers[name].url}/v1`, apiKey: 'unused', maxRetries: 0 });
  };
  await Promise.all([
    start('emb', opts.model),
    start('rerank', opts.rerankModel),
    start('chat', opts.chatModel),
    start('optin', opts.chatModel, ['--pooling', 'last']),
  ]);
});

after(async () => {
  for (const s of Object.values(servers)) {
    const { code } = await s.stop();
    assert.equal(code, 0, s.stderr());
  }
});

const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

async function post(name, path, body) {
  const r = await fetch(servers[name].url + path, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: r.status, json: await r.json() };
}

// A counter of the server's Prometheus text (0 when absent).
async function counter(name, metric) {
  const text = await (await fetch(`${servers[name].url}/metrics`)).text();
  const m = new RegExp(`^${metric.replace(/[:]/g, '\\$&')}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

async function modelId(name) {
  return (await clients[name].models.list()).data[0].id;
}

describe('embeddings (openai client)', () => {
  test('one text: a unit vector of n_embd floats; usage counts the text and <|endoftext|>', async () => {
    const model = await modelId('emb');
    const r = await clients.emb.embeddings.create({ model, input: 'hello world', encoding_format: 'float' });
    assert.equal(r.object, 'list');
    assert.equal(r.model, model);
    assert.equal(r.data.length, 1);
    assert.equal(r.data[0].object, 'embedding');
    assert.equal(r.data[0].index, 0);
    assert.equal(r.data[0].embedding.length, N_EMBD);
    assert.ok(Math.abs(norm(r.data[0].embedding) - 1) < 1e-5, `norm ${norm(r.data[0].embedding)}`);
    const tok = await post('emb', '/tokenize', { content: 'hello world' });
    assert.equal(r.usage.prompt_tokens, tok.json.tokens.length + 1);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens);
  });

  test('the SDK default (base64) decodes to the same float32 values', async () => {
    const model = await modelId('emb');
    const f = await clients.emb.embeddings.create({ model, input: 'same vector', encoding_format: 'float' });
    const b = await clients.emb.embeddings.create({ model, input: 'same vector' });
    const raw = await post('emb', '/v1/embeddings', { model, input: 'same vector', encoding_format: 'base64' });
    assert.equal(typeof raw.json.data[0].embedding, 'string');
    assert.equal(b.data[0].embedding.length, N_EMBD);
    for (let i = 0; i < N_EMBD; i++)
      assert.equal(b.data[0].embedding[i], Math.fround(f.data[0].embedding[i]), `component ${i}`);
  });

  test('a batch answers in input order, each as its single request', async () => {
    const model = await modelId('emb');
    const texts = ['first', '第二', 'third text 🚀', 'first'];
    const batch = await clients.emb.embeddings.create({ model, input: texts, encoding_format: 'float' });
    assert.deepEqual(batch.data.map((d) => d.index), [0, 1, 2, 3]);
    for (let i = 0; i < texts.length; i++) {
      const one = await clients.emb.embeddings.create({ model, input: texts[i], encoding_format: 'float' });
      assert.ok(maxDiff(batch.data[i].embedding, one.data[0].embedding) < 1e-5, texts[i]);
    }
    assert.deepEqual(batch.data[0].embedding, batch.data[3].embedding);
    assert.ok(maxDiff(batch.data[0].embedding, batch.data[1].embedding) > 1e-3);
  });

  test('a batch of distinct texts runs as one engine step', async () => {
    const model = await modelId('emb');
    const texts = Array.from({ length: 12 }, (_, i) => `batch text number ${i} ${'x'.repeat(i)}`);
    // The previous test's last step may publish its counters after its answer went out (later
    // still on a loaded machine): wait until the count holds still before taking it.
    let steps0 = await counter('emb', 'brisk:engine_steps_total');
    for (let i = 0; i < 50; i++) {
      await new Promise((res) => setTimeout(res, 100));
      const again = await counter('emb', 'brisk:engine_steps_total');
      if (again === steps0) break;
      steps0 = again;
    }
    const r = await clients.emb.embeddings.create({ model, input: texts, encoding_format: 'float' });
    assert.equal(r.data.length, texts.length);
    // The engine publishes its counters after the step that answered: wait for them to move.
    let steps = steps0;
    for (let i = 0; i < 100 && steps === steps0; i++) {
      await new Promise((res) => setTimeout(res, 20));
      steps = await counter('emb', 'brisk:engine_steps_total');
    }
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(await counter('emb', 'brisk:engine_steps_total') - steps0, 1);
  });

  test('dimensions: the first k components, renormalised', async () => {
    const model = await modelId('emb');
    const full = (await clients.emb.embeddings.create({ model, input: 'matryoshka', encoding_format: 'float' })).data[0].embedding;
    for (const k of [32, 100]) {
      const r = await clients.emb.embeddings.create({ model, input: 'matryoshka', dimensions: k });
      const e = r.data[0].embedding;
      assert.equal(e.length, k);
      assert.ok(Math.abs(norm(e) - 1) < 1e-5);
      const head = full.slice(0, k);
      const n = norm(head);
      assert.ok(maxDiff(e, head.map((x) => x / n)) < 1e-5, `k=${k}`);
    }
  });

  test('token id inputs run as given', async () => {
    const model = await modelId('emb');
    const ids = (await post('emb', '/tokenize', { content: 'hello world' })).json.tokens;
    const text = await clients.emb.embeddings.create({ model, input: 'hello world', encoding_format: 'float' });
    const withEnd = await clients.emb.embeddings.create({ model, input: [[...ids, 151643]], encoding_format: 'float' });
    assert.ok(maxDiff(withEnd.data[0].embedding, text.data[0].embedding) < 1e-6);
    const bare = await clients.emb.embeddings.create({ model, input: ids, encoding_format: 'float' });
    assert.equal(bare.usage.prompt_tokens, ids.length);
  });

  test('bad requests are 400s naming the field', async () => {
    const model = await modelId('emb');
    const cases = [
      [{ input: 'x', dimensions: 0 }, 'dimensions'],
      [{ input: 'x', dimensions: N_EMBD + 1 }, 'dimensions'],
      [{ input: '' }, 'input'],
      [{ input: [] }, 'input'],
      [{ input: ['ok', ''] }, 'input[1]'],
      [{ input: [-1] }, 'input'],
      [{ input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    ];
    for (const [body, param] of cases) {
      await assert.rejects(clients.emb.embeddings.create({ model, ...body }),
                           (e) => e.status === 400 && e.param === param,
                           JSON.stringify(body));
    }
    await assert.rejects(clients.emb.embeddings.create({ model: 'other', input: 'x' }),
                         (e) => e.status === 404 && e.code === 'model_not_found');
    const long = 'word '.repeat(9000);
    await assert.rejects(clients.emb.embeddings.create({ model, input: long }),
                         (e) => e.status === 400 && e.code === 'context_length_exceeded');
  });

  test('an embedding model cannot chat: 400 pointing at /v1/embeddings', async () => {
    const model = await modelId('emb');
    await assert.rejects(
      clients.emb.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }),
      (e) => e.status === 400 && /\/v1\/embeddings/.test(e.message));
  });
});

describe('pooling flag', () => {
  test('a chat model asked for embeddings: 400 naming --pooling', async () => {
    const model = await modelId('chat');
    await assert.rejects(clients.chat.embeddings.create({ model, input: 'x' }),
                         (e) => e.status === 400 && /--pooling last/.test(e.message));
    const r = await post('chat', '/v1/rerank', { query: 'q', documents: ['d'] });
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /--pooling rank/);
  });

  test('--pooling last: the chat model embeds and no longer chats', async () => {
    const model = await modelId('optin');
    const r = await clients.optin.embeddings.create({ model, input: ['a', 'b'], encoding_format: 'float' });
    assert.equal(r.data.length, 2);
    assert.ok(r.data[0].embedding.length > 0);
    assert.ok(Math.abs(norm(r.data[0].embedding) - 1) < 1e-5);
    await assert.rejects(
      clients.optin.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }),
      (e) => e.status === 400);
  });
});

describe('rerank (fetch)', () => {
  const query = 'What is the capital of China?';
  const documents = ['The capital of China is Beijing.', 'Gravity is a force.',
                     { text: 'Paris is the capital of France.' }, 'Bananas are yellow.'];
  const texts = documents.map((d) => (typeof d === 'string' ? d : d.text));

  test('every document scored once, highest first, with its text on request', async () => {
    for (const path of ['/v1/rerank', '/rerank']) {
      const { status, json } = await post('rerank', path, { query, documents, return_documents: true });
      assert.equal(status, 200, JSON.stringify(json));
      assert.match(json.id, /^rerank-/);
      assert.ok(json.usage.total_tokens > 50);
      assert.equal(json.results.length, documents.length);
      assert.deepEqual(json.results.map((r) => r.index).sort(), [0, 1, 2, 3]);
      for (let i = 0; i < json.results.length; i++) {
        const r = json.results[i];
        assert.ok(r.relevance_score > 0 && r.relevance_score < 1);
        assert.equal(r.document.text, texts[r.index]);
        if (i > 0) assert.ok(json.results[i - 1].relevance_score >= r.relevance_score);
      }
    }
  });

  test('top_n keeps the best; scores do not depend on the other documents', async () => {
    const all = (await post('rerank', '/v1/rerank', { query, documents })).json.results;
    const top = (await post('rerank', '/v1/rerank', { query, documents, top_n: 2 })).json.results;
    assert.equal(top.length, 2);
    assert.deepEqual(top.map((r) => r.index), all.slice(0, 2).map((r) => r.index));
    assert.equal(top[0].document, undefined);
    const alone = (await post('rerank', '/v1/rerank', { query, documents: [texts[all[1].index]] })).json.results;
    assert.ok(Math.abs(alone[0].relevance_score - all[1].relevance_score) < 1e-5);
  });

  test('an instruction changes the scores', async () => {
    const a = (await post('rerank', '/v1/rerank', { query, documents: [texts[0]] })).json.results[0];
    const b = (await post('rerank', '/v1/rerank', { query, documents: [texts[0]], instruction: 'Find recipes' })).json.results[0];
    assert.notEqual(a.relevance_score, b.relevance_score);
  });

  test('bad requests are 400s; a reranker does not embed', async () => {
    for (const [body, param] of [[{ documents: ['a'] }, 'query'], [{ query }, 'documents'],
                                 [{ query, documents: [] }, 'documents'],
                                 [{ query, documents: [{ txt: 'a' }] }, 'documents[0].text'],
                                 [{ query, documents: ['a'], top_n: -1 }, 'top_n']]) {
      const r = await post('rerank', '/v1/rerank', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.error.param, param);
    }
    const e = await post('rerank', '/v1/embeddings', { input: 'x' });
    assert.equal(e.status, 400);
    assert.match(e.json.error.message, /\/v1\/rerank/);
  });
});
