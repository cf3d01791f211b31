// LaTeX math for the Markdown renderer, typeset by KaTeX (embedded at /vendor/katex/, loaded by
// index.html before the page's modules). Model output is untrusted: KaTeX runs with trust:false
// (no \href, \url, \htmlClass…), throwOnError:false (bad TeX shows as red source, never an
// exception) and size/expansion limits, and it builds DOM nodes itself — no HTML string is ever
// parsed. Without KaTeX (a page that failed to load it) the TeX shows as code.

const OPTIONS = Object.freeze({
  throwOnError: false,
  trust: false,
  strict: 'ignore',
  output: 'htmlAndMathml',
  maxSize: 20,
  maxExpand: 500,
});
const MAX_TEX = 4000;

export function mathElement(tex, display) {
  const span = document.createElement(display ? 'div' : 'span');
  span.className = display ? 'math math-display' : 'math math-inline';
  const katex = globalThis.katex;
  if (!katex || tex.length > MAX_TEX) {
    const code = document.createElement('code');
    code.textContent = display ? `$$${tex}$$` : `$${tex}$`;
    span.appendChild(code);
    return span;
  }
  try {
    katex.render(tex, span, { ...OPTIONS, displayMode: display });
  } catch (e) {
    span.textContent = tex;  // KaTeX itself failed (not a TeX error): show the source
  }
  return span;
}

// Inline math starting at text[i] ('$', '$$', '\(' or '\['): { tex, display, end } or null.
// A single '$' opens only before a non-space and closes only after a non-space and not before
// a digit, so prices such as "$5 and $10" stay text.
export function matchInlineMath(text, i) {
  const c = text[i];
  if (c === '\\' && (text[i + 1] === '(' || text[i + 1] === '[')) {
    const close = text[i + 1] === '(' ? '\\)' : '\\]';
    const j = text.indexOf(close, i + 2);
    if (j <= i + 2) return null;
    return { tex: text.slice(i + 2, j), display: text[i + 1] === '[', end: j + 2 };
  }
  if (c !== '$') return null;
  if (text[i + 1] === '$') {
    const j = text.indexOf('$$', i + 2);
    if (j <= i + 2) return null;
    return { tex: text.slice(i + 2, j), display: true, end: j + 2 };
  }
  if (!text[i + 1] || /\s/.test(text[i + 1])) return null;
  for (let j = text.indexOf('$', i + 1); j > 0; j = text.indexOf('$', j + 1)) {
    if (text[j - 1] === '\\') continue;
    if (/\s/.test(text[j - 1]) || /\d/.test(text[j + 1] || '')) continue;
    if (text[j + 1] === '$') return null;
    return { tex: text.slice(i + 1, j), display: false, end: j + 1 };
  }
  return null;
}

// A display block opening on `line` ("$$…" or "\[…"): the closing token, else null.
export function mathBlockClose(line) {
  const t = line.trim();
  if (t.startsWith('$$')) return '$$';
  if (t.startsWith('\\[')) return '\\]';
  return null;
}
