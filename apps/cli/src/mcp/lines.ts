/**
 * Newline-delimited input with a hard cap per line: a line longer than the cap is dropped as it streams in
 * (never buffered whole), and reported once with whatever id its first bytes reveal.
 */

export type LineEvent = { type: 'line'; text: string } | { type: 'overflow'; id: string | number | null };

/** How much of an oversized line is kept to look for its id. */
const PREFIX_BYTES = 4096;

export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;
  private prefix: Buffer | null = null;

  constructor(private readonly maxLineBytes: number) {}

  /** Feeds a chunk; returns the complete lines (and overflows) it finished. */
  push(chunk: Uint8Array | string): LineEvent[] {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
    const events: LineEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl === -1) {
        this.append(buf.subarray(start));
        return events;
      }
      this.append(buf.subarray(start, nl));
      const event = this.finish();
      if (event) events.push(event);
      start = nl + 1;
    }
  }

  /** End of input: a last line without a trailing newline still counts. */
  end(): LineEvent[] {
    const event = this.size > 0 || this.discarding ? this.finish() : null;
    return event ? [event] : [];
  }

  private append(part: Buffer): void {
    if (part.length === 0) return;
    if (this.discarding) return;
    if (this.size + part.length > this.maxLineBytes) {
      // Buffer.concat with a total length copies only that many bytes.
      this.prefix = Buffer.concat([...this.parts, part], Math.min(PREFIX_BYTES, this.size + part.length));
      this.parts = [];
      this.size = 0;
      this.discarding = true;
      return;
    }
    // Copy: a subarray would pin the whole input chunk until the line completes.
    this.parts.push(Buffer.from(part));
    this.size += part.length;
  }

  private finish(): LineEvent | null {
    if (this.discarding) {
      const id = this.prefix ? leadingId(this.prefix.toString('utf8')) : null;
      this.discarding = false;
      this.prefix = null;
      return { type: 'overflow', id };
    }
    const text = Buffer.concat(this.parts, this.size).toString('utf8').replace(/\r$/, '');
    this.parts = [];
    this.size = 0;
    return text.trim() === '' ? null : { type: 'line', text };
  }
}

const JSON_STRING = String.raw`"(?:[^"\\]|\\.)*"`;
/** `{"jsonrpc":"2.0","method":"…","id":7` — the id only when it is a top-level key preceded by string-valued keys. */
const LEADING_ID = new RegExp(
  String.raw`^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*${JSON_STRING}\s*,\s*)*"id"\s*:\s*(-?\d{1,15}|${JSON_STRING})\s*[,}]`,
);

export function leadingId(prefix: string): string | number | null {
  const m = LEADING_ID.exec(prefix);
  if (!m?.[1]) return null;
  try {
    const id = JSON.parse(m[1]) as unknown;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}
