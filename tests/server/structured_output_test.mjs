// Structured outputs end to end (issue 29) on the synthetic Qwen2.5-0.5B (the real vocabulary, so
// grammars meet real tokens; random weights, so the model follows nothing by itself and every
// valid answer is the constraint's doing). Answers are checked by matchers independent of the
// server's: ajv (+ ajv-formats) for JSON Schema, JS RegExp for regexes, the test's own Earley
// GBNF recogniser for grammars. Requests go through the official `openai` npm client (every
// structured-output field, streaming and not, chat and completions) and, for Anthropic's
// Messages API, through raw fetch.
//
//   node tests/server/structured_output_test.mjs --brisk build/src/brisk --model synth.gguf
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import Ajv07 from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import OpenAI from 'openai';

import { assembleStream, parseEvents } from './lib/anthropic_sse.mjs';
import { parseArgs, startServer } from './lib/brisk_server.mjs';
import { matchesGbnf, parseGbnf } from './lib/gbnf_recognizer.mjs';

const opts = parseArgs();
const dataDir = new URL('../data/structured/', import.meta.url);
const kSeeds = [1, 2, 3, 4, 5];
const kInFlight = 16;
// Enough for every corpus schema's shortest answer; the server finishes any constrained answer
// within max_tokens (it plans the closing bytes), so a cut answer still validates.
const kMaxTokens = 256;
let server;
let client;
let modelId;
// The random-weight model puts a closing quote among ~100k allowed tokens inside a free string,
// so its strings would mostly run until the length budget closes them. A bias on the '"' token
// (a field any client may send) keeps answers short; what is allowed is still the grammar's
// decision alone, and the independent matchers judge the result.
let closeQuoteBias;

before(async () => {
  server = await startServer({ brisk: opts.brisk, model: opts.model,
                               args: ['--max-num-seqs', String(kInFlight), ...opts.serveArgs] });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  modelId = (await client.models.list()).data[0].id;
  const tok = await (await fetch(`${server.url}/tokenize`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: '"' }) })).json();
  assert.equal(tok.tokens.length, 1);
  closeQuoteBias = { [tok.tokens[0]]: 100 };
});

after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0, `server exit status after SIGTERM:\n${server.stderr()}`);
});

// Runs fn over items with at most `limit` in flight; rejects with the first failure.
async function pool(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

function newAjv(Ajv = Ajv2020) {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  return ajv;
}

// Schemas are read by the draft they name (draft-07 for a few real-world ones), else 2020-12.
function newValidators() {
  const byDraft = { draft07: newAjv(Ajv07), draft2020: newAjv(Ajv2020) };
  return (schema) => {
    const draft = String(schema.$schema ?? '').includes('draft-07') ? 'draft07' : 'draft2020';
    return byDraft[draft].compile(schema);
  };
}

const messages = [{ role: 'user', content: 'Answer in the requested format.' }];
const prompt = 'Answer in the requested format:\n';

// One answer's text and finish_reason through `how`: chat, chat streamed, or completions.
async function generate(how, fields, seed, maxTokens = kMaxTokens) {
  const common = { model: modelId, temperature: 1.0, seed, max_tokens: maxTokens,
                   logit_bias: closeQuoteBias, ...fields };
  if (how === 'completions') {
    const r = await client.completions.create({ prompt, ...common });
    return { text: r.choices[0].text, finish: r.choices[0].finish_reason };
  }
  if (how === 'chat-stream') {
    const stream = await client.chat.completions.create({ messages, stream: true, ...common });
    let text = '';
    let finish = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.delta?.content ?? '';
        finish = c.finish_reason ?? finish;
      }
    }
    return { text, finish };
  }
  const r = await client.chat.completions.create({ messages, ...common });
  return { text: r.choices[0].message.content, finish: r.choices[0].finish_reason };
}

// A constrained answer ends because the grammar let the model stop, or at max_tokens with a
// whole sentence; nothing else.
function assertFinished(finish, where) {
  assert.ok(finish === 'stop' || finish === 'length', `${where}: finish_reason ${finish}`);
}

function readCorpus(dir) {
  return readdirSync(new URL(`${dir}/`, dataDir)).filter((f) => f.endsWith('.json')).sort()
    .map((f) => ({ file: f, ...JSON.parse(readFileSync(new URL(`${dir}/${f}`, dataDir), 'utf8')) }));
}

