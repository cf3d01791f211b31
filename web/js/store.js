// Settings and conversations, kept in localStorage. What is stored there may be old, edited by
// hand or written by another version of the page, so everything read back is checked and
// anything unusable falls back to defaults; storage that refuses writes (quota, private mode)
// only loses persistence, never the page.

const SETTINGS_KEY = 'brisk.settings.v1';
const CONVERSATIONS_KEY = 'brisk.conversations.v1';
const CURRENT_KEY = 'brisk.current.v1';

export const MODES = ['', 'qa', 'code', 'copywriting'];

// Empty string = "not sent": the server's defaults (and the mode preset's) apply.
export const DEFAULT_SETTINGS = Object.freeze({
  temperature: '',
  top_p: '',
  repetition_penalty: '',
  max_tokens: '',
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
};

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
  return body;
}

// ---- conversations ----

function validMessage(m) {
  return m && typeof m === 'object' && (m.role === 'user' || m.role === 'assistant') &&
      typeof m.content === 'string';
}

function cleanConversation(c) {
  if (!c || typeof c !== 'object' || typeof c.id !== 'string' || !Array.isArray(c.messages)) {
    return null;
  }
  return {
    id: c.id,
    title: typeof c.title === 'string' ? c.title : '',
    updated: Number.isFinite(c.updated) ? c.updated : 0,
    messages: c.messages.filter(validMessage).map((m) => {
      const msg = { role: m.role, content: m.content };
      if (typeof m.error === 'string') msg.error = m.error;
      if (m.stopped === true) msg.stopped = true;
      if (m.stats && typeof m.stats === 'object') msg.stats = m.stats;
      return msg;
    }),
  };
}

export function newId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return `c${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
}

export function titleFor(conversation) {
  const first = conversation.messages.find((m) => m.role === 'user');
  if (!first) return 'New chat';
  const t = first.content.replace(/\s+/g, ' ').trim();
  return t.length > 48 ? t.slice(0, 47) + '…' : t || 'New chat';
}

// Most recently updated first.
export function loadConversations() {
  const stored = read(CONVERSATIONS_KEY);
  if (!Array.isArray(stored)) return [];
  return stored.map(cleanConversation).filter(Boolean).sort((a, b) => b.updated - a.updated);
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
