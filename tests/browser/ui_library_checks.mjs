// Checks of the UI's own modules (Markdown, highlighter, SSE and Prometheus parsers), run inside
// the page by ui_test.mjs: page.evaluate(libraryChecks) serialises this function, so it must
// not use anything from this file's scope. Returns a list of problems (empty = all good).
// Expected values are written out here by hand, never produced by the modules under test.

export async function libraryChecks() {
  const problems = [];
  const expect = (cond, msg) => {
    if (!cond) problems.push(msg);
  };
  const md = await import('/js/markdown.js');
  const hl = await import('/js/highlight.js');
  const sse = await import('/js/sse.js');
  const prom = await import('/js/prometheus.js');

  const render = (text) => {
    const div = document.createElement('div');
    div.appendChild(md.renderMarkdown(text));
    document.body.appendChild(div);  // live in the document: any injected handler would run
    div.hidden = true;
    return div;
  };

  // --- Markdown safety: model text never becomes markup ---
  window.__pwned = 0;
  const evil = render('<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>\n' +
      '[click](javascript:window.__pwned=3) [data](data:text/html,hi) [rel](/admin)\n' +
      '<a href="javascript:alert(1)">a</a> **<b>bold</b>**\n\n' +
      '```html\n<img src=y onerror=alert(1)>\n```');
  await new Promise((r) => setTimeout(r, 50));
  expect(window.__pwned === 0, `markdown: injected script ran (${window.__pwned})`);
  expect(evil.querySelectorAll('img, script, b, iframe').length === 0,
         'markdown: raw HTML became elements');
  expect([...evil.querySelectorAll('a')].every((a) => /^https?:/.test(a.href)),
         'markdown: a non-http(s) link was created');
  expect(evil.textContent.includes('<img src=x onerror="window.__pwned=1">'),
         'markdown: raw HTML text is not shown literally');
  expect(evil.textContent.includes('[click](javascript:window.__pwned=3)'),
         'markdown: unsafe link not shown as text');
  expect(evil.querySelector('strong') && evil.querySelector('strong').textContent === '<b>bold</b>',
         'markdown: bold around raw HTML');

  // --- Markdown structure ---
  const doc = render([
    '# Title', '## Sub', 'Some **bold**, *italic*, ~~gone~~ and `a < b` code.',
    'Second line with a [link](https://example.com/x?a=1&b=2) and https://example.org/p.', '',
    '- one', '- two', '  - nested', '', '1. first', '2. second', '',
    '> quoted', '', '---', '',
    '| name | n |', '|:-----|--:|', '| a \\| b | 1 |', '', '```js', 'const x = 42; // note',
    'let s = "str";', '```', '', 'snake_case_name stays', '\\*not italic\\*',
  ].join('\n'));
  const q = (sel) => doc.querySelector(sel);
  expect(q('h1') && q('h1').textContent === 'Title', 'markdown: h1');
  expect(q('h2') && q('h2').textContent === 'Sub', 'markdown: h2');
  expect(q('strong') && q('strong').textContent === 'bold', 'markdown: bold');
  expect(q('em') && q('em').textContent === 'italic', 'markdown: italic');
  expect(q('del') && q('del').textContent === 'gone', 'markdown: strikethrough');
  expect(q('p code') && q('p code').textContent === 'a < b', 'markdown: inline code');
  const links = [...doc.querySelectorAll('a')].map((a) => a.href);
  expect(links.includes('https://example.com/x?a=1&b=2'), `markdown: link (${links})`);
  expect(links.includes('https://example.org/p'), `markdown: bare URL (${links})`);
  expect([...doc.querySelectorAll('a')].every((a) => a.rel.includes('noopener')),
         'markdown: links need rel=noopener');
  expect(doc.querySelectorAll('ul > li').length === 3, 'markdown: bullet items (2 + 1 nested)');
  expect(q('ul ul li') && q('ul ul li').textContent === 'nested', 'markdown: nested list');
  expect(doc.querySelectorAll('ol > li').length === 2, 'markdown: numbered list');
  expect(q('blockquote') && q('blockquote').textContent.trim() === 'quoted', 'markdown: quote');
  expect(!!q('hr'), 'markdown: rule');
  const cells = [...doc.querySelectorAll('td')].map((c) => c.textContent);
  expect(cells.join(',') === 'a | b,1', `markdown: table cells (${cells})`);
  expect(q('td.align-right') !== null, 'markdown: table alignment');
  const code = q('pre code');
  expect(code && code.textContent === 'const x = 42; // note\nlet s = "str";',
         `markdown: fenced code text (${code && code.textContent})`);
  const kinds = (cls) => [...doc.querySelectorAll(`pre .${cls}`)].map((e) => e.textContent);
  expect(kinds('tok-kw').join(',') === 'const,let', `highlight: keywords (${kinds('tok-kw')})`);
  expect(kinds('tok-num').join(',') === '42', `highlight: numbers (${kinds('tok-num')})`);
  expect(kinds('tok-com').join(',') === '// note', `highlight: comments (${kinds('tok-com')})`);
  expect(kinds('tok-str').join(',') === '"str"', `highlight: strings (${kinds('tok-str')})`);
  expect(doc.textContent.includes('snake_case_name stays'), 'markdown: snake_case mangled');
  expect(doc.textContent.includes('*not italic*'), 'markdown: escapes');
  // An unclosed fence (mid-stream) is still a code block.
  const open = render('text\n```python\ndef f():');
  const openCode = open.querySelector('pre code');
  expect(openCode && openCode.textContent === 'def f():', 'markdown: unclosed fence');
  // Pathological input stays fast (no quadratic rescans).
  const t0 = performance.now();
  render('*'.repeat(20000) + '_'.repeat(20000) + '['.repeat(20000) + '`'.repeat(5000));
  expect(performance.now() - t0 < 2000, 'markdown: slow on unmatched delimiters');

  const py = hl.tokenize('def f(x):\n    return """doc""" # c', 'python');
  expect(py.map((t) => t[1]).join('') === 'def f(x):\n    return """doc""" # c',
         'highlight: tokens must rebuild the input');
  expect(JSON.stringify(py.filter((t) => t[0])) ===
         '[["kw","def"],["kw","return"],["str","\\"\\"\\"doc\\"\\"\\""],["com","# c"]]',
         `highlight: python (${JSON.stringify(py)})`);

  // --- SSE: events split at every byte, including inside a UTF-8 character ---
  const stream = 'data: {"a":"h\u00e9llo \u4e16"}\r\n\r\n: keep-alive\n\ndata: x\ndata: y\n\n' +
      'event: e\nid: 1\ndata:[DONE]\n\n';
  const bytes = new TextEncoder().encode(stream);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const got = [];
    const p = new sse.SseParser((d) => got.push(d));
    p.push(bytes.slice(0, cut));
    p.push(bytes.slice(cut));
    p.end();
    const want = ['{"a":"h\u00e9llo \u4e16"}', 'x\ny', '[DONE]'];
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      problems.push(`sse: split at ${cut}: ${JSON.stringify(got)}`);
      break;
    }
  }
  const tail = [];
  const p2 = new sse.SseParser((d) => tail.push(d));
  p2.push('data: last');
  p2.end();
  expect(tail.length === 1 && tail[0] === 'last', 'sse: final event without blank line');

  // --- Prometheus text ---
  const text = [
    '# HELP vllm:num_requests_running Running requests.',
    '# TYPE vllm:num_requests_running gauge',
    'vllm:num_requests_running{model_name="qwen"} 3',
    'vllm:num_requests_waiting{model_name="q\\"w,e}n"} 2 1712345678000',
    'brisk:recent_ttft_seconds{quantile="0.5"} 0.125',
    'brisk:recent_ttft_seconds{quantile="0.99"} NaN',
    'brisk:max_num_seqs 16',
    'vllm:generation_tokens_total{model_name="a"} 1e3',
    'vllm:generation_tokens_total{model_name="b"} 24',
    'broken{label="x" 1', 'also broken', 'bad_value{} abc',
  ].join('\n');
  const { samples, skipped } = prom.parsePrometheus(text);
  expect(skipped === 3, `prometheus: skipped ${skipped}, want 3`);
  const v = (n, m) => prom.metricValue(samples, n, m);
  expect(v('vllm:num_requests_running') === 3, 'prometheus: labelled gauge');
  expect(v('vllm:num_requests_waiting') === 2, 'prometheus: escaped label value / timestamp');
  expect(samples.some((s) => s.labels.model_name === 'q"w,e}n'), 'prometheus: label unescape');
  expect(v('brisk:recent_ttft_seconds', { quantile: '0.5' }) === 0.125, 'prometheus: quantile');
  expect(v('brisk:recent_ttft_seconds', { quantile: '0.50' }) === 0.125,
         'prometheus: quantile "0.50" matches "0.5"');
  expect(v('brisk:recent_ttft_seconds', { quantile: '0.99' }) === null, 'prometheus: NaN is a gap');
  expect(v('brisk:recent_ttft_seconds', { quantile: '0.9' }) === null, 'prometheus: missing');
  expect(v('vllm:generation_tokens_total') === 1024, 'prometheus: sum over label sets');
  expect(prom.counterRate(100, 160, 2) === 30, 'prometheus: rate');
  expect(prom.counterRate(100, 10, 1) === null, 'prometheus: counter reset is a gap');
  return problems;
}
