// The chat page (index.html): conversations as trees of messages (conversation_tree.js), sending,
// streaming, stop, edit/regenerate as branches, delete with undo, export/import, the drawer.
// State lives here; chat_view.js / sidebar.js draw it, store.js persists it, generation.js runs
// one answer.

import { Attachments } from './attachments.js';
import { MessageView, messageText } from './chat_view.js';
import { conversationActions } from './conversation_actions.js';
import { downloadJson, exportJson } from './conversation_io.js';
import {
  activePath, addChild, newConversation, selectSibling, siblingInfo,
} from './conversation_tree.js';
import { generateInto, history } from './generation.js';
import { SettingsPanel } from './settings_panel.js';
import { renderConversationList, showToast } from './sidebar.js';
import {
  loadConversations, loadCurrentId, newId, saveConversations, saveCurrentId, titleFor,
} from './store.js';
import { showServerInfo } from './server_info.js';
import { ContextMeter } from './context_meter.js';

const $ = (id) => document.getElementById(id);
const ui = {
  messages: $('messages'), emptyHint: $('empty-hint'), input: $('message-input'),
  send: $('send'), stop: $('stop'), composer: $('composer'), list: $('conversation-list'),
  newChat: $('new-chat'), search: $('conversation-search'), storeError: $('store-error'),
  convSystem: $('conv-system_prompt'), drawerToggle: $('drawer-toggle'),
  backdrop: $('drawer-backdrop'),
};

const loaded = loadConversations();
const state = {
  conversations: loaded.conversations,
  current: null,
  props: null,
  views: new Map(),  // node id -> MessageView
  running: null,     // { controller, msg, conv } while a generation streams
  query: '',
};
if (loaded.problem) showStoreError(loaded.problem);

const settingsPanel = new SettingsPanel(() => {});
const meter = new ContextMeter($('context-meter'), () => settingsPanel.settings.api_key);
const attachments = new Attachments({
  input: ui.input, list: $('attachment-list'), fileInput: $('attach-file'),
  button: $('attach'), onError: (m) => showToast(m),
});

function showStoreError(text) {
  ui.storeError.textContent = text;
  ui.storeError.hidden = false;
}

function persist() {
  const c = state.current;
  if (c) {
    if (!c.named) c.title = titleFor(c);
    c.updated = Date.now();
    saveCurrentId(c.id);
  }
  if (!saveConversations(state.conversations)) {
    showStoreError('This browser refused to store the conversations (storage full or ' +
                   'private mode): export them to keep them.');
  }
}

function isNearBottom() {
  const m = ui.messages;
  return m.scrollHeight - m.scrollTop - m.clientHeight < 80;
}

function renderList() {
  renderConversationList(ui.list, state.conversations, state.current && state.current.id,
                         !!state.running, state.query, {
                           onSelect: select, onDelete: removeConversation,
                           onRename: rename, onExport: exportOne,
                         });
  ui.newChat.disabled = !!state.running;
}

function updateView(msg) {
  const view = state.views.get(msg.id);
  if (!view) return;
  const busy = !!state.running;
  view.update(msg, { streaming: busy && state.running.msg === msg, busy,
                     sibling: siblingInfo(state.current, msg) });
}

const viewActions = {
  onRegenerate: regenerate, onEdit: edit, onDelete: (msg) => deleteMessage(msg),
  onSibling: (msg, delta) => {
    if (state.running || !selectSibling(state.current, msg, delta)) return;
    persist();
    renderAll();
  },
  onCopy: async (msg) => {
    try {
      await navigator.clipboard.writeText(messageText(msg));
      return true;
    } catch {
      return false;
    }
  },
};

function renderMessages() {
  const stick = isNearBottom();
  const path = state.current ? activePath(state.current) : [];
  const views = new Map();
  for (const msg of path) views.set(msg.id, state.views.get(msg.id) || new MessageView(viewActions));
  state.views = views;
  ui.emptyHint.hidden = path.length > 0;
  ui.messages.replaceChildren(ui.emptyHint, ...[...views.values()].map((v) => v.root));
  for (const msg of path) updateView(msg);
  if (stick) ui.messages.scrollTop = ui.messages.scrollHeight;
  meter.show(path, state.props);
}

function renderAll() {
  const busy = !!state.running;
  renderMessages();
  ui.send.hidden = busy;
  ui.stop.hidden = !busy;
  ui.send.disabled = busy;
  ui.convSystem.value = state.current ? state.current.system_prompt : '';
  renderList();
}

function createConversation() {
  const c = newConversation(newId());
  state.conversations.unshift(c);
  return c;
}

