// Checks every expectation of regex.jsonl against JavaScript's own RegExp (Unicode mode, the
// whole string): node tests/data/structured/verify_regex_jsonl.mjs tests/data/structured/regex.jsonl
import fs from 'node:fs';
let bad = 0, n = 0;
for (const line of fs.readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const e = JSON.parse(line); n++;
  let re;
  try { re = new RegExp('^(?:' + e.pattern + ')$', 'u'); } catch (err) { console.log('SYNTAX', e.pattern, err.message); bad++; continue; }
  if (e.accept.length < 1 || e.reject.length < 3) { console.log('FEW', e.pattern); }
  for (const s of e.accept) if (!re.test(s)) { console.log('ACCEPT FAILS', e.pattern, JSON.stringify(s)); bad++; }
  for (const s of e.reject) if (re.test(s)) { console.log('REJECT FAILS', e.pattern, JSON.stringify(s)); bad++; }
}
console.log(n, 'patterns,', bad, 'problems');
process.exit(bad ? 1 : 0);
