// An independent GBNF recogniser, written from the GBNF language definition (llama.cpp's
// grammars/README.md) without looking at brisk's C++ matcher, so that end-to-end tests can check
// that text generated under a `grammar` constraint really derives from it without trusting the
// code under test.
//
//   const grammar = parseGbnf('root ::= "a"+');   // throws Error on a malformed grammar
//   matchesGbnf(grammar, 'aaa');                  // true: the whole string derives from root
//
// The grammar is read into a syntax tree, lowered to plain BNF productions (groups and
// repetitions become helper rules) and matched with an Earley parser over Unicode code points,
// so any context-free grammar works: ambiguity, empty rules and left recursion included.

// ---------------------------------------------------------------------------------------------
// Parsing GBNF text into a syntax tree.
//
// Node kinds: {kind: 'alt', options: [node]}, {kind: 'seq', items: [node]},
// {kind: 'literal', codePoints: [cp]}, {kind: 'class', ranges: [[lo, hi]], negated},
// {kind: 'any'}, {kind: 'ref', name, at}, {kind: 'repeat', item, min, max} (max Infinity = open).

const NAME_CHAR = /[a-zA-Z0-9_-]/;
const HEX_DIGIT = /[0-9a-fA-F]/;
const DIGIT = /[0-9]/;
// Escapes that stand for themselves; \x, \u and \U are handled apart.
const SIMPLE_ESCAPES = new Map([
  ['n', '\n'], ['r', '\r'], ['t', '\t'], ['\\', '\\'], ['"', '"'], ["'", "'"], ['[', '['],
  [']', ']'],
]);
const HEX_ESCAPE_LENGTHS = new Map([['x', 2], ['u', 4], ['U', 8]]);

class GbnfReader {
  constructor(text) {
    // Code points, not UTF-16 units, so that a literal emoji is one character.
    this.chars = Array.from(text);
    this.pos = 0;
  }

  peek(offset = 0) { return this.chars[this.pos + offset]; }
  atEnd() { return this.pos >= this.chars.length; }

  fail(message, pos = this.pos) {
    let line = 1;
    let column = 1;
    for (let i = 0; i < pos && i < this.chars.length; i++) {
      if (this.chars[i] === '\n') { line++; column = 1; } else { column++; }
    }
    throw new Error(`GBNF syntax error at line ${line}, column ${column}: ${message}`);
  }

  expect(text, what) {
    for (let i = 0; i < text.length; i++) {
      if (this.peek(i) !== text[i]) this.fail(`expected ${what}`);
    }
    this.pos += text.length;
  }

  // Blanks, newlines and `#` comments separate tokens anywhere outside literals and classes; rule
  // boundaries are found by looking for `name ::=` instead (see atRuleStart), so a rule may run
  // over as many lines as it likes.
  skipSpace() {
    while (!this.atEnd()) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
        this.pos++;
      } else if (c === '#') {
        while (!this.atEnd() && this.peek() !== '\n') this.pos++;
      } else {
        break;
      }
    }
  }

  nameLengthAt(pos) {
    let end = pos;
    while (end < this.chars.length && NAME_CHAR.test(this.chars[end])) end++;
    return end - pos;
  }

  // Whether a rule definition `name ::=` begins here (blanks, not newlines, before the `::=`).
  atRuleStart() {
    let p = this.pos + this.nameLengthAt(this.pos);
    if (p === this.pos) return false;
    while (this.chars[p] === ' ' || this.chars[p] === '\t') p++;
    return this.chars[p] === ':' && this.chars[p + 1] === ':' && this.chars[p + 2] === '=';
  }

  // A definition must open its line: `a ::= "x" b ::= "y"` is a mistake, not two rules.
  startsLine(pos) {
    for (let p = pos - 1; p >= 0; p--) {
      if (this.chars[p] === '\n') return true;
      if (this.chars[p] !== ' ' && this.chars[p] !== '\t' && this.chars[p] !== '\r') return false;
    }
    return true;
  }

  readName() {
    const length = this.nameLengthAt(this.pos);
    if (length === 0) this.fail('expected a rule name');
    const name = this.chars.slice(this.pos, this.pos + length).join('');
    this.pos += length;
    return name;
  }

  // One character of a literal or class, escapes decoded, as a code point.
  readChar(context) {
    if (this.atEnd()) this.fail(`unterminated ${context}`);
    const c = this.chars[this.pos++];
    if (c !== '\\') return c.codePointAt(0);
    const escape = this.chars[this.pos++];
    if (SIMPLE_ESCAPES.has(escape)) return SIMPLE_ESCAPES.get(escape).codePointAt(0);
    if (HEX_ESCAPE_LENGTHS.has(escape)) return this.readHex(escape, HEX_ESCAPE_LENGTHS.get(escape));
    return this.fail(`unknown escape \\${escape ?? ''} in ${context}`, this.pos - 2);
  }

  readHex(escape, digits) {
    const hex = this.chars.slice(this.pos, this.pos + digits).join('');
    if (hex.length !== digits || ![...hex].every((d) => HEX_DIGIT.test(d))) {
      this.fail(`\\${escape} needs exactly ${digits} hex digits`, this.pos - 2);
    }
    this.pos += digits;
    const codePoint = parseInt(hex, 16);
    if (codePoint > 0x10FFFF) {
      this.fail(`\\${escape}${hex} is beyond Unicode`, this.pos - 2 - digits);
    }
    return codePoint;
  }

  readInteger() {
    const start = this.pos;
    while (!this.atEnd() && DIGIT.test(this.peek())) this.pos++;
    if (start === this.pos) return null;
    return Number(this.chars.slice(start, this.pos).join(''));
  }
}

