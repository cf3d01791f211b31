// Calls to the brisk server (same origin): /props, /metrics and streamed chat completions.
// Errors come back as ApiError with the server's own message ({"error":{"message"}}) when it
// sent one, so the page can show the user what actually went wrong.

import { SseParser } from './sse.js';

// kind: 'http' (the server answered with an error), 'unreachable' (no connection at all),
// 'dropped' (the connection ended mid-answer), 'stream' (the server reported an error in the
// stream or sent something unreadable).
export class ApiError extends Error {
  constructor(message, status = 0, kind = 'http') {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.kind = kind;
  }
}

export function authHeaders(apiKey) {
  const h = {};
  if (apiKey) h['Authorization'] = `Bearer ${apiKey}`;
  return h;
}

// The message of an OpenAI-style error body, or a description of the status.
async function errorFromResponse(resp) {
  let text = '';
  try {
    text = await resp.text();
  } catch {
    // body unreadable: fall through to the status line
  }
  try {
    const body = JSON.parse(text);
    const msg = body && body.error && body.error.message;
    if (typeof msg === 'string' && msg) return new ApiError(msg, resp.status);
  } catch {
    // not JSON
  }
  const snippet = text.trim().slice(0, 200);
  return new ApiError(`HTTP ${resp.status} ${resp.statusText}${snippet ? ': ' + snippet : ''}`,
                      resp.status);
}

async function fetchOrThrow(url, options) {
  let resp;
  try {
    resp = await fetch(url, options);
  } catch (e) {
    if (e && e.name === 'AbortError') throw e;
    throw new ApiError('cannot reach the server: is brisk still running, and is this the ' +
                       `right address? (${e && e.message ? e.message : e})`, 0, 'unreachable');
  }
  if (!resp.ok) throw await errorFromResponse(resp);
  return resp;
}

export async function fetchProps(apiKey) {
  const resp = await fetchOrThrow('/props', { headers: authHeaders(apiKey) });
  try {
    return await resp.json();
  } catch {
    throw new ApiError('/props did not return JSON');
  }
}

export async function fetchMetricsText(apiKey, signal) {
  const resp = await fetchOrThrow('/metrics', { headers: authHeaders(apiKey), signal });
  return resp.text();
}

// Streams one chat completion. `onDelta(text)` gets content as it arrives, `onReasoning(text)`
// a `reasoning_content` delta (servers that split reasoning out), `onChunk(obj)` every chunk. Resolves to
// { finishReason, usage, timings, sawDone } or rejects with ApiError / AbortError.
export async function streamChat({ body, apiKey, signal, onDelta, onReasoning, onChunk }) {
  const resp = await fetchOrThrow('/v1/chat/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...authHeaders(apiKey) },
    body: JSON.stringify(body),
    signal,
  });
  const result = { finishReason: null, usage: null, timings: null, sawDone: false };
  let failure = null;
  const parser = new SseParser((data) => {
    if (failure || result.sawDone) return;
    if (data.trim() === '[DONE]') {
      result.sawDone = true;
      return;
    }
    let obj;
    try {
      obj = JSON.parse(data);
    } catch {
      failure = new ApiError(`malformed stream event: ${data.slice(0, 120)}`, 0, 'stream');
      return;
    }
    if (obj && obj.error) {
      failure = new ApiError(
          typeof obj.error.message === 'string' ? obj.error.message : JSON.stringify(obj.error),
          0, 'stream');
      return;
    }
    if (onChunk) onChunk(obj);
    const choice = Array.isArray(obj.choices) ? obj.choices[0] : null;
    if (choice) {
      const content = choice.delta && choice.delta.content;
      if (typeof content === 'string' && content) onDelta(content);
      const reasoning = choice.delta && choice.delta.reasoning_content;
      if (typeof reasoning === 'string' && reasoning && onReasoning) onReasoning(reasoning);
      if (choice.finish_reason) result.finishReason = choice.finish_reason;
    }
    if (obj.usage) result.usage = obj.usage;
    if (obj.timings) result.timings = obj.timings;
  });

  if (!resp.body) throw new ApiError('the response has no body to stream');
  const reader = resp.body.getReader();
  try {
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (e && e.name === 'AbortError') throw e;
        throw new ApiError('the connection to the server dropped mid-answer ' +
                           `(${e && e.message ? e.message : e})`, 0, 'dropped');
      }
      const { value, done } = chunk;
      if (done) break;
      parser.push(value);
      if (failure) break;
    }
    if (!failure) parser.end();
  } finally {
    if (failure) reader.cancel().catch(() => {});
  }
  if (failure) throw failure;
  if (!result.sawDone && !result.finishReason) {
    throw new ApiError('the connection to the server closed before the answer was complete',
                       0, 'dropped');
  }
  return result;
}
