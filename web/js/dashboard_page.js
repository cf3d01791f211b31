// The dashboard page: polls GET /metrics once a second and keeps ~2 minutes of samples for
// live charts of load, batching, KV cache, throughput and latency percentiles. A failed poll
// or a missing metric becomes a gap, never a guessed value.

import { fetchMetricsText } from './api.js';
import { LineChart } from './chart.js';
import { counterRate, metricValue, parsePrometheus } from './prometheus.js';
import { showServerInfo } from './server_info.js';
import { loadSettings } from './store.js';

const POLL_MS = 1000;
const TIMEOUT_MS = 5000;
const WINDOW_S = 120;
const RATE_WINDOW_MS = 5000;  // tokens/s are averaged over this long

const QUANTILES = [['p50', '0.5'], ['p90', '0.9'], ['p99', '0.99']];

// Every chart names its unit; counts (requests, sequences) get whole-number ticks.
const CHARTS = [
  { id: 'requests', title: 'Requests', unit: 'requests', integer: true, series: [
    { key: 'running', label: 'running' }, { key: 'waiting', label: 'waiting' }] },
  { id: 'batch', title: 'Batch size', unit: 'sequences per step', integer: true, series: [
    { key: 'batch', label: 'batch' }, { key: 'cap', label: 'max_num_seqs' }] },
  { id: 'kv', title: 'KV cache usage', unit: '%', yMax: 100, series: [
    { key: 'kv', label: 'used' }] },
  { id: 'tokens', title: 'Throughput', unit: 'tokens/s', series: [
    { key: 'gen_tps', label: 'generated' }, { key: 'prompt_tps', label: 'prompt' }] },
  { id: 'ttft', title: 'Time to first token', unit: 'ms', series: QUANTILES.map(([label]) => (
    { key: `ttft_${label}`, label })) },
  { id: 'tpot', title: 'Time per output token', unit: 'ms', series: QUANTILES.map(([label]) => (
    { key: `tpot_${label}`, label })) },
];

const ALL_KEYS = CHARTS.flatMap((c) => c.series.map((s) => s.key));

const scale = (v, k) => (v === null ? null : v * k);

// One sample's values from the metrics and `base`, the oldest counter reading of the rate window
// (null on the first poll: no rate yet).
function sampleValues(samples, base, dtSeconds) {
  const get = (name, match) => metricValue(samples, name, match);
  // brisk's per-step counters grow with every engine step (each prefill chunk, each sampled
  // token), so the rates move while work happens; vLLM's counters (the fallbacks, for other
  // servers) only grow when a request finishes, which reads 0 during a long prefill and then a
  // spike (issue 32).
  const either = (mine, theirs) => {
    const v = get(mine);
    return v !== null ? v : get(theirs);
  };
  const counters = {
    gen: either('brisk:engine_generation_tokens_total', 'vllm:generation_tokens_total'),
    prompt: either('brisk:engine_prompt_tokens_computed_total', 'vllm:prompt_tokens_total'),
  };
  const values = {
    running: get('vllm:num_requests_running'),
    waiting: get('vllm:num_requests_waiting'),
    batch: get('brisk:batch_size'),
    cap: get('brisk:max_num_seqs'),
    kv: scale(get('vllm:kv_cache_usage_perc'), 100),
    gen_tps: base ? counterRate(base.gen, counters.gen, dtSeconds) : null,
    prompt_tps: base ? counterRate(base.prompt, counters.prompt, dtSeconds) : null,
  };
  for (const [label, q] of QUANTILES) {
    values[`ttft_${label}`] = scale(get('brisk:recent_ttft_seconds', { quantile: q }), 1000);
    values[`tpot_${label}`] = scale(get('brisk:recent_tpot_seconds', { quantile: q }), 1000);
  }
  return { values, counters };
}

const container = document.getElementById('charts');
const status = document.getElementById('poll-status');
const charts = CHARTS.map((c) => new LineChart(container, { ...c, windowSeconds: WINDOW_S }));
const history = [];
// { t, counters } of the successful polls in the rate window, oldest first. The counters move
// once per engine step, and a prefill step of a long prompt can take longer than one poll: a rate
// over a single poll would flicker between 0 and twice the real speed.
let readings = [];

// The reading rates are taken from: the newest one at least RATE_WINDOW_MS old, else the oldest.
function rateBase(now) {
  while (readings.length > 1 && readings[1].t <= now - RATE_WINDOW_MS) readings.shift();
  return readings.length ? readings[0] : null;
}

function gapValues() {
  return Object.fromEntries(ALL_KEYS.map((k) => [k, null]));
}

function record(t, values) {
  history.push({ t, values });
  while (history.length && history[0].t < t - (WINDOW_S + 5) * 1000) history.shift();
  for (const chart of charts) chart.update(history, t);
}

async function poll() {
  const started = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  try {
    const text = await fetchMetricsText(loadSettings().api_key, controller.signal);
    const now = Date.now();
    const { samples, skipped } = parsePrometheus(text);
    const base = rateBase(now);
    const dt = base ? (now - base.t) / 1000 : 0;
    const { values, counters } = sampleValues(samples, base && base.counters, dt);
    readings.push({ t: now, counters });
    record(now, values);
    status.textContent = `updated ${new Date(now).toLocaleTimeString()}` +
        (skipped ? ` · ${skipped} unreadable lines skipped` : '');
    status.classList.remove('error');
  } catch (e) {
    readings = [];  // a rate across a failed poll would span an unknown interval
    record(Date.now(), gapValues());
    const msg = e && e.name === 'AbortError' ? 'timed out' : e && e.message ? e.message : e;
    status.textContent = e && e.status === 401 ?
        'metrics need the API key: set it in the chat page settings' : `metrics: ${msg}`;
    status.classList.add('error');
  } finally {
    clearTimeout(timer);
    setTimeout(poll, Math.max(0, POLL_MS - (Date.now() - started)));
  }
}

poll();
showServerInfo(() => loadSettings().api_key);
