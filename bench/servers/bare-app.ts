/**
 * The baseline of the runtimes benchmark: one bare Hono app, the same code on every runtime (Node, Bun, Deno,
 * workerd), with one POST route per recorded gateway answer. Each route parses the JSON-RPC body and answers with
 * the recorded status, headers and body, only the request id spliced in, so it costs HTTP + body parse + write
 * and nothing else. Runtime-neutral: no Node APIs, so the worker bundle can import it too.
 */
import { Hono } from 'hono';

/** One recorded gateway answer: what the bare route sends back. */
export interface RecordedAnswer {
  status: number;
  /** Response headers that matter (content-type, cache-control, …), without per-connection ones. */
  headers: Record<string, string>;
  /** The body after `"id":<id>,` of the gateway's `{"jsonrpc":"2.0","id":<id>,…}`. */
  tail: string;
}

/** What the bench hands a bare server: route path (e.g. `/tools-list`) → answer. */
export type BareRoutes = Record<string, RecordedAnswer>;

export function createBareApp(routes: BareRoutes): Hono {
  const app = new Hono();
  for (const [path, answer] of Object.entries(routes)) {
    app.post(path, async (c) => {
      const req = (await c.req.json()) as { id?: unknown };
      return c.body(
        `{"jsonrpc":"2.0","id":${JSON.stringify(req.id ?? null)},${answer.tail}`,
        answer.status as 200,
        answer.headers,
      );
    });
  }
  return app;
}

/** Parses the routes file the bench writes (JSON), with the checks a server needs before it listens. */
export function parseBareRoutes(text: string): BareRoutes {
  const parsed = JSON.parse(text) as unknown;
  if (!parsed || typeof parsed !== 'object') throw new Error('bare routes: expected an object');
  for (const [path, a] of Object.entries(parsed as Record<string, Partial<RecordedAnswer>>)) {
    if (!path.startsWith('/') || typeof a.status !== 'number' || typeof a.tail !== 'string' || !a.headers)
      throw new Error(`bare routes: bad entry for ${path}`);
  }
  return parsed as BareRoutes;
}
