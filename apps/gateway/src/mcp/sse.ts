/**
 * A request's answer as an SSE stream (docs/mcp-surface.md, "Progress while waiting"): opened by the handler when it
 * has notifications to send ahead of its response; each JSON-RPC message is one `message` event, the final response
 * is the last, and then the stream ends. No event ids: a stream is not resumable (2026-07-28 Streamable HTTP removes
 * `Last-Event-ID`; under 2025-11-25 a server without ids simply offers no resumption).
 */
import type { McpResponseStream } from '@flowgate/workspace-mcp';

/** A comment line this often when nothing else was written, so idle proxies and clients keep the stream open. */
export const SSE_HEARTBEAT_MS = 15_000;

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  // Reverse proxies (nginx) must pass each event on at once (2026-07-28 Streamable HTTP, "Receiving Messages").
  'x-accel-buffering': 'no',
};

export interface SseAnswer {
  /** The handler's `openStream`: the first call opens the stream, later calls return it again. */
  open(): McpResponseStream;
  /** Settles when the stream was opened. */
  readonly opened: Promise<void>;
  /** Whether the handler opened it (then the answer is the stream, whenever the handler ends). */
  isOpen(): boolean;
  /** The body to answer with once opened. */
  readonly body: ReadableStream<Uint8Array>;
  /** Writes the final response as the last event and ends the stream (nothing is written once the client left). */
  end(json: string): void;
}

/** One SSE event of `data` lines (a JSON text holds no raw newline, but a line break must never end an event early). */
function event(json: string): string {
  return `event: message\n${json
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n')}\n\n`;
}

export function createSseAnswer(options: { heartbeatMs?: number; signal?: AbortSignal } = {}): SseAnswer {
  const heartbeatMs = options.heartbeatMs ?? SSE_HEARTBEAT_MS;
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  let closed = false;
  let wroteSinceBeat = false;
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  let markOpened: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    markOpened = resolve;
  });

  const stop = () => {
    closed = true;
    if (heartbeat !== null) clearInterval(heartbeat);
    heartbeat = null;
    options.signal?.removeEventListener('abort', stop);
  };
  const write = (text: string): boolean => {
    if (closed || !controller) return false;
    try {
      controller.enqueue(encoder.encode(text));
      wroteSinceBeat = true;
      return true;
    } catch {
      stop();
      return false;
    }
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel: stop,
  });

  let stream: McpResponseStream | null = null;
  return {
    opened,
    body,
    isOpen: () => stream !== null,
    open() {
      if (stream) return stream;
      stream = { send: (json) => write(event(json)) };
      if (options.signal?.aborted) stop();
      else options.signal?.addEventListener('abort', stop, { once: true });
      heartbeat = setInterval(() => {
        if (!wroteSinceBeat) write(': keep-alive\n\n');
        wroteSinceBeat = false;
      }, heartbeatMs);
      // A heartbeat never keeps the process alive on its own (shutdown drains requests first).
      (heartbeat as { unref?: () => void }).unref?.();
      markOpened();
      return stream;
    },
    end(json) {
      if (!closed && controller) {
        write(event(json));
        try {
          controller.close();
        } catch {
          // Already closed by the client: nothing to end.
        }
      }
      stop();
    },
  };
}
