import { type Database, repos } from '@flowgate/db';
import type { Logger } from 'pino';

/**
 * Collects key ids seen by the authenticator and writes `lastUsedAt` in one batch every few seconds; `intervalMs` 0
 * sets no timer and the caller flushes (Workers, after each response).
 */
export function createKeyUsageTracker(db: Database, logger: Logger, intervalMs = 5_000) {
  let seen = new Set<string>();
  const flush = async () => {
    if (seen.size === 0) return;
    const ids = [...seen];
    seen = new Set();
    await repos.touchApiKeys(db, ids, new Date()).catch((err: Error) => {
      logger.warn({ code: 'key_usage_write_failed', err: err.message }, 'could not record key usage');
    });
  };
  const timer = intervalMs > 0 ? setInterval(() => void flush(), intervalMs) : null;
  timer?.unref();
  return {
    used(keyId: string) {
      seen.add(keyId);
    },
    flush,
    async close() {
      if (timer) clearInterval(timer);
      await flush();
    },
  };
}
export type KeyUsageTracker = ReturnType<typeof createKeyUsageTracker>;
