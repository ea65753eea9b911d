import { AppError } from '@flowgate/core';

/** Opaque page cursors for admin lists: base64url JSON of the position. Tampering only moves within the caller's own workspace. */
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
