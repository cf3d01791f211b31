// The chat page (index.html): conversations, sending, streaming, stop and regenerate.
// State lives here; chat_view.js draws it, store.js persists it, api.js talks to the server.

import { ApiError, streamChat } from './api.js';
import { MessageView, renderConversationList } from './chat_view.js';
import { SettingsPanel } from './settings_panel.js';
import {
  loadConversations, loadCurrentId, newId, requestFields, saveConversations, saveCurrentId,
  titleFor,
} from './store.js';
import { showServerInfo } from './server_info.js';

const $ = (id) => document.getElementById(id);
const ui = {
  messages: $('messages'),
  emptyHint: $('empty-hint'),
  input: $('message-input'),
  send: $('send'),
  stop: $('stop'),
  composer: $('composer'),
  list: $('conversation-list'),
  newChat: $('new-chat'),
};

const state = {
  conversations: loadConversations(),
  current: null,
  props: null,
  views: new Map(),  // message object -> MessageView
  running: null,     // { controller, msg } while a generation streams
};

const settingsPanel = new SettingsPanel(() => {});

function persist() {
  if (state.current) {
    state.current.title = titleFor(state.current);
    state.current.updated = Date.now();
  }
  saveConversations(state.conversations);
}

function isNearBottom() {
  const m = ui.messages;
  return m.scrollHeight - m.scrollTop - m.clientHeight < 80;
}

function renderList() {
  renderConversationList(ui.list, state.conversations, state.current && state.current.id,
                         !!state.running, { onSelect: select, onDelete: remove });
  ui.newChat.disabled = !!state.running;
}

function lastAnswer() {
  const msgs = state.current ? state.current.messages : [];
  const last = msgs[msgs.length - 1];
  return last && last.role === 'assistant' ? last : null;
}

function updateView(msg) {
  const view = state.views.get(msg);
  if (!view) return;
  const streaming = !!state.running && state.running.msg === msg;
  view.update(msg, { streaming, canRegenerate: !state.running && msg === lastAnswer() });
}

function renderMessages() {
  const stick = isNearBottom();
  const msgs = state.current ? state.current.messages : [];
  const views = new Map();
  const nodes = [];
  for (const msg of msgs) {
    const view = state.views.get(msg) || new MessageView({ onRegenerate: regenerate });
    views.set(msg, view);
    nodes.push(view.root);
  }
  state.views = views;
  ui.emptyHint.hidden = msgs.length > 0;
  ui.messages.replaceChildren(ui.emptyHint, ...nodes);
  for (const msg of msgs) updateView(msg);
  if (stick) ui.messages.scrollTop = ui.messages.scrollHeight;
}

function renderControls() {
  const busy = !!state.running;
  ui.send.hidden = busy;
  ui.stop.hidden = !busy;
  ui.send.disabled = busy;
  renderList();
}

function renderAll() {
  renderMessages();
  renderControls();
}

function createConversation() {
  const c = { id: newId(), title: 'New chat', updated: Date.now(), messages: [] };
  state.conversations.unshift(c);
  return c;
}

function select(id) {
  if (state.running) return;
  const c = state.conversations.find((x) => x.id === id);
  if (!c) return;
  state.current = c;
  saveCurrentId(c.id);
  renderAll();
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

function newChat() {
  if (state.running) return;
  // An untouched empty chat is reused rather than piling up empty entries.
  const empty = state.conversations.find((c) => c.messages.length === 0);
  const c = empty || createConversation();
  persist();
  select(c.id);
  ui.input.focus();
}

function remove(id) {
  if (state.running) return;
  state.conversations = state.conversations.filter((c) => c.id !== id);
  if (!state.current || state.current.id === id) {
    state.current = state.conversations[0] || createConversation();
    saveCurrentId(state.current.id);
  }
  saveConversations(state.conversations);
  renderAll();
}

// The messages sent for a generation: the system prompt, then every finished turn before `upTo`
// (answers that failed with nothing to show are left out).
function history(upTo) {
  const out = [];
  const system = settingsPanel.settings.system_prompt.trim();
  if (system) out.push({ role: 'system', content: system });
  for (const m of state.current.messages) {
    if (m === upTo) break;
    if (m.role === 'assistant' && m.content === '') continue;
    out.push({ role: m.role, content: m.content });
  }
  return out;
}

// At most one re-render per frame per message, however fast tokens arrive.
const queuedRenders = new WeakSet();
function scheduleRender(msg) {
  if (queuedRenders.has(msg)) return;
  queuedRenders.add(msg);
  requestAnimationFrame(() => {
    queuedRenders.delete(msg);
    const stick = isNearBottom();
    updateView(msg);
    if (stick) ui.messages.scrollTop = ui.messages.scrollHeight;
  });
}

// Streams an answer into `msg` (an assistant message already in the conversation).
async function generate(msg) {
  const settings = settingsPanel.settings;
  const body = {
    messages: history(msg),
    stream: true,
    stream_options: { include_usage: true },
    ...requestFields(settings),
  };
  if (state.props && typeof state.props.model === 'string') body.model = state.props.model;

  const controller = new AbortController();
  state.running = { controller, msg };
  msg.content = '';
  delete msg.error;
  delete msg.stopped;
  delete msg.stats;
  renderAll();

  const t0 = performance.now();
  let tFirst = null;
  let tLast = null;
  let deltas = 0;
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
        const now = performance.now();
        if (tFirst === null) tFirst = now;
        tLast = now;
        deltas++;
        msg.content += text;
        scheduleRender(msg);
      },
    });
    const stats = measured();
    const t = result.timings || {};
    const u = result.usage || {};
    if (Number.isFinite(u.completion_tokens)) stats.tokens = u.completion_tokens;
    else if (Number.isFinite(t.predicted_n)) stats.tokens = t.predicted_n;
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
    } else {
      msg.error = e instanceof ApiError ? e.message : String(e && e.message ? e.message : e);
      if (deltas > 0) msg.stats = measured();
    }
  } finally {
    state.running = null;
    persist();
    renderAll();
  }
}

function send(text) {
  if (state.running || !text.trim()) return;
  if (!settingsPanel.valid()) {
    settingsPanel.setOpen(true);
    return;
  }
  if (!state.current) state.current = createConversation();
  const user = { role: 'user', content: text };
  const answer = { role: 'assistant', content: '' };
  state.current.messages.push(user, answer);
  persist();
  ui.input.value = '';
  ui.messages.scrollTop = ui.messages.scrollHeight;
  generate(answer);
}

function regenerate() {
  const last = lastAnswer();
  if (state.running || !last || !settingsPanel.valid()) return;
  generate(last);
}

function stop() {
  if (state.running) state.running.controller.abort();
}

ui.composer.addEventListener('submit', (e) => {
  e.preventDefault();
  send(ui.input.value);
});
ui.input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send(ui.input.value);
  }
});
ui.stop.addEventListener('click', stop);
ui.newChat.addEventListener('click', newChat);
window.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') stop();
});

// Start: the last open conversation, else the newest, else a fresh one.
const currentId = loadCurrentId();
state.current = state.conversations.find((c) => c.id === currentId) ||
    state.conversations[0] || createConversation();
renderAll();
ui.messages.scrollTop = ui.messages.scrollHeight;
ui.input.focus();

showServerInfo(() => settingsPanel.settings.api_key).then((props) => {
  state.props = props;
});
