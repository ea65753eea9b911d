/**
 * Opaque, self-contained pagination cursors: base64url(JSON {k, s, p}) "." base64url(HMAC-SHA256 prefix).
 * Any replica can open a cursor another issued when they share the key (the gateway passes a deployment
 * key; the per-process fallback is for tests and single-process use). The cursor is bound to its list kind
 * and to the workspace, so it cannot be replayed against another list or workspace.
 */
import {
  fromBase64,
  hmacSha256With,
  randomBytes,
  timingSafeEqualText,
  toBase64Url,
  utf8Bytes,
  utf8Text,
} from '@flowgate/core';
import { LIMITS } from './limits.js';

export type CursorPosition = string | number;

export interface CursorCodec {
  seal(kind: string, position: CursorPosition): string;
  /** The position, or `null` when the cursor is malformed, forged, or belongs to another list/workspace. */
  open(kind: string, cursor: unknown): CursorPosition | null;
}

// Drawn on first use, not at import: Workers forbids randomness in global scope.
let drawnKey: Uint8Array | null = null;
const processKey = (): Uint8Array => {
  drawnKey ??= randomBytes(32);
  return drawnKey;
};
const MAC_BYTES = 16;

export function createCursorCodec(scope: string, key: string | Uint8Array = processKey()): CursorCodec {
  const sign = hmacSha256With(key);
  const mac = (payload: string): string => toBase64Url(sign(payload).subarray(0, MAC_BYTES));
  return {
    seal(kind, position) {
      const payload = toBase64Url(utf8Bytes(JSON.stringify({ k: kind, s: scope, p: position })));
      return `${payload}.${mac(payload)}`;
    },
    open(kind, cursor) {
      if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > LIMITS.cursorMaxChars)
        return null;
      const dot = cursor.indexOf('.');
      if (dot <= 0) return null;
      const payload = cursor.slice(0, dot);
      // Compared as text: base64url has spare bits in its last character, so decoding first would accept
      // more than one spelling of the same tag.
      if (!timingSafeEqualText(cursor.slice(dot + 1), mac(payload))) return null;
      let parsed: unknown;
      try {
        parsed = JSON.parse(utf8Text(fromBase64(payload)));
      } catch {
        return null;
      }
      if (!parsed || typeof parsed !== 'object') return null;
      const { k, s, p } = parsed as { k?: unknown; s?: unknown; p?: unknown };
      if (k !== kind || s !== scope) return null;
      return typeof p === 'string' || typeof p === 'number' ? p : null;
    },
  };
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * One page of an in-memory list (resources, templates, prompts). The position is an offset; an invalid
 * cursor returns `null` so the caller can answer -32602.
 */
export function paginate<T>(
  items: readonly T[],
  codec: CursorCodec,
  kind: string,
  cursor: unknown,
  pageSize: number,
): Page<T> | null {
  let offset = 0;
  if (cursor !== undefined) {
    const pos = codec.open(kind, cursor);
    if (typeof pos !== 'number' || !Number.isInteger(pos) || pos < 0 || pos > items.length) return null;
    offset = pos;
  }
  const end = offset + pageSize;
  return { items: items.slice(offset, end), nextCursor: end < items.length ? codec.seal(kind, end) : null };
}
