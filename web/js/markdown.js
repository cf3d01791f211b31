// Markdown for model output, rendered SAFELY: the renderer only ever creates elements itself
// and puts model text in text nodes (textContent), so no model text is parsed as HTML; raw HTML
// in the text shows up as literal text. Links keep only absolute http(s) URLs.
//
// Covered: ATX headings, paragraphs (a newline is a line break, as chat UIs do), fenced code
// blocks (``` / ~~~, highlighted; an unclosed fence — mid-stream — runs to the end), bullet and
// numbered lists (nested by indentation), block quotes, horizontal rules, pipe tables, and
// inline code, **bold**, *italic*, ~~strike~~, [links](https://…), bare https:// URLs, \escapes,
// and LaTeX math ($…$, $$…$$, \(…\), \[…\]; never inside code) typeset by KaTeX (math.js).

import { highlight, resolveLanguage } from './highlight.js';
import { mathBlockClose, mathElement, matchInlineMath } from './math.js';

const FENCE_RE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const HEADING_RE = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR_RE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE_RE = /^ {0,3}> ?(.*)$/;
const LIST_RE = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const TABLE_SEP_CELL_RE = /^[ \t]*:?-+:?[ \t]*$/;

// Absolute http(s) URL as a string, or null for anything else (javascript:, data:, relative...).
export function safeUrl(url) {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

function el(tag, className) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  return e;
}

function isBlank(line) {
  return /^[ \t]*$/.test(line);
}

function leadingSpaces(line) {
  return line.length - line.replace(/^ +/, '').length;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (s[i] === '|') {
      cells.push(cur.trim());
      cur = '';
    } else {
      cur += s[i];
    }
  }
  cells.push(cur.trim());
  return cells;
}

function isTableStart(lines, i) {
  if (!lines[i].includes('|') || i + 1 >= lines.length) return false;
  const sep = lines[i + 1];
  if (!sep.includes('-')) return false;
  const cells = splitRow(sep);
  return cells.length > 0 && cells.every((c) => TABLE_SEP_CELL_RE.test(c));
}

function startsBlock(line) {
  return FENCE_RE.test(line) || HEADING_RE.test(line) || HR_RE.test(line) ||
      QUOTE_RE.test(line) || LIST_RE.test(line) || mathBlockClose(line) !== null;
}

function codeBlock(code, lang) {
  const wrap = el('div', 'code-block');
  const head = el('div', 'code-head');
  const label = el('span', 'code-lang');
  label.textContent = lang || 'text';
  const copy = el('button', 'code-copy');
  copy.type = 'button';
  copy.textContent = 'Copy';
  copy.addEventListener('click', () => {
    const done = (msg) => {
      copy.textContent = msg;
      setTimeout(() => (copy.textContent = 'Copy'), 1500);
    };
    if (navigator.clipboard) {
      navigator.clipboard.writeText(code).then(() => done('Copied'), () => done('Copy failed'));
    } else {
      done('Copy failed');
    }
  });
  head.append(label, copy);
  const pre = el('pre');
  const codeEl = el('code', `language-${resolveLanguage(lang)}`);
  codeEl.appendChild(highlight(code, lang));
  pre.appendChild(codeEl);
  wrap.append(head, pre);
  return wrap;
}

function table(lines, i, parent) {
  const header = splitRow(lines[i]);
  const aligns = splitRow(lines[i + 1]).map((c) => {
    const t = c.trim();
    if (t.startsWith(':') && t.endsWith(':')) return 'align-center';
    if (t.endsWith(':')) return 'align-right';
    return '';
  });
  const wrap = el('div', 'table-wrap');
  const t = el('table');
  const thead = el('thead');
  const hr = el('tr');
  header.forEach((cell, k) => {
    const th = el('th', aligns[k] || '');
    parseInline(cell, th);
    hr.appendChild(th);
  });
  thead.appendChild(hr);
  t.appendChild(thead);
  const tbody = el('tbody');
  i += 2;
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) {
    const tr = el('tr');
    const cells = splitRow(lines[i]);
    for (let k = 0; k < header.length; k++) {
      const td = el('td', aligns[k] || '');
      parseInline(cells[k] || '', td);
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
    i++;
  }
  t.appendChild(tbody);
  wrap.appendChild(t);
  parent.appendChild(wrap);
  return i;
}

