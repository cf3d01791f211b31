// Fixture and in-page checks for chat_test.mjs. pageChecks runs inside the page
// (page.evaluate serialises it), so it must not use anything from this file's scope; it returns
// a list of problems (empty = all good). Expected values are written out by hand.

const LONG_LINE = 'const veryLongIdentifierName = [' + '1234567890, '.repeat(40) + '];';

export const MATH_ANSWER = [
  '<think>The user wants math.</think>',
  'Euler: $e^{i\\pi} + 1 = 0$, while prices $5 and $10 stay text.',
  '',
  '$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$',
  '',
  'Pythagoras: \\(a^2+b^2=c^2\\) and \\[\\sum_{k=1}^n k\\] and $\\href{javascript:alert(1)}{x}$.',
  '',
  '```js',
  'const s = "$x$ not math";',
  LONG_LINE,
  '```',
  '',
  'Inline code `$y$` is not math either.',
].join('\n');

// A stored-format conversation (conversation_tree.js) holding one question and MATH_ANSWER.
export function fixtureConversation(id) {
  return {
    id, title: 'Math fixture', updated: Date.now() + 1000, system_prompt: '',
    nodes: {
      u1: { id: 'u1', parent: null, role: 'user', content: 'Show me math', children: ['a1'],
            sel: 0 },
      a1: { id: 'a1', parent: 'u1', role: 'assistant', content: MATH_ANSWER, children: [],
            sel: 0 },
    },
    children: ['u1'], sel: 0,
  };
}

export async function pageChecks() {
  const problems = [];
  const expect = (cond, msg) => {
    if (!cond) problems.push(msg);
  };
  const msgs = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
  const m = msgs[msgs.length - 1];
  if (!m) return ['no assistant message'];
  const content = m.querySelector('[data-testid="message-content"]');
  const katex = content.querySelectorAll('.katex');
  expect(katex.length === 5, `expected 5 KaTeX formulas, found ${katex.length}`);
  expect(content.querySelectorAll('.katex math').length === 5,
         'KaTeX output has no MathML for every formula');
  expect(content.querySelectorAll('.katex-display').length === 2,
         `expected 2 display formulas ($$ and \\[), found ${
           content.querySelectorAll('.katex-display').length}`);
  const annotations = [...content.querySelectorAll('annotation')].map((a) => a.textContent);
  expect(annotations.includes('e^{i\\pi} + 1 = 0'), `inline TeX not typeset: ${annotations}`);
  expect(annotations.includes('\\int_0^1 x^2\\,dx = \\frac{1}{3}'), 'display TeX not typeset');
  expect(annotations.includes('a^2+b^2=c^2'), '\\(…\\) not typeset');
  expect(content.textContent.includes('prices $5 and $10 stay text'),
         'dollar amounts were taken as math');
  expect(content.querySelectorAll('.katex a, a[href^="javascript"]').length === 0,
         '\\href produced a link (trust must be false)');
  const code = content.querySelector('.code-block');
  expect(code && !code.querySelector('.katex') && code.textContent.includes('"$x$ not math"'),
         'math was rendered inside a code block');
  const inlineCode = [...content.querySelectorAll('code')].find((c) => c.textContent === '$y$');
  expect(!!inlineCode, 'math was rendered inside inline code');
  expect(/KaTeX/.test(getComputedStyle(katex[0] || document.body).fontFamily),
         'KaTeX CSS not applied (font-family)');
  // The fonts come from the binary (/vendor/katex/fonts/*.woff2), not from the system.
  await document.fonts.ready;
  const loaded = [...document.fonts].filter((f) => /^"?KaTeX_/.test(f.family) &&
                                             f.status === 'loaded').map((f) => f.family);
  expect(loaded.length >= 2, `KaTeX web fonts not loaded (${loaded})`);
  const think = m.querySelector('[data-testid="think"]');
  expect(think && !think.hidden && !think.open, 'reasoning is not a collapsed block');
  expect(think && think.textContent.includes('The user wants math.'), 'reasoning text missing');
  expect(!content.textContent.includes('<think>') && !content.textContent.includes('user wants'),
         'reasoning shown in the answer');
  return problems;
}
