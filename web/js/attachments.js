// Text attachments in the composer: a long paste becomes an attachment chip instead of flooding
// the input, and text files can be attached with the Attach button. Attachments are sent ahead of
// the message text (chat_view.messageText). Files are untrusted: only text is accepted (no NUL
// bytes, valid UTF-8) and each is capped in size.

import { el } from './chat_view.js';

export const PASTE_LIMIT = 2000;  // characters; a longer paste becomes an attachment
const MAX_FILE_BYTES = 512 * 1024;

export class Attachments {
  constructor({ input, list, fileInput, button, onError }) {
    this.items = [];
    this.list = list;
    this.onError = onError;
    this.pastes = 0;
    input.addEventListener('paste', (e) => {
      const text = e.clipboardData && e.clipboardData.getData('text/plain');
      if (!text || text.length <= PASTE_LIMIT) return;
      e.preventDefault();
      this.pastes++;
      this.add({ name: `pasted-${this.pastes}.txt`, text });
    });
    button.addEventListener('click', () => fileInput.click());
    fileInput.addEventListener('change', async () => {
      for (const f of fileInput.files) await this.addFile(f);
      fileInput.value = '';
    });
  }

  async addFile(file) {
    if (file.size > MAX_FILE_BYTES) {
      this.onError(`${file.name} is larger than ${MAX_FILE_BYTES / 1024} KB`);
      return;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    let text;
    try {
      if (bytes.includes(0)) throw new Error('binary');
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      this.onError(`${file.name} is not a text file`);
      return;
    }
    this.add({ name: file.name.slice(0, 120) || 'file.txt', text });
  }

  add(item) {
    this.items.push(item);
    this.render();
  }

  take() {
    const out = this.items;
    this.items = [];
    this.render();
    return out;
  }

  render() {
    this.list.replaceChildren(...this.items.map((a, i) => {
      const chip = el('span', 'chip');
      chip.setAttribute('data-testid', 'attachment-chip');
      chip.append(el('span', 'chip-name', `${a.name} (${a.text.length} chars)`));
      const rm = el('button', 'icon-button', '×');
      rm.type = 'button';
      rm.title = `Remove ${a.name}`;
      rm.setAttribute('aria-label', `Remove ${a.name}`);
      rm.addEventListener('click', () => {
        this.items.splice(i, 1);
        this.render();
      });
      chip.appendChild(rm);
      return chip;
    }));
    this.list.hidden = this.items.length === 0;
  }
}
