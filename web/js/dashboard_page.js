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

const QUANTILES = [['p50', '0.5'], ['p90', '0.9'], ['p99', '0.99']];

const CHARTS = [
  { id: 'requests', title: 'Requests', series: [
    { key: 'running', label: 'running' }, { key: 'waiting', label: 'waiting' }] },
  { id: 'batch', title: 'Batch size', series: [
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

// One sample's values from the metrics and the previous counter readings (for rates;
// null on the first poll).
function sampleValues(samples, prev, dtSeconds) {
  const get = (name, match) => metricValue(samples, name, match);
  // brisk's per-step counter includes tokens of requests still running, so the rate moves while
  // long answers stream; vLLM's counter (the fallback) may only grow when a request finishes.
  const engineGen = get('brisk:engine_generation_tokens_total');
  const counters = {
    gen: engineGen !== null ? engineGen : get('vllm:generation_tokens_total'),
    prompt: get('vllm:prompt_tokens_total'),
  };
  const values = {
    running: get('vllm:num_requests_running'),
    waiting: get('vllm:num_requests_waiting'),
    batch: get('brisk:batch_size'),
    cap: get('brisk:max_num_seqs'),
    kv: scale(get('vllm:kv_cache_usage_perc'), 100),
    gen_tps: prev ? counterRate(prev.gen, counters.gen, dtSeconds) : null,
    prompt_tps: prev ? counterRate(prev.prompt, counters.prompt, dtSeconds) : null,
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
let prev = null;  // { t, counters } of the last successful poll

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
    const dt = prev ? (now - prev.t) / 1000 : 0;
    const { values, counters } = sampleValues(samples, prev && prev.counters, dt);
    prev = { t: now, counters };
    record(now, values);
    status.textContent = `updated ${new Date(now).toLocaleTimeString()}` +
        (skipped ? ` · ${skipped} unreadable lines skipped` : '');
    status.classList.remove('error');
  } catch (e) {
    prev = null;  // a rate across a failed poll would span an unknown interval
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
