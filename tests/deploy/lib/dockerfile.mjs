// A small Dockerfile reader for the deploy test: instructions with their stage, continuation
// lines joined, comments dropped, and the few instruction forms the test checks (FROM, COPY, RUN,
// USER, HEALTHCHECK, EXPOSE). Not a full parser: heredocs and parser directives other than
// comments are not supported (the project's Dockerfile uses neither).

// [{ line, keyword, args, stage }] where stage is the index of the FROM it belongs to.
export function parseDockerfile(text) {
  const out = [];
  let stage = -1;
  let pending = '';
  let startLine = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    if (pending === '' && /^\s*(#|$)/.test(raw)) continue;
    if (pending !== '' && /^\s*#/.test(raw)) continue;  // comments inside a continued line
    if (pending === '') startLine = i + 1;
    const continued = /\\\s*$/.test(raw);
    pending += (pending ? ' ' : '') + raw.replace(/\\\s*$/, '').trim();
    if (continued) continue;
    const m = pending.match(/^(\S+)\s*(.*)$/);
    pending = '';
    if (!m) continue;
    const keyword = m[1].toUpperCase();
    if (keyword === 'FROM') stage++;
    out.push({ line: startLine, keyword, args: m[2], stage });
  }
  if (pending !== '') throw new Error('Dockerfile ends inside a continued line');
  return out;
}

// FROM image [AS name] -> { image, name }
export function parseFrom(args) {
  const words = args.split(/\s+/).filter((w) => !w.startsWith('--'));
  const as = words.findIndex((w) => w.toLowerCase() === 'as');
  return { image: words[0], name: as >= 0 ? words[as + 1] : undefined };
}

// COPY/ADD [--flag=value]... src... dest (or the JSON array form) -> { flags, sources, dest }
export function parseCopy(args) {
  const flags = {};
  let rest = args;
  for (let m; (m = rest.match(/^--([a-z-]+)(?:=(\S+))?\s+/));) {
    flags[m[1]] = m[2] ?? true;
    rest = rest.slice(m[0].length);
  }
  const words = rest.trim().startsWith('[') ? JSON.parse(rest) : rest.trim().split(/\s+/);
  return { flags, sources: words.slice(0, -1), dest: words[words.length - 1] };
}

// The package names of every `apt-get install` in a RUN line (flags dropped).
export function aptPackages(runArgs) {
  const pkgs = [];
  for (const cmd of runArgs.split(/&&|;|\|\|/)) {
    const m = cmd.match(/apt-get\s+install\s+(.*)$/);
    if (!m) continue;
    for (const w of m[1].trim().split(/\s+/)) if (!w.startsWith('-')) pkgs.push(w);
  }
  return pkgs;
}

// Whether `path` (relative to the context root) is excluded by .dockerignore rules, with the
// last matching rule winning and `!` re-including, as Docker reads the file.
export function dockerIgnored(rules, path) {
  let ignored = false;
  const parts = path.replace(/\/+$/, '').split('/');
  for (const rule of rules) {
    const negate = rule.startsWith('!');
    const pattern = negate ? rule.slice(1) : rule;
    const re = globToRegExp(pattern.replace(/^\/+|\/+$/g, ''));
    // A rule matching a parent folder excludes everything below it.
    for (let n = 1; n <= parts.length; n++) {
      if (re.test(parts.slice(0, n).join('/'))) {
        ignored = !negate;
        break;
      }
    }
  }
  return ignored;
}

export function readDockerignore(text) {
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

function globToRegExp(glob) {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (c === '*') {
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else {
      re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}
