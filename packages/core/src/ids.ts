import { z } from 'zod';
import { randomBytes } from './crypto.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Unbiased base62 string of the given length from the CSPRNG (rejection sampling). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (const b of bytes) {
      // 248 = 62 * 4: bytes at or above it would bias the distribution.
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Compact, URL-safe, unguessable id with a readable prefix, e.g. `run_3kT9…` (~119 bits). */
export function newId(prefix: string, length = 20): string {
  return `${prefix}_${randomBase62(length)}`;
}

export const WORKSPACE_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;
export const workspaceIdSchema = z
  .string()
  .regex(WORKSPACE_ID_PATTERN, 'workspace id must match ^[a-z0-9][a-z0-9-]{1,62}$');

// `\w` is `[A-Za-z0-9_]` in every JSON Schema (ECMA-262) and JS regex: the same sets, fewer tokens in tools/list.
export const FLOW_SLUG_PATTERN = /^[a-zA-Z][\w-]{0,127}$/;
export const TOOL_NAME_PATTERN = /^[\w.-]{1,128}$/;
/** `newId('inst', 16)`. */
export const INSTALLATION_ID_PATTERN = /^inst_[A-Za-z0-9]{16}$/;