// Each seed asks through another door, so the corpus covers every way to send a schema: OpenAI's
// response_format (chat, chat streamed, completions) and vLLM's guided_json / SGLang's
// json_schema.
function schemaRequest(schema, strict, seed) {
  const responseFormat = { response_format: { type: 'json_schema',
                                              json_schema: { name: 'out', schema, strict } } };
  switch (seed) {
    case 1: return ['chat', responseFormat];
    case 2: return ['chat-stream', responseFormat];
    case 3: return ['completions', responseFormat];
    case 4: return ['chat', { guided_json: schema }];
    default: return ['completions', { json_schema: JSON.stringify(schema) }];
  }
}

describe('json_schema', () => {
  const corpus = readCorpus('schemas');

  test('the corpus has at least 200 schemas', () => {
    assert.ok(corpus.length >= 200, `${corpus.length} schemas`);
  });

  test('5 seeded samples of every schema parse and validate under ajv', async () => {
    const compile = newValidators();
    const jobs = corpus.flatMap((c) => kSeeds.map((seed) => ({ c, seed })));
    await pool(jobs, kInFlight, async ({ c, seed }) => {
      const validate = compile(c.schema);
      const [how, fields] = schemaRequest(c.schema, !!c.strict, seed);
      const { text, finish } = await generate(how, fields, seed);
      const where = `${c.file} seed ${seed} (${how} ${Object.keys(fields)[0]}): ${JSON.stringify(text)}`;
      assertFinished(finish, where);
      let value;
      assert.doesNotThrow(() => { value = JSON.parse(text); }, where);
      assert.ok(validate(value), `${where}\n${JSON.stringify(validate.errors)}`);
    });
  });

  test('schemas that cannot be enforced are 400s naming keyword and pointer', async () => {
    for (const c of readCorpus('schemas-refused')) {
      await assert.rejects(
        generate('chat', { response_format: { type: 'json_schema',
                                              json_schema: { name: 'out', schema: c.schema } } }, 1),
        (e) => {
          assert.equal(e.status, 400, c.file);
          assert.equal(e.param, 'response_format', c.file);
          assert.ok(e.message.includes(`'${c.keyword}'`), `${c.file}: ${e.message}`);
          assert.ok(e.message.includes(c.pointer), `${c.file}: ${e.message}`);
          return true;
        });
    }
    assert.equal((await client.models.list()).data[0].id, modelId, 'still serving');
  });

  test('json_object answers are JSON objects; with llama.cpp\'s schema they validate', async () => {
    for (const how of ['chat', 'chat-stream', 'completions']) {
      const { text, finish } = await generate(how, { response_format: { type: 'json_object' } }, 3);
      assertFinished(finish, how);
      const value = JSON.parse(text);
      assert.ok(value && typeof value === 'object' && !Array.isArray(value), `${how}: ${text}`);
    }
    const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 3 } },
                     required: ['n'], additionalProperties: false };
    const validate = newValidators()(schema);
    const { text } = await generate('chat', { response_format: { type: 'json_object', schema } }, 4);
    assert.ok(validate(JSON.parse(text)), text);
  });
});

describe('regex', () => {
  const patterns = readFileSync(new URL('regex.jsonl', dataDir), 'utf8').split('\n')
    .filter((l) => l.trim()).map((l) => JSON.parse(l));

  test('at least 50 patterns; every answer matches under JS RegExp', async () => {
    assert.ok(patterns.length >= 50, `${patterns.length} patterns`);
    // guided_regex (vLLM) on chat, regex (SGLang) on completions, in turn.
    await pool(patterns, kInFlight, async (p, i) => {
      const re = new RegExp(`^(?:${p.pattern})$`, 'u');
      const [how, field] = i % 2 ? ['completions', 'regex'] : ['chat', 'guided_regex'];
      const { text, finish } = await generate(how, { [field]: p.pattern }, 7, 256);
      const where = `${field} ${p.pattern}: ${JSON.stringify(text)}`;
      assertFinished(finish, where);
      assert.ok(re.test(text), where);
    });
  });

  test('patterns that cannot be enforced or do not parse are 400s naming the field', async () => {
    for (const [field, pattern] of [['guided_regex', '(a)\\1'], ['regex', '(unclosed'],
                                    ['guided_regex', 'a{5,2}']]) {
      await assert.rejects(generate('chat', { [field]: pattern }, 1), (e) => {
        assert.equal(e.status, 400, `${field} ${pattern}`);
        assert.equal(e.param, field);
        return true;
      });
    }
  });
});