function parseRules(reader) {
  const rules = new Map();
  reader.skipSpace();
  while (!reader.atEnd()) {
    if (!reader.atRuleStart()) reader.fail('expected a rule definition `name ::= ...`');
    if (!reader.startsLine(reader.pos)) reader.fail('a rule definition must start a new line');
    const at = reader.pos;
    const name = reader.readName();
    if (rules.has(name)) reader.fail(`rule '${name}' is defined twice`, at);
    reader.skipSpace();
    reader.expect('::=', "'::='");
    rules.set(name, parseAlternatives(reader));
  }
  return rules;
}

function parseAlternatives(reader) {
  const options = [parseSequence(reader)];
  while (reader.peek() === '|') {
    reader.pos++;
    options.push(parseSequence(reader));
  }
  return options.length === 1 ? options[0] : { kind: 'alt', options };
}

// Items up to `|`, `)`, the end of the text or the next rule definition. Leaves the reader on
// that token, spaces skipped.
function parseSequence(reader) {
  const items = [];
  for (;;) {
    reader.skipSpace();
    const c = reader.peek();
    if (reader.atEnd() || c === '|' || c === ')' || reader.atRuleStart()) break;
    if (c === '*' || c === '+' || c === '?' || c === '{') {
      if (items.length === 0) reader.fail(`'${c}' has nothing before it to repeat`);
      items.push(parseRepetition(reader, items.pop()));
    } else {
      items.push(parsePrimary(reader));
    }
  }
  return { kind: 'seq', items };
}

function parsePrimary(reader) {
  const c = reader.peek();
  if (c === '"') return parseLiteral(reader);
  if (c === '[') return parseClass(reader);
  if (c === '.') {
    reader.pos++;
    return { kind: 'any' };
  }
  if (c === '(') {
    reader.pos++;
    const group = parseAlternatives(reader);
    if (reader.peek() !== ')') reader.fail("expected ')' to close the group");
    reader.pos++;
    return group;
  }
  if (NAME_CHAR.test(c)) {
    const at = reader.pos;
    return { kind: 'ref', name: reader.readName(), at };
  }
  return reader.fail(`unexpected character ${JSON.stringify(c)}`);
}

function parseLiteral(reader) {
  reader.pos++;  // the opening quote
  const codePoints = [];
  while (reader.peek() !== '"') codePoints.push(reader.readChar('string literal'));
  reader.pos++;
  return { kind: 'literal', codePoints };
}

function parseClass(reader) {
  reader.pos++;  // the opening bracket
  const negated = reader.peek() === '^';
  if (negated) reader.pos++;
  const ranges = [];
  while (reader.peek() !== ']') {
    const rangeAt = reader.pos;
    const lo = reader.readChar('character class');
    let hi = lo;
    // `-` makes a range unless it is the last thing in the class: `[a-]` is 'a' or '-'.
    if (reader.peek() === '-' && reader.peek(1) !== ']' && reader.peek(1) !== undefined) {
      reader.pos++;
      hi = reader.readChar('character class');
      if (hi < lo) reader.fail('a character range runs backwards', rangeAt);
    }
    ranges.push([lo, hi]);
  }
  reader.pos++;
  return { kind: 'class', ranges, negated };
}

