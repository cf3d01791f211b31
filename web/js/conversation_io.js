// Export and import of conversations as JSON files. The file holds the conversations exactly as
// stored (conversation_tree.js), so export → import → export gives the same JSON. Imported
// files are untrusted: the whole file is validated before anything is added, and nothing
// already stored is ever replaced (an id that is taken gets a new one).

import { treeProblems } from './conversation_tree.js';

export const EXPORT_FORMAT = 'brisk.conversations';
export const EXPORT_VERSION = 2;
const MAX_IMPORT_BYTES = 50 * 1024 * 1024;

export function exportJson(conversations) {
  return JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, conversations },
                        null, 2);
}

export function downloadJson(filename, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// A file name from a title: letters, digits and dashes only.
export function exportName(title) {
  const slug = String(title || 'conversation').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '').slice(0, 40) || 'conversation';
  return `brisk-${slug}.json`;
}

// The conversations of an export file's text; throws Error with a message for the user.
export function parseImport(text) {
  if (text.length > MAX_IMPORT_BYTES) throw new Error('the file is larger than 50 MB');
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON (${e.message})`);
  }
  if (!data || data.format !== EXPORT_FORMAT) {
    throw new Error(`not a brisk conversation export (no "format": "${EXPORT_FORMAT}")`);
  }
  if (data.version !== EXPORT_VERSION) {
    throw new Error(`unsupported export version ${JSON.stringify(data.version)}`);
  }
  if (!Array.isArray(data.conversations) || data.conversations.length === 0) {
    throw new Error('the file holds no conversations');
  }
  data.conversations.forEach((c, i) => {
    const p = treeProblems(c);
    if (p.length > 0) throw new Error(`conversation ${i + 1}: ${p.slice(0, 3).join('; ')}`);
  });
  return data.conversations;
}

// Adds `imported` to `conversations` (in place, newest first): one already stored unchanged is
// skipped; one whose id is taken by different content gets `makeId()` (nothing is replaced).
// Returns how many were added.
export function mergeImported(conversations, imported, makeId) {
  const taken = new Map(conversations.map((c) => [c.id, JSON.stringify(c)]));
  let added = 0;
  for (const c of imported) {
    if (taken.get(c.id) === JSON.stringify(c)) continue;
    if (taken.has(c.id)) c.id = makeId();
    conversations.push(c);
    added++;
  }
  conversations.sort((a, b) => b.updated - a.updated);
  return added;
}
