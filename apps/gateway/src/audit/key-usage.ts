import { type Database, repos } from '@flowgate/db';
import type { Logger } from 'pino';

export interface KeyUsageOptions {
  /** How often `lastUsedAt` is written at most (default 5 s). */
  intervalMs?: number;
  /**
   * false: no timer (Workers, where nothing runs between requests); the entry calls `flushDue()` after each response
   * and it writes only once the interval has passed, so a busy key costs one write per interval, not one per request.
   */
  timer?: boolean;
  now?: () => number;
}

/** Collects key ids seen by the authenticator and writes `lastUsedAt` in one batch every few seconds. */
export function createKeyUsageTracker(db: Database, logger: Logger, options: KeyUsageOptions = {}) {
  const intervalMs = options.intervalMs ?? 5_000;
  const now = options.now ?? Date.now;
  let seen = new Set<string>();
  let lastWrite = now();
  const flush = async () => {
    if (seen.size === 0) return;
    const ids = [...seen];
    seen = new Set();
    lastWrite = now();
    await repos.touchApiKeys(db, ids, new Date()).catch((err: Error) => {
      logger.warn({ code: 'key_usage_write_failed', err: err.message }, 'could not record key usage');
    });
  };
  const timer = options.timer === false ? null : setInterval(() => void flush(), intervalMs);
  timer?.unref();
  return {
    used(keyId: string) {
      seen.add(keyId);
    },
    /** Writes what was seen now. */
    flush,
    /** Writes what was seen if the interval has passed since the last write. */
    async flushDue() {
      if (now() - lastWrite >= intervalMs) await flush();
    },
    async close() {
      if (timer) clearInterval(timer);
      await flush();
    },
  };
}
export type KeyUsageTracker = ReturnType<typeof createKeyUsageTracker>;