describe('grammar (GBNF)', () => {
  const grammarDir = new URL('gbnf/', dataDir);
  const corpus = readdirSync(grammarDir).filter((f) => f.endsWith('.gbnf')).sort()
    .map((f) => ({ file: f, text: readFileSync(new URL(f, grammarDir), 'utf8') }));

  test('at least 50 grammars, llama.cpp\'s among them; every answer is a sentence', async () => {
    assert.ok(corpus.length >= 50, `${corpus.length} grammars`);
    for (const name of ['json.gbnf', 'arithmetic.gbnf', 'list.gbnf', 'chess.gbnf'])
      assert.ok(corpus.some((g) => g.file === name), name);
    // grammar (llama.cpp) on chat, guided_grammar (vLLM) on completions, ebnf (SGLang) streamed.
    const doors = [['chat', 'grammar'], ['completions', 'guided_grammar'], ['chat-stream', 'ebnf']];
    await pool(corpus, kInFlight, async (g, i) => {
      const [how, field] = doors[i % doors.length];
      const { text, finish } = await generate(how, { [field]: g.text }, 11, 256);
      const where = `${g.file} via ${field}: ${JSON.stringify(text)}`;
      assertFinished(finish, where);
      assert.ok(matchesGbnf(parseGbnf(g.text), text), where);
    });
  });

  test('broken grammars are 400s naming the field', async () => {
    for (const grammar of ['root ::= undefined-rule', 'root ::= "unterminated', 'x ::= "no root"',
                           'root ::= [z-a]']) {
      await assert.rejects(generate('chat', { grammar }, 1), (e) => {
        assert.equal(e.status, 400, grammar);
        assert.equal(e.param, 'grammar');
        return true;
      });
    }
  });
});

describe('guided_choice', () => {
  test('each answer is one of the choices, on chat and completions', async () => {
    const choices = ['yes', 'no', 'it depends', 'ça dépend'];
    for (const seed of kSeeds) {
      for (const how of ['chat', 'completions']) {
        const { text } = await generate(how, { guided_choice: choices }, seed);
        assert.ok(choices.includes(text), `${how}: ${text}`);
      }
    }
    await assert.rejects(generate('chat', { guided_choice: [] }, 1),
                         (e) => e.status === 400 && e.param === 'guided_choice');
  });
});

const tools = [
  { type: 'function', function: { name: 'get_weather', parameters: {
    type: 'object', properties: { city: { type: 'string', maxLength: 20 },
                                  days: { type: 'integer', minimum: 1, maximum: 7 } },
    required: ['city', 'days'], additionalProperties: false } } },
  { type: 'function', function: { name: 'get_time', parameters: {
    type: 'object', properties: { zone: { enum: ['UTC', 'CET', 'PST'] } },
    required: ['zone'], additionalProperties: false } } },
];

function toolValidators() {
  const ajv = newAjv();
  return Object.fromEntries(tools.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));
}

