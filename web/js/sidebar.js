// The conversation list (a drawer on phones): search, open, rename, export, delete, and
// export-all / import at the bottom. Pure DOM; chat_page.js passes the data and the actions.

import { el } from './chat_view.js';

function matches(conv, query) {
  if (!query) return true;
  const q = query.toLowerCase();
  if ((conv.title || '').toLowerCase().includes(q)) return true;
  return Object.values(conv.nodes).some((n) => n.content.toLowerCase().includes(q));
}

// actions: { onSelect(id), onDelete(id), onRename(id, title), onExport(id) }.
export function renderConversationList(listEl, conversations, currentId, busy, query, actions) {
  listEl.replaceChildren();
  const shown = conversations.filter((c) => matches(c, query));
  for (const c of shown) {
    const li = el('li', c.id === currentId ? 'conversation current' : 'conversation');
    li.setAttribute('data-testid', 'conversation');
    li.setAttribute('data-id', c.id);
    const title = c.title || 'New chat';
    const open = el('button', 'conversation-open', title);
    open.type = 'button';
    open.title = title;
    open.disabled = busy;
    if (c.id === currentId) open.setAttribute('aria-current', 'true');
    open.addEventListener('click', () => actions.onSelect(c.id));
    const tool = (text, testid, label, fn) => {
      const b = el('button', 'conversation-tool', text);
      b.type = 'button';
      b.title = label;
      b.setAttribute('aria-label', `${label}: ${title}`);
      b.setAttribute('data-testid', testid);
      b.disabled = busy;
      b.addEventListener('click', fn);
      return b;
    };
    const rename = tool('✎', 'conversation-rename', 'Rename', () => {
      const input = el('input', 'conversation-title-input');
      input.value = title;
      input.setAttribute('data-testid', 'conversation-title-input');
      input.setAttribute('aria-label', 'Conversation title');
      let done = false;
      const finish = (save) => {
        if (done) return;
        done = true;
        if (save && input.value.trim()) actions.onRename(c.id, input.value.trim().slice(0, 200));
        else actions.onRename(c.id, null);
      };
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') finish(true);
        if (e.key === 'Escape') finish(false);
      });
      input.addEventListener('blur', () => finish(true));
      open.replaceWith(input);
      input.focus();
      input.select();
    });
    const exp = tool('⤓', 'conversation-export', 'Export as JSON', () => actions.onExport(c.id));
    const del = tool('×', 'conversation-delete', 'Delete', () => actions.onDelete(c.id));
    li.append(open, rename, exp, del);
    listEl.appendChild(li);
  }
  if (shown.length === 0) {
    listEl.appendChild(el('li', 'conversation-none', query ? 'No conversation matches.' :
                          'No conversations yet.'));
  }
}

// A small "…  Undo" toast at the bottom; the last one replaces any earlier one.
let toastTimer = null;
export function showToast(text, undo, ms = 8000) {
  const host = document.getElementById('toast');
  clearTimeout(toastTimer);
  host.replaceChildren(el('span', '', text));
  if (undo) {
    const b = el('button', 'link-button', 'Undo');
    b.type = 'button';
    b.setAttribute('data-testid', 'toast-undo');
    b.addEventListener('click', () => {
      host.hidden = true;
      undo();
    });
    host.appendChild(b);
  }
  const close = el('button', 'link-button', 'Dismiss');
  close.type = 'button';
  close.addEventListener('click', () => (host.hidden = true));
  host.appendChild(close);
  host.hidden = false;
  toastTimer = setTimeout(() => (host.hidden = true), ms);
}
