import type { WorkspaceAccess } from '@flowgate/auth';
import {
  AppError,
  fromBase64,
  hmacSha256With,
  timingSafeEqualText,
  toBase64Url,
  utf8Bytes,
  utf8Text,
} from '@flowgate/core';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../context.js';

export type CursorPosition = Record<string, string | number>;

/**
 * Opaque page cursors for admin lists: base64url(JSON position) "." base64url(HMAC-SHA256 prefix), like the MCP
 * cursors. The MAC covers the route and the workspace too, so a cursor only opens on the list and workspace that
 * issued it, and a position the gateway did not write never reaches the database.
 */
export interface AdminCursors {
  seal(c: Context<AppEnv>, route: string, position: CursorPosition): string;
  /** The position (`undefined` without a cursor); 400 `invalid_cursor` when forged, foreign or malformed. */
  open<S extends z.ZodType<CursorPosition>>(
    c: Context<AppEnv>,
    route: string,
    cursor: string | undefined,
    schema: S,
  ): z.infer<S> | undefined;
}

const MAC_BYTES = 16;

/**
 * The workspace a list belongs to, which its cursors are bound to; the operator's lists belong to none (no access is
 * set on them) and use '', which no workspace id is.
 */
const scopeOf = (c: Context<AppEnv>): string =>
  (c.get('access') as WorkspaceAccess | undefined)?.workspaceId ?? '';

export const invalidCursor = () =>
  new AppError('invalid_cursor', 'cursor is not valid for this list; omit it to start from the first page');

export function createAdminCursors(key: Uint8Array): AdminCursors {
  // Domain-separated from the MCP cursors, which share the deployment key.
  const sign = hmacSha256With(key);
  const mac = (route: string, workspaceId: string, payload: string): string =>
    toBase64Url(sign(`flowgate-admin-cursor\n${route}\n${workspaceId}\n${payload}`).subarray(0, MAC_BYTES));
  return {
    seal(c, route, position) {
      const payload = toBase64Url(utf8Bytes(JSON.stringify(position)));
      return `${payload}.${mac(route, scopeOf(c), payload)}`;
    },
    open(c, route, cursor, schema) {
      if (cursor === undefined) return undefined;
      const dot = cursor.indexOf('.');
      if (dot <= 0) throw invalidCursor();
      const payload = cursor.slice(0, dot);
      // Compared as text: base64url has spare bits in its last character, so decoding first would accept
      // more than one spelling of the same tag.
      if (!timingSafeEqualText(cursor.slice(dot + 1), mac(route, scopeOf(c), payload))) throw invalidCursor();
      let value: unknown;
      try {
        value = JSON.parse(utf8Text(fromBase64(payload)));
      } catch {
        throw invalidCursor();
      }
      // Signed positions are the gateway's own; the schema still guards against a key shared with older code.
      const parsed = schema.safeParse(value);
      if (!parsed.success) throw invalidCursor();
      return parsed.data;
    },
  };
}

/**
 * One page of a keyset-paginated list: fetches one row more than `limit` to learn whether another page follows, and
 * makes the cursor from the last row shown.
 */
export async function paginate<R>(
  limit: number,
  fetch: (take: number) => Promise<R[]>,
  cursorAfter: (last: R) => string,
): Promise<{ items: R[]; nextCursor: string | null }> {
  const rows = await fetch(limit + 1);
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? cursorAfter(last) : null };
}

/** Lists keyed by id: the position a page's cursor carries. */
export const idPosition = z.strictObject({ id: z.string().min(1).max(64) });

/** The cursor of the page after a domain page whose last id is `nextAfter` (null on the last page). */
export function nextIdCursor(
  cursors: AdminCursors,
  c: Context<AppEnv>,
  route: string,
  nextAfter: string | null,
): string | null {
  return nextAfter === null ? null : cursors.seal(c, route, { id: nextAfter });
}
