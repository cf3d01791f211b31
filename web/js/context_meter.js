// The context-usage meter under the composer: tokens the shown conversation uses of the
// model's max_model_len (GET /props). Exact after an answer (its usage: prompt + completion
// tokens); otherwise (a conversation opened, edited or imported) counted by POST /tokenize on
// the messages the next request would send.

import { authHeaders } from './api.js';
import { messageText, splitThink } from './chat_view.js';

export class ContextMeter {
  constructor(root, getApiKey) {
    this.root = root;
    this.bar = root.querySelector('.meter-fill');
    this.label = root.querySelector('.meter-label');
    this.getApiKey = getApiKey;
    this.seq = 0;
  }

  show(path, props) {
    const max = props && Number.isFinite(props.max_model_len) ? props.max_model_len : null;
    const last = path[path.length - 1];
    const s = last && last.role === 'assistant' && last.stats;
    this.seq++;
    if (s && Number.isFinite(s.prompt_tokens) && Number.isFinite(s.tokens)) {
      this.draw(s.prompt_tokens + s.tokens, max);
    } else if (path.length === 0) {
      this.draw(0, max);
    } else {
      this.draw(null, max);
      this.count(path, max, this.seq);
    }
  }

  async count(path, max, seq) {
    const messages = path.filter((m) => m.role === 'user' || splitThink(m.content).answer)
        .map((m) => ({ role: m.role,
                       content: m.role === 'user' ? messageText(m) : splitThink(m.content).answer }));
    try {
      const r = await fetch('/tokenize', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...authHeaders(this.getApiKey()) },
        body: JSON.stringify({ messages }),
      });
      if (!r.ok) return;
      const j = await r.json();
      const n = Number.isFinite(j.count) ? j.count : Array.isArray(j.tokens) ? j.tokens.length :
          null;
      if (seq === this.seq && n !== null) this.draw(n, max);
    } catch {
      // the meter is a hint: leave it showing "?"
    }
  }

  draw(used, max) {
    const frac = used !== null && max ? Math.min(1, used / max) : 0;
    this.bar.style.width = `${(frac * 100).toFixed(1)}%`;
    this.root.classList.toggle('meter-high', frac > 0.85);
    this.root.setAttribute('data-used', used === null ? '' : String(used));
    this.root.setAttribute('data-max', max === null ? '' : String(max));
    this.label.textContent = `context ${used === null ? '?' : used} / ${max === null ? '?' : max}` +
        ' tokens';
    this.root.title = 'Tokens this conversation uses of the model\'s context length';
  }
}
