import type { Context } from 'hono';
import type { AppEnv } from '../context.js';

/** Marks the response whose body the listener writes from `RuntimeBindings.bodyParts`; never sent. */
export const BODY_PARTS_HEADER = 'x-flowgate-body-parts';

/**
 * A JSON answer given as UTF-8 pieces (tools/list: a small head, the cached list's own bytes, the close). Where the
 * runtime's listener writes pieces itself (Node: `RuntimeBindings.writesBodyParts`), the pieces are left on the
 * request's bindings and the response carries only the marker header: the listener writes the final status and
 * headers (whatever middleware added on the way out) and then the pieces, the cached ones by reference. A fresh copy
 * per answer (29 KB for the whole catalog) made V8 collect its old generation every few hundred answers under load
 * (external memory pressure). Elsewhere the pieces are joined into one array, written whole.
 */
export function respondWithParts(
  c: Context<AppEnv>,
  parts: readonly Uint8Array[],
  status: 200 | 202 | 400 | 404,
  headers: Record<string, string>,
): Response {
  const env = c.env;
  if (!env?.writesBodyParts) return c.body(joinParts(parts), status, headers);
  env.bodyParts = parts;
  return c.body(null, status, { ...headers, [BODY_PARTS_HEADER]: '1' });
}

function joinParts(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  let length = 0;
  for (const part of parts) length += part.byteLength;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
