// The JavaScript GBNF recogniser (lib/gbnf_recognizer.mjs) that the server tests use to check
// grammar-constrained outputs: it must agree with every example of the GBNF corpus
// (tests/data/structured/gbnf: <name>.gbnf with <name>.accept.txt and <name>.reject.txt, one JSON
// string per line) and with a few cases of its own. Needs no server.
//
//   node tests/server/gbnf_recognizer_test.mjs
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { matchesGbnf, parseGbnf } from './lib/gbnf_recognizer.mjs';

const corpusDir = path.join(path.dirname(fileURLToPath(import.meta.url)),
                            '../data/structured/gbnf');

function readExamples(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

const grammarNames = fs.readdirSync(corpusDir).filter((f) => f.endsWith('.gbnf'))
  .map((f) => f.slice(0, -'.gbnf'.length)).sort();
let examplesChecked = 0;

test('the corpus is where it should be', () => {
  assert.ok(grammarNames.length >= 60, `only ${grammarNames.length} grammars in ${corpusDir}`);
});

for (const name of grammarNames) {
  test(`corpus: ${name}`, () => {
    const grammar = parseGbnf(fs.readFileSync(path.join(corpusDir, `${name}.gbnf`), 'utf8'));
    const accept = readExamples(path.join(corpusDir, `${name}.accept.txt`));
    const reject = readExamples(path.join(corpusDir, `${name}.reject.txt`));
    assert.ok(accept.length > 0 && reject.length > 0, `${name}: no examples`);
    // Every disagreement at once, not just the first, to make a failure easy to read.
    const wrong = [
      ...accept.filter((s) => !matchesGbnf(grammar, s)).map((s) => `rejected ${JSON.stringify(s)}`),
      ...reject.filter((s) => matchesGbnf(grammar, s)).map((s) => `accepted ${JSON.stringify(s)}`),
    ];
    examplesChecked += accept.length + reject.length;
    assert.deepEqual(wrong, [], `${name}: ${wrong.join(', ')}`);
  });
}


// Asserts which of the strings the grammar accepts and which it rejects.
function check(gbnf, { accept = [], reject = [] }, options = {}) {
  const grammar = parseGbnf(gbnf);
  for (const s of accept) {
    assert.ok(matchesGbnf(grammar, s, options), `should accept ${JSON.stringify(s)}`);
  }
  for (const s of reject) {
    assert.ok(!matchesGbnf(grammar, s, options), `should reject ${JSON.stringify(s)}`);
  }
}

test('empty alternatives and nullable rules', () => {
  check('root ::= a b "x" b\na ::= "a" | \nb ::= () | "b" | a', {
    accept: ['x', 'ax', 'abx', 'aax', 'bxa', 'xb', 'abxb'],
    reject: ['', 'aaax', 'xbb', 'bbx'],
  });
  // A nullable rule deep inside others, the whole string empty.
  check('root ::= a a\na ::= b*\nb ::= c?\nc ::= "c"',
        { accept: ['', 'c', 'cccc'], reject: ['d'] });
  // n finishes empty before p's item starts waiting on it in the same Earley set: the case a
  // naive Earley parser loses ("c" here), which the Aycock–Horspool rule exists for.
  check('root ::= n "b" | p\np ::= q n "c"\nq ::= \nn ::= "n" | ', {
    accept: ['b', 'nb', 'c', 'nc'],
    reject: ['', 'n', 'bc', 'nnc'],
  });
});

test('left recursion terminates and parses', () => {
  const gbnf = 'root ::= expr\nexpr ::= expr "+" term | term\nterm ::= term "*" num | num\n' +
               'num ::= [0-9]+';
  check(gbnf, { accept: ['1', '1+2', '1+2*3+4', '12*3*4'], reject: ['', '+', '1+', '1++2', '*1'] });
  // Left recursion through an empty rule: x ::= e x "a" with e nullable.
  check('root ::= e root "a" | "b"\ne ::= ', { accept: ['b', 'baaa'], reject: ['a', 'ab'] });
});

test('bounded repetitions', () => {
  check('root ::= "a"{2,4}', { accept: ['aa', 'aaa', 'aaaa'], reject: ['', 'a', 'aaaaa'] });
  check('root ::= "ab"{3}', { accept: ['ababab'], reject: ['abab', 'abababab', 'aba'] });
  check('root ::= [0-9]{2,} "x"{,2}',
        { accept: ['12', '123456x', '00xx'], reject: ['1', '12xxx'] });
  check('root ::= "a"{0,100}', { accept: ['', 'a'.repeat(100)], reject: ['a'.repeat(101)] });
  check('root ::= ("a" | "aa"){0,100} "b"',
        { accept: ['a'.repeat(150) + 'b'], reject: ['a'.repeat(201) + 'b'] });
});

test('negated classes with escaped ] and \\', () => {
  check('root ::= [^\\]\\\\a-c]+', {
    accept: ['xyz', '[', 'd^-'],
    reject: ['', ']', '\\', 'a', 'b', 'c', 'x]'],
  });
  check('root ::= [\\]\\\\]', { accept: [']', '\\'], reject: ['[', 'a', ''] });
});

test('classes: literal dash at the ends, ^ not first, ranges beyond the BMP', () => {
  check('root ::= [-a^]+ [a-]', { accept: ['-a', '^^-', 'a-'], reject: ['b', '^'] });
  check('root ::= [\\U0001F600-\\U0001F64F]',
        { accept: ['😀', '🙏'], reject: ['🌀', 'a', '😀😀'] });
});

test('. is one code point, an emoji included', () => {
  check('root ::= . "!"', { accept: ['😀!', 'é!', '\n!'], reject: ['!', '😀😀!', 'ab!'] });
  check('root ::= "😀"', { accept: ['😀'], reject: ['\u{1F600}\u{1F600}', '\uD83D'] });
});

test('escapes in literals', () => {
  check('root ::= "\\x41\\u00DF\\U0001F600\\t\\n\\r\\\\\\"\\\'\\[\\]"', {
    accept: ['Aß😀\t\n\r\\"\'[]'],
    reject: ['Aß😀'],
  });
});

test('layout: multi-line rules, groups over lines, comments', () => {
  check('root ::= ( # a comment\n  "a"\n  | "b" ) # another\n  "c"\n\nother ::= "z"',
        { accept: ['ac', 'bc'], reject: ['c', 'a'] });
  check('root ::= "a" |\n  "b"\n  | "c"', { accept: ['a', 'b', 'c'], reject: ['ab'] });
});

test('another root can be chosen', () => {
  check('root ::= "r"\nalt ::= "s"', { accept: ['s'], reject: ['r'] }, { root: 'alt' });
  assert.throws(() => matchesGbnf(parseGbnf('root ::= "r"'), 'r', { root: 'nope' }),
                /no rule 'nope'/);
});

test('malformed grammars are refused with a message', () => {
  const refused = {
    'root ::= "abc': /unterminated string/,
    'root ::= [abc': /unterminated character class/,
    'root ::= ("a"': /expected '\)'/,
    'root ::= "a")': /expected a rule definition/,
    'root ::= * "a"': /nothing before it/,
    'root ::= "a"{3,2}': /minimum above its maximum/,
    'root ::= "a"{,}': /expected a count/,
    'root ::= "a"{2': /expected '}'/,
    'root ::= "\\q"': /unknown escape/,
    'root ::= "\\x4"': /exactly 2 hex digits/,
    'root ::= [z-a]': /runs backwards/,
    'root ::= "a" b ::= "b"': /must start a new line/,
    'root ::= "a"\nroot ::= "b"': /defined twice/,
    'root ::= "a" @': /unexpected character/,
    'root "a"': /expected a rule definition/,
    '# only a comment': /defines no rules/,
  };
  for (const [gbnf, message] of Object.entries(refused)) {
    assert.throws(() => parseGbnf(gbnf), message, JSON.stringify(gbnf));
  }
});

test('an undefined rule is refused', () => {
  assert.throws(() => parseGbnf('root ::= item+\nitems ::= "x"'),
                /rule 'item' is used but never defined/);
});

test('summary', (t) => {
  assert.ok(examplesChecked > 0, 'no corpus example was checked');
  t.diagnostic(`${grammarNames.length} grammars, ${examplesChecked} examples checked`);
});
