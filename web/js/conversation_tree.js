// A conversation is a tree of messages so that editing a question or regenerating an answer
// keeps the earlier versions as siblings ("2 / 3"). Shape (also the stored and exported form):
//
//   conversation = { id, title, updated, system_prompt, nodes: { [id]: node }, children: [ids],
//                    sel }
//   node = { id, parent: id | null, role: 'user' | 'assistant', content, children: [ids], sel,
//            ...optional: reasoning, error, stopped, interrupted, stats, attachments }
//
// `children`/`sel` on the conversation are the root level. The active path — what is shown and
// sent — starts at the root and follows each level's selected child (`sel` indexes `children`).

export function levelOf(conv, parentId) {
  return parentId === null ? conv : conv.nodes[parentId];
}

export function newConversation(id) {
  return { id, title: 'New chat', updated: Date.now(), system_prompt: '', nodes: {},
           children: [], sel: 0 };
}

// The nodes of the active path, root first.
export function activePath(conv) {
  const out = [];
  let level = conv;
  const seen = new Set();
  while (level.children.length > 0) {
    const id = level.children[Math.min(level.sel, level.children.length - 1)];
    const node = conv.nodes[id];
    if (!node || seen.has(id)) break;  // guarded by validation; never loop on bad data
    seen.add(id);
    out.push(node);
    level = node;
  }
  return out;
}

// Appends a new child under `parentId` (null = root), selects it and returns it.
export function addChild(conv, parentId, fields, id) {
  const node = { id, parent: parentId, children: [], sel: 0, ...fields };
  conv.nodes[id] = node;
  const level = levelOf(conv, parentId);
  level.children.push(id);
  level.sel = level.children.length - 1;
  return node;
}

// { index, count } of `node` among its siblings (index is 0-based).
export function siblingInfo(conv, node) {
  const level = levelOf(conv, node.parent);
  return { index: level.children.indexOf(node.id), count: level.children.length };
}

// Shows the sibling `delta` steps from `node` (wrapping is not done: the arrows stop at the ends).
export function selectSibling(conv, node, delta) {
  const level = levelOf(conv, node.parent);
  const i = level.children.indexOf(node.id) + delta;
  if (i < 0 || i >= level.children.length) return false;
  level.sel = i;
  return true;
}

// Removes `node` and everything below it; its parent then shows the previous sibling (or the
// next one, or nothing).
export function removeSubtree(conv, node) {
  const stack = [node.id];
  while (stack.length) {
    const id = stack.pop();
    const n = conv.nodes[id];
    if (!n) continue;
    stack.push(...n.children);
    delete conv.nodes[id];
  }
  const level = levelOf(conv, node.parent);
  const i = level.children.indexOf(node.id);
  if (i >= 0) level.children.splice(i, 1);
  level.sel = Math.max(0, Math.min(i > 0 ? i - 1 : 0, level.children.length - 1));
}

// A linear list of messages (the first stored format) as a tree with one path.
export function fromLinear(conv, messages, makeId) {
  let parent = null;
  for (const m of messages) parent = addChild(conv, parent, m, makeId()).id;
  for (const n of Object.values(conv.nodes)) n.sel = 0;
  conv.sel = 0;
  return conv;
}

// Problems with a stored/imported conversation (empty list = usable as is). Everything the
// page relies on is checked: ids, roles, contents, parent/children links agreeing, no cycles.
export function treeProblems(c) {
  const p = [];
  if (!c || typeof c !== 'object' || Array.isArray(c)) return ['not an object'];
  if (typeof c.id !== 'string' || !c.id) p.push('id is not a non-empty string');
  if (typeof c.title !== 'string') p.push('title is not a string');
  if (!Number.isFinite(c.updated)) p.push('updated is not a number');
  if (typeof c.system_prompt !== 'string') p.push('system_prompt is not a string');
  if (!c.nodes || typeof c.nodes !== 'object' || Array.isArray(c.nodes)) {
    return [...p, 'nodes is not an object'];
  }
  const checkLevel = (level, name) => {
    if (!Array.isArray(level.children) || !level.children.every((x) => typeof x === 'string')) {
      p.push(`${name}: children is not a list of ids`);
      return false;
    }
    if (!Number.isInteger(level.sel) || level.sel < 0 ||
        (level.children.length > 0 && level.sel >= level.children.length)) {
      p.push(`${name}: sel out of range`);
    }
    return true;
  };
  if (!checkLevel(c, 'root')) return p;
  const reached = new Set();
  const walk = [[null, c.children]];
  while (walk.length && p.length < 10) {
    const [parent, kids] = walk.pop();
    for (const id of kids) {
      const n = Object.prototype.hasOwnProperty.call(c.nodes, id) ? c.nodes[id] : null;
      if (!n || typeof n !== 'object') {
        p.push(`message ${id} is listed but missing`);
        continue;
      }
      if (reached.has(id)) {
        p.push(`message ${id} is reached twice (cycle or shared child)`);
        continue;
      }
      reached.add(id);
      if (n.id !== id) p.push(`message ${id} has id ${n.id}`);
      if (n.parent !== parent) p.push(`message ${id} has the wrong parent`);
      if (n.role !== 'user' && n.role !== 'assistant') p.push(`message ${id}: bad role`);
      if (typeof n.content !== 'string') p.push(`message ${id}: content is not text`);
      if (n.attachments !== undefined && !(Array.isArray(n.attachments) && n.attachments.every(
          (a) => a && typeof a.name === 'string' && typeof a.text === 'string'))) {
        p.push(`message ${id}: bad attachments`);
      }
      for (const k of ['error', 'reasoning']) {
        if (n[k] !== undefined && typeof n[k] !== 'string') p.push(`message ${id}: bad ${k}`);
      }
      if (checkLevel(n, `message ${id}`)) walk.push([id, n.children]);
    }
  }
  if (p.length === 0 && reached.size !== Object.keys(c.nodes).length) {
    p.push('some messages are not reachable from the root');
  }
  return p;
}
