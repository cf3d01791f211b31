// DOM for the chat: one MessageView per message and the conversation list. Views only display
// state handed to them; chat_page.js owns the state and the requests. User text is shown as
// plain text; assistant text goes through the safe Markdown renderer.

import { renderMarkdown } from './markdown.js';

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

// "TTFT 120 ms · 31.5 tok/s · 64 tokens · stop", from the stats a generation recorded.
export function formatStats(stats) {
  if (!stats) return '';
  const parts = [];
  if (Number.isFinite(stats.ttft_ms)) parts.push(`TTFT ${Math.round(stats.ttft_ms)} ms`);
  if (Number.isFinite(stats.tps)) parts.push(`${stats.tps.toFixed(1)} tok/s`);
  if (Number.isFinite(stats.tokens)) {
    parts.push(`${stats.tokens} ${stats.tokens === 1 ? 'token' : 'tokens'}`);
  }
  if (stats.finish) parts.push(stats.finish);
  return parts.join(' · ');
}

export class MessageView {
  // actions: { onRegenerate() }
  constructor(actions) {
    this.actions = actions;
    this.root = el('article', 'message');
    this.root.setAttribute('data-testid', 'message');
    this.role = el('div', 'message-role');
    this.content = el('div', 'message-content');
    this.content.setAttribute('data-testid', 'message-content');
    this.error = el('div', 'message-error');
    this.error.setAttribute('data-testid', 'message-error');
    this.error.setAttribute('role', 'alert');
    this.footer = el('div', 'message-footer');
    this.stats = el('span', 'message-stats');
    this.stats.setAttribute('data-testid', 'message-stats');
    this.regenerate = el('button', 'link-button', 'Regenerate');
    this.regenerate.type = 'button';
    this.regenerate.setAttribute('data-testid', 'regenerate');
    this.regenerate.addEventListener('click', () => this.actions.onRegenerate());
    this.footer.append(this.stats, this.regenerate);
    this.root.append(this.role, this.content, this.error, this.footer);
    this.renderedText = null;
  }

  // msg: { role, content, error?, stopped?, stats? }; state: 'streaming' | 'done';
  // canRegenerate: this is the last answer and nothing is running.
  update(msg, { streaming = false, canRegenerate = false } = {}) {
    const state = streaming ? 'streaming' : msg.error ? 'error' : msg.stopped ? 'stopped' : 'done';
    this.root.className = `message role-${msg.role} state-${state}`;
    this.root.setAttribute('data-role', msg.role);
    this.root.setAttribute('data-state', state);
    this.role.textContent = msg.role === 'user' ? 'You' : 'Assistant';
    if (this.renderedText !== msg.content) {
      this.renderedText = msg.content;
      if (msg.role === 'user') {
        this.content.className = 'message-content plain';
        this.content.textContent = msg.content;
      } else {
        this.content.className = 'message-content markdown';
        this.content.replaceChildren(renderMarkdown(msg.content));
      }
    }
    if (streaming && msg.content === '') {
      this.content.replaceChildren(el('span', 'typing', 'waiting for the first token…'));
      this.renderedText = null;
    }
    this.error.hidden = !msg.error;
    this.error.textContent = msg.error ? `Error: ${msg.error}` : '';
    const isAnswer = msg.role === 'assistant';
    this.footer.hidden = !isAnswer;
    let statsText = formatStats(msg.stats);
    if (msg.stopped) statsText = statsText ? `${statsText} · stopped` : 'stopped';
    this.stats.textContent = statsText;
    this.stats.title = msg.stats && msg.stats.source === 'server' ?
        'timings reported by the server' : 'timings measured in this page';
    if (msg.stats && Number.isFinite(msg.stats.ttft_ms)) {
      this.stats.setAttribute('data-ttft-ms', String(msg.stats.ttft_ms));
    } else {
      this.stats.removeAttribute('data-ttft-ms');
    }
    if (msg.stats && Number.isFinite(msg.stats.tps)) {
      this.stats.setAttribute('data-tps', String(msg.stats.tps));
    } else {
      this.stats.removeAttribute('data-tps');
    }
    this.regenerate.hidden = !(isAnswer && canRegenerate);
  }
}

// The conversation list. actions: { onSelect(id), onDelete(id) }.
export function renderConversationList(listEl, conversations, currentId, busy, actions) {
  listEl.replaceChildren();
  for (const c of conversations) {
    const li = el('li', c.id === currentId ? 'conversation current' : 'conversation');
    li.setAttribute('data-testid', 'conversation');
    li.setAttribute('data-id', c.id);
    const open = el('button', 'conversation-open', c.title || 'New chat');
    open.type = 'button';
    open.title = c.title || 'New chat';
    open.disabled = busy;
    if (c.id === currentId) open.setAttribute('aria-current', 'true');
    open.addEventListener('click', () => actions.onSelect(c.id));
    const del = el('button', 'conversation-delete', '×');
    del.type = 'button';
    del.title = 'Delete this conversation';
    del.setAttribute('aria-label', `Delete conversation ${c.title || ''}`);
    del.setAttribute('data-testid', 'conversation-delete');
    del.disabled = busy;
    del.addEventListener('click', () => actions.onDelete(c.id));
    li.append(open, del);
    listEl.appendChild(li);
  }
}