function setDrawer(open) {
  document.body.classList.toggle('drawer-open', open);
  ui.drawerToggle.setAttribute('aria-expanded', String(open));
}

function select(id) {
  if (state.running) return;
  const c = state.conversations.find((x) => x.id === id);
  if (!c) return;
  state.current = c;
  saveCurrentId(c.id);
  setDrawer(false);
  renderAll();
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

function newChat() {
  if (state.running) return;
  // An untouched empty chat is reused rather than piling up empty entries.
  const empty = state.conversations.find((c) => c.children.length === 0);
  const c = empty || createConversation();
  persist();
  select(c.id);
  ui.input.focus();
}

const { removeConversation, deleteMessage, rename, exportOne, importFile } =
    conversationActions({ state, persist, renderAll, renderList, select, createConversation });

// At most one re-render per frame per message, however fast tokens arrive.
const queued = new Set();
function scheduleRender(msg) {
  if (queued.has(msg)) return;
  queued.add(msg);
  requestAnimationFrame(() => {
    queued.delete(msg);
    const stick = isNearBottom();
    updateView(msg);
    if (stick) ui.messages.scrollTop = ui.messages.scrollHeight;
  });
}

async function generate(msg) {
  const conv = state.current;
  const settings = settingsPanel.settings;
  const controller = new AbortController();
  const system = conv.system_prompt || settings.system_prompt;
  const messages = history(activePath(conv), msg, system);
  state.running = { controller, msg, conv };
  persist();
  renderAll();
  await generateInto(msg, {
    messages, settings, controller,
    model: state.props && typeof state.props.model === 'string' ? state.props.model : '',
    onUpdate: () => scheduleRender(msg),
  });
  state.running = null;
  persist();
  renderAll();
}

function ready() {
  if (state.running) return false;
  if (!settingsPanel.valid()) {
    settingsPanel.setOpen(true);
    return false;
  }
  return true;
}

function send(text) {
  if (!ready() || (!text.trim() && attachments.items.length === 0)) return;
  if (!state.current) state.current = createConversation();
  const path = activePath(state.current);
  const parent = path.length ? path[path.length - 1].id : null;
  const fields = { role: 'user', content: text };
  const files = attachments.take();
  if (files.length) fields.attachments = files;
  const user = addChild(state.current, parent, fields, newId());
  const answer = addChild(state.current, user.id, { role: 'assistant', content: '' }, newId());
  ui.input.value = '';
  ui.messages.scrollTop = ui.messages.scrollHeight;
  generate(answer);
}

// An edited question is a new sibling of the old one, answered afresh; the old stays as "1 / 2".
function edit(msg, text) {
  if (!ready()) return;
  const fields = { role: 'user', content: text };
  if (msg.attachments) fields.attachments = msg.attachments.map((a) => ({ ...a }));
  const user = addChild(state.current, msg.parent, fields, newId());
  generate(addChild(state.current, user.id, { role: 'assistant', content: '' }, newId()));
}

// A new answer beside the old ones; an answer that failed without any text is simply redone.
function regenerate(msg) {
  if (!ready()) return;
  if (msg.error && msg.content === '') {
    generate(msg);
    return;
  }
  generate(addChild(state.current, msg.parent, { role: 'assistant', content: '' }, newId()));
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
ui.stop.addEventListener('click', () => state.running && state.running.controller.abort());
ui.newChat.addEventListener('click', newChat);
ui.search.addEventListener('input', () => {
  state.query = ui.search.value.trim();
  renderList();
});
ui.convSystem.addEventListener('input', () => {
  if (!state.current) return;
  state.current.system_prompt = ui.convSystem.value;
  saveConversations(state.conversations);
});
$('export-all').addEventListener('click', () =>
  downloadJson('brisk-conversations.json', exportJson(state.conversations)));
$('import').addEventListener('click', () => $('import-file').click());
$('import-file').addEventListener('change', async (e) => {
  for (const f of e.target.files) await importFile(f);
  e.target.value = '';
});
ui.drawerToggle.addEventListener('click', () =>
  setDrawer(!document.body.classList.contains('drawer-open')));
ui.backdrop.addEventListener('click', () => setDrawer(false));
window.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape') return;
  if (state.running) state.running.controller.abort();
  setDrawer(false);
});

// Start: the last open conversation, else the newest, else a fresh one.
const currentId = loadCurrentId();
state.current = state.conversations.find((c) => c.id === currentId) ||
    state.conversations[0] || createConversation();
renderAll();
ui.messages.scrollTop = ui.messages.scrollHeight;
if (matchMedia('(min-width: 801px)').matches) ui.input.focus();

showServerInfo(() => settingsPanel.settings.api_key).then((props) => {
  state.props = props;
  renderMessages();
});