function list(lines, i, parent) {
  const first = LIST_RE.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const listEl = el(ordered ? 'ol' : 'ul');
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1) listEl.start = start;
  }
  while (i < lines.length) {
    const m = LIST_RE.exec(lines[i]);
    if (!m || Math.abs(m[1].length - indent) > 1 || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = indent + m[2].length + 1;
    const itemLines = [m[3] || ''];
    i++;
    while (i < lines.length) {
      const line = lines[i];
      if (isBlank(line)) {
        let j = i + 1;
        while (j < lines.length && isBlank(lines[j])) j++;
        if (j < lines.length && leadingSpaces(lines[j]) >= contentIndent) {
          for (; i < j; i++) itemLines.push('');
          continue;
        }
        break;
      }
      const sp = leadingSpaces(line);
      if (sp > indent + 1) {
        itemLines.push(line.slice(Math.min(sp, contentIndent)));
      } else if (!startsBlock(line)) {
        itemLines.push(line.trim());  // lazy continuation of the item's paragraph
      } else {
        break;
      }
      i++;
    }
    const li = el('li');
    blocks(itemLines, li, true);
    listEl.appendChild(li);
    // Blank lines between items keep the list going.
    let j = i;
    while (j < lines.length && isBlank(lines[j])) j++;
    const next = j < lines.length ? LIST_RE.exec(lines[j]) : null;
    if (!next || Math.abs(next[1].length - indent) > 1 || /\d/.test(next[2]) !== ordered) break;
    i = j;
  }
  parent.appendChild(listEl);
  return i;
}

// A display-math block from lines[i] ("$$" or "\\[" at its start) to its closing token, which
// must end a line; an unclosed block (mid-stream) runs to the end. Returns the next line index,
// or i when lines[i] is not such a block (text follows the closing token on the same line).
function mathBlock(lines, i, close, parent) {
  const first = lines[i].trim().slice(2);
  const body = [];
  let j = i;
  let rest = first;
  for (;;) {
    const k = rest.indexOf(close);
    if (k >= 0) {
      if (rest.slice(k + close.length).trim() !== '') return i;
      body.push(rest.slice(0, k));
      j++;
      break;
    }
    body.push(rest);
    j++;
    if (j >= lines.length) break;
    rest = lines[j];
  }
  const tex = body.join('\n').trim();
  if (tex === '') return i;
  parent.appendChild(mathElement(tex, true));
  return j;
}

