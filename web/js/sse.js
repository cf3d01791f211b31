// Server-Sent Events parser for streamed completions. The network hands us arbitrary slices of
// the stream (an event can be split anywhere, even inside a UTF-8 character), so bytes are
// decoded with a streaming TextDecoder and lines are only acted on once they are complete.
//
// Only what OpenAI-style streams use is interpreted: "data:" lines (joined with "\n" when an
// event has several), events ending at a blank line, ":" comments ignored; "event:", "id:" and
// "retry:" are accepted and ignored.

export class SseParser {
  // onData(string) is called with the data of each complete event.
  constructor(onData) {
    this.onData = onData;
    this.decoder = new TextDecoder('utf-8');
    this.buffer = '';
    this.dataLines = [];
  }

  // Feeds a Uint8Array (from a fetch body reader) or a string.
  push(chunk) {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const nl = this.buffer.indexOf('\n', start);
      if (nl < 0) break;
      let line = this.buffer.slice(start, nl);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      start = nl + 1;
      this.line(line);
    }
    this.buffer = this.buffer.slice(start);
  }

  // The stream ended: a final event without its blank line still counts.
  end() {
    this.buffer += this.decoder.decode();
    if (this.buffer.length > 0) {
      this.line(this.buffer.replace(/\r$/, ''));
      this.buffer = '';
    }
    this.line('');
  }

  line(line) {
    if (line === '') {
      if (this.dataLines.length > 0) {
        const data = this.dataLines.join('\n');
        this.dataLines = [];
        this.onData(data);
      }
      return;
    }
    if (line.startsWith(':')) return;  // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
  }
}
