// Parser for the Prometheus text exposition format (what GET /metrics returns), and the small
// queries the dashboard makes on it. Lines it cannot read are skipped and counted, never fatal:
// one odd line must not blank the whole dashboard.

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

function parseValue(s) {
  if (s === 'NaN') return NaN;
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  return Number(s);
}

// Reads `{a="x",b="y\"z"}` starting at text[i] === '{'. Returns [labels, nextIndex] or null.
function parseLabels(line, i) {
  const labels = {};
  i++;
  for (;;) {
    while (line[i] === ' ' || line[i] === ',') i++;
    if (line[i] === '}') return [labels, i + 1];
    const m = NAME_RE.exec(line.slice(i));
    if (!m) return null;
    const name = m[0];
    i += name.length;
    while (line[i] === ' ') i++;
    if (line[i] !== '=') return null;
    i++;
    while (line[i] === ' ') i++;
    if (line[i] !== '"') return null;
    i++;
    let value = '';
    for (;;) {
      if (i >= line.length) return null;
      const c = line[i];
      if (c === '"') break;
      if (c === '\\') {
        const n = line[i + 1];
        value += n === 'n' ? '\n' : n === undefined ? '' : n;
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    i++;
  }
}

// Returns { samples: [{ name, labels, value }], skipped: number }.
export function parsePrometheus(text) {
  const samples = [];
  let skipped = 0;
  for (const raw of String(text).split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = NAME_RE.exec(line);
    if (!m) {
      skipped++;
      continue;
    }
    let i = m[0].length;
    let labels = {};
    if (line[i] === '{') {
      const parsed = parseLabels(line, i);
      if (!parsed) {
        skipped++;
        continue;
      }
      [labels, i] = parsed;
    }
    const fields = line.slice(i).trim().split(/\s+/);
    const value = parseValue(fields[0] || '');
    if (value === undefined) {
      skipped++;
      continue;
    }
    samples.push({ name: m[0], labels, value });
  }
  return { samples, skipped };
}

// Label values compare as text, or as numbers when both are numbers ("0.5" matches "0.50").
function sameLabel(have, want) {
  if (have === undefined) return false;
  if (have === want) return true;
  const a = Number(have);
  const b = Number(want);
  return have.trim() !== '' && String(want).trim() !== '' && Number.isFinite(a) && a === b;
}

// The sum of every sample named `name` whose labels include `match` (e.g. {quantile: "0.9"});
// null when there is none or any of them is NaN/±Inf (the chart then shows a gap).
export function metricValue(samples, name, match = {}) {
  let sum = null;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (!Object.entries(match).every(([k, v]) => sameLabel(s.labels[k], v))) continue;
    if (!Number.isFinite(s.value)) return null;
    sum = (sum ?? 0) + s.value;
  }
  return sum;
}

// Per-second rate of a counter between two readings; null across a reset or a missing reading.
export function counterRate(prev, cur, dtSeconds) {
  if (prev === null || cur === null || prev === undefined || cur === undefined) return null;
  if (!(dtSeconds > 0) || cur < prev) return null;
  return (cur - prev) / dtSeconds;
}
