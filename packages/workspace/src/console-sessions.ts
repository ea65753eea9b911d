/**
 * Admin console sign-ins: sessions (a browser's cookie) and one-time sign-in codes (`flowgate dev`'s link). Only the
 * sha256 of a secret is stored, so a leaked table opens nothing. What a session acts as is opaque here: the gateway
 * writes and checks that record (`apps/gateway/src/console/session.ts`).
 */
import { randomBytes, sha256Hex, toBase64Url } from '@flowgate/core';
import { repos } from '@flowgate/db';
import type { WorkspaceDeps } from './scope.js';

export type ConsoleSessionKind = 'session' | 'code';

/** What a session or code stands for, as the gateway stored it. */
export interface ConsoleSessionRecord {
  principal: unknown;
  workspaces: string[];
  expiresAt: Date;
}

export interface ConsoleSessions {
  /** Stores a new session or code; returns its secret, which is never stored. */
  issue(kind: ConsoleSessionKind, record: ConsoleSessionRecord): Promise<string>;
  /** The live (not expired, not revoked) record of a secret, with the hash it is stored under; null when none. */
  find(
    kind: ConsoleSessionKind,
    secret: string,
    now: Date,
  ): Promise<(ConsoleSessionRecord & { idHash: string }) | null>;
  /**
   * Revokes the live record of a secret and returns it; null when it was already used, revoked or expired. One
   * statement, so a code raced by two requests is traded exactly once.
   */
  revoke(kind: ConsoleSessionKind, secret: string, now: Date): Promise<ConsoleSessionRecord | null>;
  /** Deletes sessions and codes (used or not) that expired before `before`. */
  prune(before: Date): Promise<void>;
}

/** Longer values were never issued (secrets are 43 characters): refused before hashing. */
const MAX_SECRET_LENGTH = 128;

export function hashConsoleSecret(secret: string): string {
  return sha256Hex(secret);
}

const plausible = (secret: string) => secret.length > 0 && secret.length <= MAX_SECRET_LENGTH;

export function consoleSessions(db: WorkspaceDeps['db']): ConsoleSessions {
  return {
    async issue(kind, record) {
      const secret = toBase64Url(randomBytes(32));
      await repos.insertConsoleSession(db, { idHash: hashConsoleSecret(secret), kind, ...record });
      return secret;
    },
    async find(kind, secret, now) {
      if (!plausible(secret)) return null;
      const idHash = hashConsoleSecret(secret);
      const row = await repos.getConsoleSession(db, idHash, kind, now);
      return row
        ? { idHash, principal: row.principal, workspaces: row.workspaces, expiresAt: row.expiresAt }
        : null;
    },
    async revoke(kind, secret, now) {
      if (!plausible(secret)) return null;
      const row = await repos.revokeConsoleSession(db, hashConsoleSecret(secret), kind, now);
      return row ? { principal: row.principal, workspaces: row.workspaces, expiresAt: row.expiresAt } : null;
    },
    async prune(before) {
      await repos.pruneConsoleSessions(db, before);
    },
  };
}
