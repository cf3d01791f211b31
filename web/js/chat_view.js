// DOM for one message (MessageView). Views only display state handed to them; chat_page.js owns
// the state and the requests. User text is shown as plain text; assistant text goes through the
// safe Markdown renderer, with Qwen3-style <think>…</think> reasoning in a collapsed block.

import { renderMarkdown } from './markdown.js';

export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(className, text, testid, title) {
  const b = el('button', className, text);
  b.type = 'button';
  if (testid) b.setAttribute('data-testid', testid);
  if (title) {
    b.title = title;
    b.setAttribute('aria-label', title);
  }
  return b;
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

// Splits a Qwen3-style answer into { reasoning, answer, thinking }: text inside a leading
// <think>…</think> is reasoning; `thinking` while the closing tag has not arrived yet.
export function splitThink(content) {
  const m = /^\s*<think>/.exec(content);
  if (!m) return { reasoning: '', answer: content, thinking: false };
  const rest = content.slice(m[0].length);
  const end = rest.indexOf('</think>');
  if (end < 0) return { reasoning: rest.trim(), answer: '', thinking: true };
  return { reasoning: rest.slice(0, end).trim(), answer: rest.slice(end + 8).replace(/^\s+/, ''),
           thinking: false };
}

// The text of a message as sent back to the model and copied: attachments first, then the text.
export function messageText(msg) {
  const parts = (msg.attachments || []).map((a) => `${a.name}:\n\`\`\`\n${a.text}\n\`\`\``);
  if (msg.content) parts.push(msg.content);
  return parts.join('\n\n');
}

export class MessageView {
  // actions: { onRegenerate(msg), onEdit(msg, text), onDelete(msg), onSibling(msg, delta),
  //            onCopy(msg) → Promise<bool> }
  constructor(actions) {
    this.actions = actions;
    this.msg = null;
    this.root = el('article', 'message');
    this.root.setAttribute('data-testid', 'message');
    this.role = el('div', 'message-role');
    this.attachments = el('div', 'message-attachments');
    this.think = el('details', 'think');
    this.think.setAttribute('data-testid', 'think');
    this.thinkSummary = el('summary', '', 'Reasoning');
    this.thinkBody = el('div', 'think-body');
    this.think.append(this.thinkSummary, this.thinkBody);
    this.content = el('div', 'message-content');
    this.content.setAttribute('data-testid', 'message-content');
    this.editor = el('form', 'message-editor');
    this.editor.hidden = true;
    this.editText = el('textarea', 'edit-input');
    this.editText.setAttribute('data-testid', 'edit-input');
    this.editText.setAttribute('aria-label', 'Edit message');
    this.editText.rows = 3;
    const save = button('primary', 'Save & send', 'edit-save');
    save.type = 'submit';
    const cancel = button('', 'Cancel', 'edit-cancel');
    this.editor.append(this.editText, el('div', 'editor-buttons'));
    this.editor.lastChild.append(save, cancel);
    this.editor.addEventListener('submit', (e) => {
      e.preventDefault();
      if (!this.editText.value.trim() && !(this.msg.attachments || []).length) return;
      this.editing = false;
      this.actions.onEdit(this.msg, this.editText.value);
    });
    cancel.addEventListener('click', () => this.setEditing(false));
    this.error = el('div', 'message-error');
    this.error.setAttribute('data-testid', 'message-error');
    this.error.setAttribute('role', 'alert');
    this.footer = el('div', 'message-footer');
    this.branch = el('span', 'branch-nav');
    this.prev = button('icon-button', '‹', 'branch-prev', 'Previous version');
    this.next = button('icon-button', '›', 'branch-next', 'Next version');
    this.branchLabel = el('span', 'branch-label');
    this.branchLabel.setAttribute('data-testid', 'branch-label');
    this.branch.append(this.prev, this.branchLabel, this.next);
    this.prev.addEventListener('click', () => this.actions.onSibling(this.msg, -1));
    this.next.addEventListener('click', () => this.actions.onSibling(this.msg, +1));
    this.stats = el('span', 'message-stats');
    this.stats.setAttribute('data-testid', 'message-stats');
    this.tools = el('span', 'message-tools');
    this.copy = button('link-button', 'Copy', 'copy-message', 'Copy the whole message');
    this.edit = button('link-button', 'Edit', 'edit-message', 'Edit and resend');
    this.regenerate = button('link-button', 'Regenerate', 'regenerate',
                             'Generate another answer (the current one is kept)');
    this.del = button('link-button danger-text', 'Delete', 'delete-message',
                      'Delete this message and what follows it');
    this.copy.addEventListener('click', async () => {
      const ok = await this.actions.onCopy(this.msg);
      this.copy.textContent = ok ? 'Copied' : 'Copy failed';
      setTimeout(() => (this.copy.textContent = 'Copy'), 1500);
    });
    this.edit.addEventListener('click', () => this.setEditing(true));
    this.regenerate.addEventListener('click', () => this.actions.onRegenerate(this.msg));
    this.del.addEventListener('click', () => this.actions.onDelete(this.msg));
    this.tools.append(this.copy, this.edit, this.regenerate, this.del);
    this.footer.append(this.branch, this.stats, this.tools);
    this.root.append(this.role, this.attachments, this.think, this.content, this.editor,
                     this.error, this.footer);
    this.renderedText = null;
    this.editing = false;
  }

  setEditing(on) {
    this.editing = on;
    this.editor.hidden = !on;
    this.content.hidden = on || this.contentEmpty;
    if (on) {
      this.editText.value = this.msg.content;
      this.editText.focus();
    }
  }

  // msg: a conversation node; opts: { streaming, busy, sibling: { index, count } }.
  update(msg, { streaming = false, busy = false, sibling = { index: 0, count: 1 } } = {}) {
    this.msg = msg;
    const isAnswer = msg.role === 'assistant';
    const state = streaming ? 'streaming' : msg.error ? 'error' :
        msg.interrupted ? 'interrupted' : msg.stopped ? 'stopped' : 'done';
    this.root.className = `message role-${msg.role} state-${state}`;
    this.root.setAttribute('data-role', msg.role);
    this.root.setAttribute('data-state', state);
    this.root.setAttribute('data-id', msg.id);
    this.role.textContent = isAnswer ? 'Assistant' : 'You';

    this.attachments.replaceChildren(...(msg.attachments || []).map((a) => {
      const d = el('details', 'attachment');
      d.append(el('summary', '', `Attached: ${a.name} (${a.text.length} characters)`),
               el('pre', '', a.text));
      return d;
    }));
    this.attachments.hidden = !(msg.attachments || []).length;

    const split = isAnswer ? splitThink(msg.content) : { reasoning: '', answer: msg.content };
    const reasoning = [msg.reasoning || '', split.reasoning].filter(Boolean).join('\n\n');
    this.think.hidden = !reasoning;
    if (this.thinkBody.textContent !== reasoning) this.thinkBody.textContent = reasoning;
    this.thinkSummary.textContent = split.thinking && streaming ? 'Reasoning…' : 'Reasoning';

    if (this.renderedText !== split.answer) {
      this.renderedText = split.answer;
      if (!isAnswer) {
        this.content.className = 'message-content plain';
        this.content.textContent = split.answer;
      } else {
        this.content.className = 'message-content markdown';
        this.content.replaceChildren(renderMarkdown(split.answer));
      }
    }
    if (streaming && split.answer === '' && !reasoning) {
      this.content.replaceChildren(el('span', 'typing', 'waiting for the first token…'));
      this.renderedText = null;
    }
    // A failed answer with no text shows only its error: no empty bubble above it.
    this.contentEmpty = !streaming && split.answer === '' && (isAnswer || msg.attachments);
    this.content.hidden = this.editing || this.contentEmpty;

    this.error.hidden = !msg.error && !msg.interrupted;
    const why = typeof msg.interrupted === 'string' ? msg.interrupted :
        'the connection to the server dropped mid-answer';
    this.error.textContent = msg.error ? `Error: ${msg.error}` :
        msg.interrupted ? `Interrupted: ${why}. The text above is partial.` : '';

    this.branch.hidden = sibling.count < 2;
    this.branchLabel.textContent = `${sibling.index + 1} / ${sibling.count}`;
    this.prev.disabled = busy || sibling.index === 0;
    this.next.disabled = busy || sibling.index >= sibling.count - 1;

    let statsText = isAnswer ? formatStats(msg.stats) : '';
    if (msg.stopped) statsText = statsText ? `${statsText} · stopped` : 'stopped';
    this.stats.textContent = statsText;
    this.stats.title = msg.stats && msg.stats.source === 'server' ?
        'timings reported by the server' : 'timings measured in this page';
    for (const [attr, v] of [['data-ttft-ms', msg.stats && msg.stats.ttft_ms],
                             ['data-tps', msg.stats && msg.stats.tps]]) {
      if (Number.isFinite(v)) this.stats.setAttribute(attr, String(v));
      else this.stats.removeAttribute(attr);
    }
    this.copy.hidden = streaming || (msg.content === '' && !(msg.attachments || []).length);
    this.edit.hidden = isAnswer || busy;
    this.regenerate.hidden = !isAnswer || busy;
    this.del.hidden = busy;
    if (this.editing && busy) this.setEditing(false);
  }
}