// Renders `lines` as blocks into `parent`. `tight`: paragraphs go straight into the parent
// (list items) instead of into <p>.
function blocks(lines, parent, tight) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m = FENCE_RE.exec(line);
    if (m) {
      const indent = m[1].length;
      const fence = m[2];
      const body = [];
      i++;
      while (i < lines.length) {
        const close = lines[i].trim();
        if (close.startsWith(fence[0].repeat(fence.length)) && /^[`~]+$/.test(close) &&
            close[0] === fence[0]) {
          i++;
          break;
        }
        const sp = Math.min(indent, leadingSpaces(lines[i]));
        body.push(lines[i].slice(sp));
        i++;
      }
      parent.appendChild(codeBlock(body.join('\n'), m[3]));
      continue;
    }
    if ((m = HEADING_RE.exec(line))) {
      const h = el(`h${m[1].length}`);
      parseInline(m[2] || '', h);
      parent.appendChild(h);
      i++;
      continue;
    }
    if (HR_RE.test(line)) {
      parent.appendChild(el('hr'));
      i++;
      continue;
    }
    if (QUOTE_RE.test(line)) {
      const inner = [];
      while (i < lines.length && (m = QUOTE_RE.exec(lines[i]))) {
        inner.push(m[1]);
        i++;
      }
      const bq = el('blockquote');
      blocks(inner, bq, false);
      parent.appendChild(bq);
      continue;
    }
    if (isTableStart(lines, i)) {
      i = table(lines, i, parent);
      continue;
    }
    const mathClose = mathBlockClose(line);
    if (mathClose) {
      const next = mathBlock(lines, i, mathClose, parent);
      if (next > i) {
        i = next;
        continue;
      }
    }
    if (LIST_RE.test(line) && (LIST_RE.exec(line)[3] || '').length > 0) {
      i = list(lines, i, parent);
      continue;
    }
    const para = [];
    while (i < lines.length && !isBlank(lines[i]) &&
           (para.length === 0 || (!startsBlock(lines[i]) && !isTableStart(lines, i)))) {
      para.push(lines[i].trim());
      i++;
    }
    const target = tight ? parent : el('p');
    para.forEach((text, k) => {
      if (k > 0) target.appendChild(el('br'));
      parseInline(text, target);
    });
    if (!tight) parent.appendChild(target);
    else if (i < lines.length) parent.appendChild(el('br'));
  }
}

// ---- inline ----

const PUNCT = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const URL_RE = /^https?:\/\/[^\s<>"'`]+/;

function isAlnum(c) {
  return !!c && /[\p{L}\p{N}]/u.test(c);
}

// Index of the closing `delim` for an opener ending at `from`, or -1. A closer must follow
// non-space text and be a run of exactly the opener's length.
function findCloser(text, delim, from) {
  for (let j = text.indexOf(delim, from); j >= 0; j = text.indexOf(delim, j + 1)) {
    if (j === from || /\s/.test(text[j - 1])) continue;
    // A closer is exactly as long as the opener (no longer run of the same character).
    if (text[j + delim.length] === delim[0] || text[j - 1] === delim[0]) continue;
    if (delim[0] === '_' && isAlnum(text[j + delim.length])) continue;
    return j;
  }
  return -1;
}

function matchingBracket(text, open) {
  let depth = 0;
  for (let j = open; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '[') depth++;
    else if (text[j] === ']' && --depth === 0) return j;
  }
  return -1;
}

function matchingParen(text, open) {
  let depth = 0;
  for (let j = open; j < text.length; j++) {
    if (text[j] === '(') depth++;
    else if (text[j] === ')' && --depth === 0) return j;
    else if (text[j] === '\n') return -1;
  }
  return -1;
}

function link(href, parent) {
  const a = el('a');
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer nofollow';
  parent.appendChild(a);
  return a;
}

// Renders inline Markdown of `text` into `parent`.
export function parseInline(text, parent) {
  let plain = '';
  const flush = () => {
    if (plain) parent.appendChild(document.createTextNode(plain));
    plain = '';
  };
  // Openers known to have no closer from some position on: later openers of the same kind cannot
  // have one either, so we never rescan (keeps unmatched '*' runs linear).
  const dead = new Set();
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if ((c === '$' || c === '\\') && !dead.has('math' + c)) {
      const m = matchInlineMath(text, i);
      if (m) {
        flush();
        parent.appendChild(mathElement(m.tex, m.display));
        i = m.end;
        continue;
      }
      if (c === '$' && text[i + 1] !== '$' && !/\s/.test(text[i + 1] || ' ')) {
        // This '$' has no closer: no later one has a closer either if none remains at all.
        if (text.indexOf('$', i + 1) < 0) dead.add('math$');
      }
    }
    if (c === '\\' && i + 1 < text.length && PUNCT.includes(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      let n = 1;
      while (text[i + n] === '`') n++;
      const ticks = '`'.repeat(n);
      let j = dead.has(ticks) ? -1 : text.indexOf(ticks, i + n);
      while (j >= 0 && text[j + n] === '`') {
        let k = j;
        while (text[k] === '`') k++;
        j = text.indexOf(ticks, k);
      }
      if (j < 0) {
        dead.add(ticks);
        plain += ticks;
        i += n;
        continue;
      }
      flush();
      let content = text.slice(i + n, j);
      if (content.length > 2 && content.startsWith(' ') && content.endsWith(' ')) {
        content = content.slice(1, -1);
      }
      const code = el('code');
      code.textContent = content;
      parent.appendChild(code);
      i = j + n;
      continue;
    }
    if (c === '*' || c === '_' || (c === '~' && text[i + 1] === '~')) {
      const run = c === '~' ? 2 : text[i + 1] !== c ? 1 : text[i + 2] !== c ? 2 : 3;
      const delim = c.repeat(run);
      const canOpen = !/\s/.test(text[i + delim.length] || ' ') &&
          !(c === '_' && isAlnum(text[i - 1]));
      const j = canOpen && !dead.has(delim) ? findCloser(text, delim, i + delim.length) : -1;
      if (j < 0) {
        if (canOpen) dead.add(delim);
        plain += delim;
        i += delim.length;
        continue;
      }
      flush();
      const node = el(c === '~' ? 'del' : run === 1 ? 'em' : 'strong');
      let inner = node;
      if (run === 3) inner = node.appendChild(el('em'));  // ***both***
      parseInline(text.slice(i + delim.length, j), inner);
      parent.appendChild(node);
      i = j + delim.length;
      continue;
    }
    if (c === '[' && !dead.has('[')) {
      const close = matchingBracket(text, i);
      if (close < 0) dead.add('[');
      if (close > 0 && text[close + 1] === '(') {
        const end = matchingParen(text, close + 1);
        if (end > 0) {
          let target = text.slice(close + 2, end).trim().split(/\s+/)[0] || '';
          if (target.startsWith('<') && target.endsWith('>')) target = target.slice(1, -1);
          const href = safeUrl(target);
          if (href) {
            flush();
            parseInline(text.slice(i + 1, close), link(href, parent));
            i = end + 1;
            continue;
          }
        }
      }
    }
    if (c === 'h' && !isAlnum(text[i - 1])) {
      const m = URL_RE.exec(text.slice(i, i + 2048));
      if (m) {
        let url = m[0].replace(/[.,;:!?'"]+$/, '');
        while (url.endsWith(')') && (url.match(/\(/g) || []).length <
               (url.match(/\)/g) || []).length) {
          url = url.slice(0, -1);
        }
        const href = safeUrl(url);
        if (href) {
          flush();
          link(href, parent).textContent = url;
          i += url.length;
          continue;
        }
      }
    }
    plain += c;
    i++;
  }
  flush();
}

// A DocumentFragment with `text` rendered as Markdown.
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  blocks(String(text).replace(/\r\n?/g, '\n').split('\n'), frag, false);
  return frag;
}