describe('tools (OpenAI)', () => {
  const chat = (fields, seed) => client.chat.completions.create({
    model: modelId, messages, temperature: 1.0, seed, max_tokens: 256, logit_bias: closeQuoteBias,
    tools, ...fields });

  function assertCalls(calls, validators, name, where) {
    assert.ok(calls && calls.length >= 1, where);
    for (const call of calls) {
      assert.equal(call.type, 'function', where);
      if (name) assert.equal(call.function.name, name, where);
      const v = validators[call.function.name];
      assert.ok(v, `${call.function.name}: ${where}`);
      assert.ok(v(JSON.parse(call.function.arguments)), `${call.function.arguments}: ${where}`);
    }
  }

  test('a named tool_choice calls that function with valid arguments', async () => {
    const validators = toolValidators();
    for (const seed of kSeeds) {
      const r = await chat({ tool_choice: { type: 'function', function: { name: 'get_time' } } },
                           seed);
      const where = JSON.stringify(r.choices[0].message);
      assertCalls(r.choices[0].message.tool_calls, validators, 'get_time', where);
      assert.equal(r.choices[0].finish_reason, 'tool_calls', where);
    }
  });

  test('required forces a call; parallel_tool_calls false gives exactly one', async () => {
    const validators = toolValidators();
    for (const seed of kSeeds) {
      const r = await chat({ tool_choice: 'required', parallel_tool_calls: false }, seed);
      const where = JSON.stringify(r.choices[0].message);
      assert.equal(r.choices[0].message.tool_calls?.length, 1, where);
      assertCalls(r.choices[0].message.tool_calls, validators, null, where);
    }
  });

  test('streamed forced calls come as OpenAI tool_call deltas that add up to a valid call',
       async () => {
    const validators = toolValidators();
    for (const seed of kSeeds) {
      const stream = await chat({ tool_choice: 'required', stream: true }, seed);
      const calls = [];
      let finish = null;
      for await (const chunk of stream) {
        for (const c of chunk.choices) {
          finish = c.finish_reason ?? finish;
          for (const d of c.delta?.tool_calls ?? []) {
            if (!calls[d.index]) {
              assert.ok(d.id && d.type === 'function' && d.function?.name, JSON.stringify(d));
              calls[d.index] = { id: d.id, type: 'function',
                                 function: { name: d.function.name, arguments: '' } };
            }
            calls[d.index].function.arguments += d.function?.arguments ?? '';
          }
        }
      }
      assertCalls(calls, validators, null, JSON.stringify(calls));
      assert.equal(finish, 'tool_calls');
    }
  });

  test('auto stays free: answers are prose or valid calls', async () => {
    const validators = toolValidators();
    for (const seed of kSeeds) {
      const r = await chat({ tool_choice: 'auto' }, seed);
      const m = r.choices[0].message;
      if (m.tool_calls) assertCalls(m.tool_calls, validators, null, JSON.stringify(m));
      else assert.equal(typeof m.content, 'string');
    }
  });

  test('bad tool requests are 400s and the server keeps serving', async () => {
    await assert.rejects(chat({ tool_choice: { type: 'function', function: { name: 'nope' } } }, 1),
                         (e) => e.status === 400 && e.param === 'tool_choice');
    await assert.rejects(
      chat({ tool_choice: 'required', response_format: { type: 'json_object' } }, 1),
      (e) => e.status === 400 && e.param === 'response_format');
    assert.equal((await client.models.list()).data[0].id, modelId);
  });
});

describe('tools (Anthropic Messages, raw fetch)', () => {
  const anthropicTools = tools.map((t) => ({ name: t.function.name,
                                             input_schema: t.function.parameters }));

  async function post(body) {
    const r = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'unused',
                 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: modelId, max_tokens: 256, temperature: 1.0,
                             messages: [{ role: 'user', content: 'What time is it?' }],
                             tools: anthropicTools, ...body }),
    });
    return { status: r.status, text: await r.text() };
  }

  function assertToolUses(content, validators, name, where) {
    const uses = content.filter((b) => b.type === 'tool_use');
    assert.ok(uses.length >= 1, where);
    for (const u of uses) {
      if (name) assert.equal(u.name, name, where);
      assert.ok(validators[u.name](u.input), `${JSON.stringify(u.input)}: ${where}`);
    }
    return uses;
  }

  test('tool_choice tool / any force valid tool_use blocks, streaming and not', async () => {
    const validators = toolValidators();
    for (const seed of [1, 2, 3]) {
      const named = await post({ tool_choice: { type: 'tool', name: 'get_time' }, metadata: {},
                                 top_k: 40 + seed });
      assert.equal(named.status, 200, named.text);
      const m = JSON.parse(named.text);
      assertToolUses(m.content, validators, 'get_time', named.text);
      assert.equal(m.stop_reason, 'tool_use');

      const any = await post({ tool_choice: { type: 'any', disable_parallel_tool_use: true },
                               stream: true, top_k: 40 + seed });
      assert.equal(any.status, 200, any.text);
      const s = assembleStream(parseEvents(any.text));
      assert.equal(assertToolUses(s.content, validators, null, any.text).length, 1);
      assert.equal(s.stop_reason, 'tool_use');
    }
  });

  test('a tool_choice naming an unknown tool is a 400 in Anthropic\'s shape', async () => {
    const r = await post({ tool_choice: { type: 'tool', name: 'nope' } });
    assert.equal(r.status, 400, r.text);
    const body = JSON.parse(r.text);
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
  });
});
