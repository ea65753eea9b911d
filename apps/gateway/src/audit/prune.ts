import { type Database, repos } from '@flowgate/db';
import type { Logger } from 'pino';

const DAY_MS = 86_400_000;
/** Applied usage batch ids are kept this long: a retry comes within seconds, from a process still holding it. */
export const USAGE_BATCH_IDS_KEPT_MS = DAY_MS;

export interface PruneCounts {
  expired: number;
  overCap: number;
  /** Usage rollup rows (and applied batch ids) pruned. */
  usage: number;
}

export interface AuditPruner {
  /** One pass: entries past the retention, each workspace's oldest entries past the cap, then usage past its retention. */
  runOnce(): Promise<PruneCounts>;
  stop(): Promise<void>;
}

/**
 * Keeps `audit_entries` and the usage rollups bounded on disk: every `intervalMs` (and once shortly after start) it
 * deletes entries older than `retentionDays`, trims each workspace to its newest `maxRowsPerWorkspace`, deletes
 * usage hours older than `usageRetentionDays` and applied usage batch ids older than a day. Replicas may all run
 * it; the deletes are idempotent. 0 turns a bound off.
 */
export function startAuditPruner(options: {
  db: Database;
  logger: Logger;
  retentionDays: number;
  maxRowsPerWorkspace: number;
  /** Usage rollup hours older than this are deleted (0 = kept forever; batch ids are pruned regardless). */
  usageRetentionDays?: number;
  intervalMs?: number;
  now?: () => number;
}): AuditPruner {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 10 * 60_000;
  const usageRetentionDays = options.usageRetentionDays ?? 0;
  let running: Promise<PruneCounts> | null = null;

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
    const usage =
      (usageRetentionDays > 0
        ? await repos.pruneUsageBefore(options.db, new Date(now() - usageRetentionDays * DAY_MS))
        : 0) + (await repos.pruneUsageBatchesBefore(options.db, new Date(now() - USAGE_BATCH_IDS_KEPT_MS)));
    if (usage > 0) options.logger.info({ usage }, 'usage rollups pruned');
    return { expired, overCap, usage };
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
  // Not at once: a start (and the tests' many short-lived gateways) should not begin with a table scan. Always on:
  // usage batch ids are pruned whatever the retentions.
  const first = setTimeout(tick, Math.min(intervalMs, 60_000));
  const timer = setInterval(tick, intervalMs);
  first.unref?.();
  timer.unref?.();

  return {
    runOnce,
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
