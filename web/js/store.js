// Settings and conversations, kept in localStorage. What is stored there may be old, edited by
// hand or written by another version of the page, so everything read back is checked and
// anything unusable falls back to defaults; storage that refuses writes (quota, private mode)
// only loses persistence, never the page.

import { fromLinear, newConversation, treeProblems } from './conversation_tree.js';

const SETTINGS_KEY = 'brisk.settings.v1';
const CONVERSATIONS_V1_KEY = 'brisk.conversations.v1';  // linear lists (read to migrate)
const CONVERSATIONS_KEY = 'brisk.conversations.v2';     // trees (conversation_tree.js)
const CURRENT_KEY = 'brisk.current.v1';

export const MODES = ['', 'qa', 'code', 'copywriting'];

// Empty string = "not sent": the server's defaults (and the mode preset's) apply.
export const DEFAULT_SETTINGS = Object.freeze({
  temperature: '',
  top_p: '',
  repetition_penalty: '',
  max_tokens: '',
  top_k: '',
  min_p: '',
  seed: '',
  stop: '',
  json_mode: '',
  mode: '',
  system_prompt: '',
  api_key: '',
});

// Field rules: [min, max, integer?]; min is exclusive when `minExclusive`.
const NUMERIC = {
  temperature: { min: 0, max: 2 },
  top_p: { min: 0, max: 1, minExclusive: true },
  repetition_penalty: { min: 0, max: 10, minExclusive: true },
  max_tokens: { min: 1, max: 1 << 20, integer: true },
  top_k: { min: 0, max: 1 << 20, integer: true },
  min_p: { min: 0, max: 1 },
  seed: { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true },
};

// Stop sequences: one per line, at most 4 (OpenAI's limit, which the server also applies).
export function stopList(text) {
  return String(text ?? '').split('\n').filter((s) => s !== '');
}

function read(key) {
  try {
    const text = localStorage.getItem(key);
    return text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

// "" when `value` is acceptable for `field`, else a message for the user.
export function validateSetting(field, value) {
  const v = String(value).trim();
  if (field === 'mode') return MODES.includes(v) ? '' : `unknown mode "${v}"`;
  if (field === 'json_mode') return v === '' || v === 'on' ? '' : 'must be on or off';
  if (field === 'stop') return stopList(value).length > 4 ? 'at most 4 lines' : '';
  const rule = NUMERIC[field];
  if (!rule || v === '') return '';
  const n = Number(v);
  if (!Number.isFinite(n)) return 'must be a number';
  if (rule.integer && !Number.isInteger(n)) return 'must be a whole number';
  if (rule.minExclusive ? n <= rule.min : n < rule.min) {
    return `must be ${rule.minExclusive ? 'above' : 'at least'} ${rule.min}`;
  }
  if (n > rule.max) return `must be at most ${rule.max}`;
  return '';
}

export function loadSettings() {
  const stored = read(SETTINGS_KEY);
  const out = { ...DEFAULT_SETTINGS };
  if (stored && typeof stored === 'object') {
    for (const k of Object.keys(DEFAULT_SETTINGS)) {
      if (typeof stored[k] === 'string' && validateSetting(k, stored[k]) === '') out[k] = stored[k];
    }
  }
  return out;
}

export function saveSettings(settings) {
  const out = {};
  for (const k of Object.keys(DEFAULT_SETTINGS)) out[k] = String(settings[k] ?? '');
  return write(SETTINGS_KEY, out);
}

// The request fields the settings add to a chat completion body.
export function requestFields(settings) {
  const body = {};
  for (const k of Object.keys(NUMERIC)) {
    const v = String(settings[k] ?? '').trim();
    if (v !== '' && validateSetting(k, v) === '') body[k] = Number(v);
  }
  if (settings.mode) body.mode = settings.mode;
  const stop = stopList(settings.stop);
  if (stop.length > 0) body.stop = stop;
  if (settings.json_mode === 'on') body.response_format = { type: 'json_object' };
  return body;
}

// ---- conversations ----
// Stored as trees (conversation_tree.js). The first format (v1: a linear `messages` list) is
// migrated on load; the v1 key is left untouched, so going back to an older page loses nothing.
// Stored data that cannot be used is never overwritten: it is copied aside under a
// "brisk.conversations.unreadable.<time>" key and the page says so.

export function newId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return `c${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
}

export function titleFor(conversation) {
  const first = conversation.children.length > 0 ?
      conversation.nodes[conversation.children[conversation.sel]] : null;
  if (!first) return 'New chat';
  const t = first.content.replace(/\s+/g, ' ').trim() ||
      (first.attachments && first.attachments[0] ? first.attachments[0].name : '');
  return t.length > 48 ? t.slice(0, 47) + '…' : t || 'New chat';
}

function migrateV1(c) {
  if (!c || typeof c !== 'object' || typeof c.id !== 'string' || !Array.isArray(c.messages)) {
    return null;
  }
  const conv = newConversation(c.id);
  conv.title = typeof c.title === 'string' ? c.title : '';
  conv.updated = Number.isFinite(c.updated) ? c.updated : 0;
  const messages = c.messages.filter((m) => m && typeof m === 'object' &&
      (m.role === 'user' || m.role === 'assistant') && typeof m.content === 'string').map((m) => {
    const msg = { role: m.role, content: m.content };
    if (typeof m.error === 'string') msg.error = m.error;
    if (m.stopped === true) msg.stopped = true;
    if (m.stats && typeof m.stats === 'object') msg.stats = m.stats;
    return msg;
  });
  return fromLinear(conv, messages, newId);
}

function stashUnreadable(value) {
  const key = `brisk.conversations.unreadable.${Date.now()}`;
  write(key, value);
  return key;
}

// { conversations (newest first), problem: '' or a message for the user }.
export function loadConversations() {
  const stored = read(CONVERSATIONS_KEY);
  let problem = '';
  let list = [];
  if (stored !== null) {
    const bad = [];
    if (!Array.isArray(stored)) {
      bad.push(stored);
    } else {
      for (const c of stored) (treeProblems(c).length === 0 ? list : bad).push(c);
    }
    if (bad.length > 0) {
      const key = stashUnreadable(bad);
      problem = `${bad.length} stored conversation(s) could not be read; they were kept ` +
          `unchanged in this browser's localStorage under "${key}".`;
    }
  } else {
    const old = read(CONVERSATIONS_V1_KEY);
    if (Array.isArray(old)) list = old.map(migrateV1).filter(Boolean);
  }
  list.sort((a, b) => b.updated - a.updated);
  return { conversations: list, problem };
}

export function saveConversations(conversations) {
  return write(CONVERSATIONS_KEY, conversations);
}

export function loadCurrentId() {
  const id = read(CURRENT_KEY);
  return typeof id === 'string' ? id : null;
}

export function saveCurrentId(id) {
  return write(CURRENT_KEY, id);
}
