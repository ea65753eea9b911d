import { type Database, repos } from '@flowgate/db';
import type { Logger } from 'pino';

const DAY_MS = 86_400_000;

export interface AuditPruner {
  /** One pass: entries past the retention, then each workspace's oldest entries past the cap. */
  runOnce(): Promise<{ expired: number; overCap: number }>;
  stop(): Promise<void>;
}

/**
 * Keeps `audit_entries` bounded on disk: every `intervalMs` (and once shortly after start) it deletes entries
 * older than `retentionDays` and trims each workspace to its newest `maxRowsPerWorkspace`. Replicas may all run
 * it; the deletes are idempotent. 0 turns either bound off.
 */
export function startAuditPruner(options: {
  db: Database;
  logger: Logger;
  retentionDays: number;
  maxRowsPerWorkspace: number;
  intervalMs?: number;
  now?: () => number;
}): AuditPruner {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 10 * 60_000;
  let running: Promise<{ expired: number; overCap: number }> | null = null;

  const pass = async () => {
    const expired =
      options.retentionDays > 0
        ? await repos.pruneAuditBefore(options.db, new Date(now() - options.retentionDays * DAY_MS))
        : 0;
    const overCap =
      options.maxRowsPerWorkspace > 0
        ? await repos.pruneAuditOverCap(options.db, options.maxRowsPerWorkspace)
        : 0;
    if (expired + overCap > 0) options.logger.info({ expired, overCap }, 'audit entries pruned');
    return { expired, overCap };
  };

  const runOnce = () => {
    running ??= pass().finally(() => (running = null));
    return running;
  };

  const tick = () => {
    runOnce().catch((err: Error) =>
      options.logger.warn(
        { code: 'audit_prune_failed', err: err.message.slice(0, 200) },
        'audit prune failed',
      ),
    );
  };
  const enabled = options.retentionDays > 0 || options.maxRowsPerWorkspace > 0;
  // Not at once: a start (and the tests' many short-lived gateways) should not begin with a table scan.
  const first = enabled ? setTimeout(tick, Math.min(intervalMs, 60_000)) : null;
  const timer = enabled ? setInterval(tick, intervalMs) : null;
  first?.unref();
  timer?.unref();

  return {
    runOnce,
    async stop() {
      if (first) clearTimeout(first);
      if (timer) clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
