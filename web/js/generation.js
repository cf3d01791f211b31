// One streamed answer: builds the request from the active path, streams it into the answer node
// and records stats, usage and how it ended (done, stopped, error, interrupted). The page's
// state object is only read here, never reorganised.

import { ApiError, streamChat } from './api.js';
import { splitThink, messageText } from './chat_view.js';
import { requestFields } from './store.js';

// A turn whose answer failed before any text (e.g. a prompt over the context limit) is left
// out of what is sent, so one failed message cannot fail every later one.
function failedTurn(answer) {
  return answer && answer.role === 'assistant' && !!answer.error &&
      splitThink(answer.content).answer === '';
}

// The messages sent to generate `answer` (a node on `path`): the system prompt, then every
// usable turn before it. Reasoning is not sent back (Qwen3's chat template drops it too).
export function history(path, answer, systemPrompt) {
  const out = [];
  if (systemPrompt.trim()) out.push({ role: 'system', content: systemPrompt.trim() });
  for (let k = 0; k < path.length; k++) {
    const m = path[k];
    if (m === answer) break;
    if (m.role === 'user') {
      if (path[k + 1] !== answer && failedTurn(path[k + 1])) continue;
      out.push({ role: 'user', content: messageText(m) });
    } else {
      const text = splitThink(m.content).answer;
      if (text !== '') out.push({ role: 'assistant', content: text });
    }
  }
  return out;
}

// Streams into `msg`; `onUpdate()` after each delta. Resolves when the answer ended in any way.
export async function generateInto(msg, { messages, settings, model, controller, onUpdate }) {
  const body = {
    messages,
    stream: true,
    stream_options: { include_usage: true },
    ...requestFields(settings),
  };
  if (model) body.model = model;
  for (const k of ['error', 'stopped', 'interrupted', 'stats', 'reasoning']) delete msg[k];
  msg.content = '';

  const t0 = performance.now();
  let tFirst = null;
  let tLast = null;
  let deltas = 0;
  const tick = () => {
    const now = performance.now();
    if (tFirst === null) tFirst = now;
    tLast = now;
    deltas++;
    onUpdate();
  };
  const measured = () => {
    const stats = { tokens: deltas, source: 'page' };
    if (tFirst !== null) stats.ttft_ms = tFirst - t0;
    if (deltas > 1 && tLast > tFirst) stats.tps = (deltas - 1) / ((tLast - tFirst) / 1000);
    return stats;
  };
  try {
    const result = await streamChat({
      body,
      apiKey: settings.api_key,
      signal: controller.signal,
      onDelta: (text) => {
        msg.content += text;
        tick();
      },
      onReasoning: (text) => {
        msg.reasoning = (msg.reasoning || '') + text;
        tick();
      },
    });
    const stats = measured();
    const t = result.timings || {};
    const u = result.usage || {};
    if (Number.isFinite(u.completion_tokens)) stats.tokens = u.completion_tokens;
    else if (Number.isFinite(t.predicted_n)) stats.tokens = t.predicted_n;
    if (Number.isFinite(u.prompt_tokens)) stats.prompt_tokens = u.prompt_tokens;
    if (Number.isFinite(t.ttft_ms)) stats.ttft_ms = t.ttft_ms;
    if (Number.isFinite(t.predicted_per_second)) stats.tps = t.predicted_per_second;
    if (Number.isFinite(t.ttft_ms) || Number.isFinite(t.predicted_per_second)) {
      stats.source = 'server';
    }
    if (result.finishReason) stats.finish = result.finishReason;
    msg.stats = stats;
  } catch (e) {
    if (e && e.name === 'AbortError') {
      msg.stopped = true;
      msg.stats = measured();
    } else if (e instanceof ApiError && e.kind === 'dropped' && msg.content !== '') {
      msg.interrupted = e.message;  // the partial text stays, marked as interrupted
      msg.stats = measured();
    } else {
      msg.error = e instanceof ApiError ? e.message : String(e && e.message ? e.message : e);
      if (deltas > 0) msg.stats = measured();
    }
  }
}