// `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` or `{,n}` applied to the item before it.
function parseRepetition(reader, item) {
  const c = reader.peek();
  reader.pos++;
  if (c === '*') return { kind: 'repeat', item, min: 0, max: Infinity };
  if (c === '+') return { kind: 'repeat', item, min: 1, max: Infinity };
  if (c === '?') return { kind: 'repeat', item, min: 0, max: 1 };
  const braceAt = reader.pos - 1;
  reader.skipSpace();
  const min = reader.readInteger();
  reader.skipSpace();
  let max = min;
  if (reader.peek() === ',') {
    reader.pos++;
    reader.skipSpace();
    max = reader.readInteger();
    reader.skipSpace();
  }
  // {m}, {m,}, {m,n} and {,n}: at least one bound, and a lone comma is not one.
  if (min === null && max === null) reader.fail('expected a count in {...}', braceAt);
  if (reader.peek() !== '}') reader.fail("expected '}' to close the repetition count", braceAt);
  reader.pos++;
  if (max !== null && (min ?? 0) > max) {
    reader.fail(`repetition {${min},${max}} has its minimum above its maximum`, braceAt);
  }
  return { kind: 'repeat', item, min: min ?? 0, max: max ?? Infinity };
}

function checkReferences(rules, reader) {
  const visit = (node) => {
    if (node.kind === 'ref' && !rules.has(node.name)) {
      reader.fail(`rule '${node.name}' is used but never defined`, node.at);
    }
    for (const child of node.options ?? node.items ?? []) visit(child);
    if (node.item) visit(node.item);
  };
  for (const body of rules.values()) visit(body);
}

// ---------------------------------------------------------------------------------------------
// Lowering the tree to BNF: nonterminals are numbered, every production is {lhs, rhs} where an
// rhs symbol is a nonterminal number or a terminal {matches(codePoint)} that eats one code point.

class BnfBuilder {
  constructor(ruleNames) {
    this.names = [];
    this.productions = [];
    this.ruleIds = new Map();
    for (const name of ruleNames) this.ruleIds.set(name, this.newNonterminal(name));
  }

  newNonterminal(name) {
    this.names.push(name);
    return this.names.length - 1;
  }

  addProduction(lhs, rhs) { this.productions.push({ lhs, rhs }); }

  // The productions `lhs ::= ...` for one node; alternatives each get their own.
  define(lhs, node, owner) {
    const options = node.kind === 'alt' ? node.options : [node];
    for (const option of options) this.addProduction(lhs, this.symbols(option, owner));
  }

  // The rhs symbols a node stands for inside a sequence.
  symbols(node, owner) {
    switch (node.kind) {
      case 'seq': return node.items.flatMap((item) => this.symbols(item, owner));
      case 'literal': return node.codePoints.map(singleCharTerminal);
      case 'class': return [classTerminal(node)];
      case 'any': return [ANY_CHAR];
      case 'ref': return [this.ruleIds.get(node.name)];
      case 'alt': return [this.helper(owner, 'group', (id) => this.define(id, node, owner))];
      case 'repeat': return this.repetition(node, owner);
      default: throw new Error(`internal: unknown node kind ${node.kind}`);
    }
  }

  // A fresh nonterminal named after the rule it helps, for debugging.
  helper(owner, what, defineBody) {
    const id = this.newNonterminal(`${owner}/${what}${this.names.length}`);
    defineBody(id);
    return id;
  }

  // x{m,n} is m copies of x followed by at most n-m more, written as nested optionals
  // (x (x (x)?)?)? rather than x? x? x?, which would let the same text split many ways.
  repetition(node, owner) {
    const item = this.helper(owner, 'item', (id) => this.define(id, node.item, owner));
    const required = Array(node.min).fill(item);
    if (node.max === Infinity) return [...required, this.starOf(item, owner)];
    let optional = null;
    for (let k = 0; k < node.max - node.min; k++) {
      const inner = optional;
      optional = this.helper(owner, 'opt', (id) => {
        this.addProduction(id, []);
        this.addProduction(id, inner === null ? [item] : [item, inner]);
      });
    }
    return optional === null ? required : [...required, optional];
  }

  // x* as the left-recursive star ::= star x | ε: Earley handles left recursion in linear time,
  // while right recursion would cost quadratic time on long runs such as [^\x00]*.
  starOf(item, owner) {
    return this.helper(owner, 'star', (id) => {
      this.addProduction(id, []);
      this.addProduction(id, [id, item]);
    });
  }
}

