/**
 * Admission control for the MCP endpoints: at most `max` requests that reach the database are in progress at once
 * in this process. Past it a request is answered at once with `busy` (503, Retry-After) instead of joining an
 * unbounded wait for the database, which would only make every request already in progress slower. Requests served
 * from memory (initialize, ping, list calls, notifications) are never counted or refused: they stay fast however
 * busy the database is. Subscription streams have their own bound (`too_many_listens`).
 */

export const BUSY = 'busy';
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** Methods answered without the database (cached lists, the handshake); notifications need no answer. */
const MEMORY_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'prompts/list',
  'resources/templates/list',
  'logging/setLevel',
  'subscriptions/listen',
]);

function methodNeedsDatabase(message: unknown): boolean {
  const method = (message as { method?: unknown } | null)?.method;
  return typeof method === 'string' && !method.startsWith('notifications/') && !MEMORY_METHODS.has(method);
}

/** Whether a parsed MCP body (one message or a batch) needs the database: any of its requests does. */
export function needsDatabase(body: unknown): boolean {
  return Array.isArray(body) ? body.some(methodNeedsDatabase) : methodNeedsDatabase(body);
}

export interface Admission {
  /** A slot for one request, released by calling the returned function once; null when `max` are in progress. */
  enter(): (() => void) | null;
  readonly inFlight: number;
}

export function createAdmission(max: number): Admission {
  let inFlight = 0;
  return {
    enter() {
      if (inFlight >= max) return null;
      inFlight++;
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        inFlight--;
      };
    },
    get inFlight() {
      return inFlight;
    },
  };
}

/** The `busy` answer, in JSON-RPC shape like the endpoint's other HTTP-level errors. */
export function busyBody(): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32000,
      message: `The gateway is busy: too many requests in progress; retry after ${BUSY_RETRY_AFTER_SECONDS} s`,
      data: { code: BUSY, retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS },
    },
  });
}
