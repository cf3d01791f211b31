// A small code highlighter: one left-to-right scan that recognises comments, strings, numbers and
// keywords for a few languages. It builds text nodes and <span class="tok-…"> elements only, so
// the code (model output) is never interpreted as HTML.

const C_LIKE_COMMENTS = { line: ['//'], block: [['/*', '*/']] };

const LANGS = {
  js: {
    ...C_LIKE_COMMENTS,
    strings: ['"', "'", '`'],
    keywords: 'async await break case catch class const continue default delete do else export ' +
        'extends false finally for from function if import in instanceof let new null of return ' +
        'static super switch this throw true try typeof undefined var void while yield',
  },
  python: {
    line: ['#'],
    block: [],
    strings: ['"""', "'''", '"', "'"],
    keywords: 'and as assert async await break class continue def del elif else except False ' +
        'finally for from global if import in is lambda None nonlocal not or pass raise return ' +
        'True try while with yield self print',
  },
  c: {
    ...C_LIKE_COMMENTS,
    strings: ['"', "'"],
    keywords: 'auto bool break case char class const constexpr continue default delete do double ' +
        'else enum explicit extern false float for if inline int long namespace new nullptr ' +
        'operator private protected public return short signed sizeof static struct switch ' +
        'template this throw true try typedef typename union unsigned using virtual void ' +
        'volatile while include define std size_t',
  },
  rust: {
    ...C_LIKE_COMMENTS,
    strings: ['"'],
    keywords: 'as async await break const continue crate else enum extern false fn for if impl ' +
        'in let loop match mod move mut pub ref return self Self static struct super trait true ' +
        'type unsafe use where while Some None Ok Err',
  },
  go: {
    ...C_LIKE_COMMENTS,
    strings: ['"', "'", '`'],
    keywords: 'break case chan const continue default defer else fallthrough for func go goto if ' +
        'import interface map package range return select struct switch type var nil true false',
  },
  java: {
    ...C_LIKE_COMMENTS,
    strings: ['"', "'"],
    keywords: 'abstract boolean break byte case catch char class const continue default do ' +
        'double else enum extends final finally float for if implements import instanceof int ' +
        'interface long new null package private protected public return short static super ' +
        'switch this throw throws true false try void while',
  },
  bash: {
    line: ['#'],
    block: [],
    strings: ['"', "'"],
    keywords: 'if then else elif fi for in do done while until case esac function return export ' +
        'local echo exit set unset',
  },
  json: { line: [], block: [], strings: ['"'], keywords: 'true false null' },
  // Unknown languages still get strings and numbers.
  plain: { line: [], block: [], strings: ['"', "'"], keywords: '' },
};

const ALIASES = {
  javascript: 'js', mjs: 'js', ts: 'js', typescript: 'js', jsx: 'js', tsx: 'js',
  py: 'python', python3: 'python',
  'c++': 'c', cpp: 'c', cc: 'c', h: 'c', hpp: 'c', cxx: 'c', csharp: 'java', cs: 'java',
  rs: 'rust', golang: 'go', kotlin: 'java',
  sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash',
};

const keywordSets = new Map();

export function resolveLanguage(lang) {
  const l = String(lang || '').toLowerCase();
  if (LANGS[l]) return l;
  if (ALIASES[l]) return ALIASES[l];
  return 'plain';
}

function keywordsOf(name) {
  if (!keywordSets.has(name)) {
    keywordSets.set(name, new Set(LANGS[name].keywords.split(/\s+/).filter(Boolean)));
  }
  return keywordSets.get(name);
}

const IDENT_START = /[A-Za-z_$]/;
const IDENT_PART = /[A-Za-z0-9_$]/;
const NUMBER = /^(0[xX][0-9a-fA-F_]+|0[bB][01_]+|(\d[\d_]*)?\.?\d[\d_]*([eE][+-]?\d+)?)[a-zA-Z]*/;

// Splits `code` into [kind, text] pieces; kind is '' for plain text or one of
// 'kw', 'str', 'com', 'num'. Exported for tests; joining the texts gives back `code`.
export function tokenize(code, lang) {
  const name = resolveLanguage(lang);
  const spec = LANGS[name];
  const keywords = keywordsOf(name);
  const out = [];
  let plain = '';
  const emit = (kind, text) => {
    if (plain) {
      out.push(['', plain]);
      plain = '';
    }
    out.push([kind, text]);
  };
  let i = 0;
  const at = (token) => code.startsWith(token, i);
  while (i < code.length) {
    const line = spec.line.find(at);
    if (line) {
      let end = code.indexOf('\n', i);
      if (end < 0) end = code.length;
      emit('com', code.slice(i, end));
      i = end;
      continue;
    }
    const block = spec.block.find(([open]) => at(open));
    if (block) {
      const close = code.indexOf(block[1], i + block[0].length);
      const end = close < 0 ? code.length : close + block[1].length;
      emit('com', code.slice(i, end));
      i = end;
      continue;
    }
    const quote = spec.strings.find(at);
    if (quote) {
      let j = i + quote.length;
      while (j < code.length && !code.startsWith(quote, j)) {
        if (code[j] === '\\') j++;
        // Single-line quotes stop at a newline so one stray quote does not colour the rest.
        else if (code[j] === '\n' && quote.length === 1 && quote !== '`') break;
        j++;
      }
      const end = Math.min(code.length, code.startsWith(quote, j) ? j + quote.length : j);
      emit('str', code.slice(i, end));
      i = end;
      continue;
    }
    const c = code[i];
    const prev = i > 0 ? code[i - 1] : '';
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(code[i + 1] || ''))) {
      if (!IDENT_PART.test(prev)) {
        const m = NUMBER.exec(code.slice(i, i + 64));
        if (m && m[0]) {
          emit('num', m[0]);
          i += m[0].length;
          continue;
        }
      }
    }
    if (IDENT_START.test(c) && !IDENT_PART.test(prev)) {
      let j = i + 1;
      while (j < code.length && IDENT_PART.test(code[j])) j++;
      const word = code.slice(i, j);
      if (keywords.has(word)) emit('kw', word);
      else plain += word;
      i = j;
      continue;
    }
    plain += c;
    i++;
  }
  if (plain) out.push(['', plain]);
  return out;
}

// A DocumentFragment of highlighted `code`.
export function highlight(code, lang) {
  const frag = document.createDocumentFragment();
  for (const [kind, text] of tokenize(code, lang)) {
    if (!kind) {
      frag.appendChild(document.createTextNode(text));
    } else {
      const span = document.createElement('span');
      span.className = `tok-${kind}`;
      span.textContent = text;
      frag.appendChild(span);
    }
  }
  return frag;
}
