import { AppError } from '@flowgate/core';

/**
 * Opaque page cursors for admin lists: base64url JSON of the position. Tampering only moves within the caller's own
 * workspace.
 */
export function encodeCursor(position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodeCursor<T extends Record<string, string | number>>(
  cursor: string | undefined,
  keys: (keyof T)[],
): T | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const k of keys) {
      const v = value[k as string];
      if (typeof v !== 'string' && typeof v !== 'number') throw new Error('bad');
    }
    return value as T;
  } catch {
    throw new AppError('invalid_request', 'invalid cursor');
  }
}

/**
 * One page of a keyset-paginated list: fetches one row more than `limit` to learn whether another page follows, and
 * makes the cursor from the last row shown.
 */
export async function paginate<R>(
  limit: number,
  fetch: (take: number) => Promise<R[]>,
  position: (last: R) => Record<string, string | number>,
): Promise<{ items: R[]; nextCursor: string | null }> {
  const rows = await fetch(limit + 1);
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(position(last)) : null,
  };
}
