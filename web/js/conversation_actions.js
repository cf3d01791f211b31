// The conversation-level actions of the chat page: delete (of a conversation or a message,
// each undoable from the toast), rename, export, import. They work on chat_page.js's state
// through the hooks it passes, so this file holds no state of its own.

import { removeSubtree } from './conversation_tree.js';
import {
  downloadJson, exportJson, exportName, mergeImported, parseImport,
} from './conversation_io.js';
import { showToast } from './sidebar.js';
import { newId, saveConversations, saveCurrentId } from './store.js';

// hooks: { state, persist(), renderAll(), renderList(), select(id), createConversation() }
export function conversationActions(hooks) {
  const { state, persist, renderAll, renderList, select, createConversation } = hooks;
  // Everything is restorable for a while: the toast's Undo puts the snapshot back.
  function withUndo(text, change) {
    const snapshot = JSON.stringify(state.conversations);
    const currentId = state.current && state.current.id;
    change();
    persist();
    renderAll();
    showToast(text, () => {
      if (state.running) return;
      state.conversations = JSON.parse(snapshot);
      state.current = state.conversations.find((c) => c.id === currentId) || state.current;
      persist();
      renderAll();
    });
  }

  function removeConversation(id) {
    if (state.running) return;
    const c = state.conversations.find((x) => x.id === id);
    if (!c) return;
    withUndo(`Deleted “${c.title || 'New chat'}”.`, () => {
      state.conversations = state.conversations.filter((x) => x.id !== id);
      if (!state.current || state.current.id === id) {
        state.current = state.conversations[0] || createConversation();
        saveCurrentId(state.current.id);
      }
    });
  }

  function deleteMessage(msg) {
    if (state.running) return;
    withUndo(msg.role === 'user' ? 'Deleted the message and its answers.' : 'Deleted the answer.',
             () => removeSubtree(state.current, msg));
  }

  function rename(id, title) {
    const c = state.conversations.find((x) => x.id === id);
    if (c && title) {
      c.title = title;
      c.named = true;
      saveConversations(state.conversations);
    }
    renderList();
  }

  function exportOne(id) {
    const c = state.conversations.find((x) => x.id === id);
    if (c) downloadJson(exportName(c.title), exportJson([c]));
  }

  async function importFile(file) {
    try {
      const imported = parseImport(await file.text());
      const added = mergeImported(state.conversations, imported, newId);
      saveConversations(state.conversations);
      if (imported.length === 1) select(imported[0].id);
      else renderAll();
      showToast(`Imported ${added} conversation(s)` +
                (added < imported.length ? ` (${imported.length - added} already here)` : '') + '.');
    } catch (e) {
      showToast(`Import failed: ${file.name}: ${e.message}`);
    }
  }

  return { removeConversation, deleteMessage, rename, exportOne, importFile };
}