const ANY_CHAR = { matches: () => true };

function singleCharTerminal(codePoint) {
  return { matches: (cp) => cp === codePoint };
}

function classTerminal({ ranges, negated }) {
  const inRanges = (cp) => ranges.some(([lo, hi]) => lo <= cp && cp <= hi);
  return { matches: (cp) => inRanges(cp) !== negated };
}

// Nonterminals that can derive the empty string, by fixpoint.
function findNullable(nonterminalCount, productions) {
  const nullable = new Array(nonterminalCount).fill(false);
  for (let changed = true; changed;) {
    changed = false;
    for (const { lhs, rhs } of productions) {
      if (!nullable[lhs] && rhs.every((s) => typeof s === 'number' && nullable[s])) {
        nullable[lhs] = true;
        changed = true;
      }
    }
  }
  return nullable;
}

export function parseGbnf(text) {
  const reader = new GbnfReader(text);
  const rules = parseRules(reader);
  if (rules.size === 0) reader.fail('the grammar defines no rules');
  checkReferences(rules, reader);
  const builder = new BnfBuilder(rules.keys());
  for (const [name, body] of rules) builder.define(builder.ruleIds.get(name), body, name);
  const productionsByLhs = builder.names.map(() => []);
  builder.productions.forEach((production, index) => productionsByLhs[production.lhs].push(index));
  return {
    ruleIds: builder.ruleIds,
    names: builder.names,
    productions: builder.productions,
    productionsByLhs,
    nullable: findNullable(builder.names.length, builder.productions),
  };
}

// ---------------------------------------------------------------------------------------------
// Earley recognition. An item is (production, dot, origin): the production's rhs is matched up to
// `dot` over input[origin, here). Empty rules use the Aycock–Horspool fix: when an item waits on
// a nullable nonterminal the dot also moves past it at once, which stands in for the completions
// that an empty derivation, finished inside the same set, would otherwise miss.

class EarleySet {
  constructor() {
    this.items = [];      // [production, dot, origin] in insertion order: the worklist
    this.seen = new Set();
    this.waiting = new Map();  // nonterminal -> items whose next symbol is it
  }

  add(grammar, production, dot, origin) {
    const key = `${production},${dot},${origin}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const item = [production, dot, origin];
    this.items.push(item);
    const next = grammar.productions[production].rhs[dot];
    if (typeof next === 'number') {
      if (!this.waiting.has(next)) this.waiting.set(next, []);
      this.waiting.get(next).push(item);
    }
  }
}

export function matchesGbnf(grammar, string, { root = 'root' } = {}) {
  const rootId = grammar.ruleIds.get(root);
  if (rootId === undefined) throw new Error(`the grammar has no rule '${root}'`);
  const input = Array.from(string, (c) => c.codePointAt(0));
  const sets = [new EarleySet()];
  for (const production of grammar.productionsByLhs[rootId]) sets[0].add(grammar, production, 0, 0);
  for (let here = 0; here <= input.length; here++) {
    sets.push(new EarleySet());
    processSet(grammar, sets, here, input[here]);
    if (here < input.length && sets[here + 1].items.length === 0) return false;
  }
  return sets[input.length].items.some(([production, dot, origin]) => {
    const { lhs, rhs } = grammar.productions[production];
    return lhs === rootId && dot === rhs.length && origin === 0;
  });
}

// Predict, complete and scan every item of sets[here]; the set grows while it is walked.
function processSet(grammar, sets, here, nextCodePoint) {
  const set = sets[here];
  for (let i = 0; i < set.items.length; i++) {
    const [production, dot, origin] = set.items[i];
    const { lhs, rhs } = grammar.productions[production];
    if (dot === rhs.length) {
      // Complete: everything that waited at `origin` for lhs moves past it. When origin is here,
      // items that start waiting later were already moved by the nullable rule below.
      for (const [p, d, o] of sets[origin].waiting.get(lhs) ?? []) set.add(grammar, p, d + 1, o);
    } else if (typeof rhs[dot] === 'number') {
      const nonterminal = rhs[dot];
      for (const p of grammar.productionsByLhs[nonterminal]) set.add(grammar, p, 0, here);
      if (grammar.nullable[nonterminal]) set.add(grammar, production, dot + 1, origin);
    } else if (nextCodePoint !== undefined && rhs[dot].matches(nextCodePoint)) {
      sets[here + 1].add(grammar, production, dot + 1, origin);
    }
  }
}
