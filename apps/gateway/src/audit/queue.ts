import { type Database, repos } from '@flowgate/db';
import { redact } from '@flowgate/secrets';
import type { Logger } from 'pino';

export type AuditEntry = repos.NewAuditEntry;

export interface AuditSink {
  /** Queues an entry; never blocks the request and never throws. Arguments are redacted here. */
  record(entry: AuditEntry): void;
  /** Writes everything queued so far. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Audit entries are written off the request's hot path in small batches; `close()` (graceful shutdown)
 * flushes what is left. The queue is bounded: past `maxQueued` the oldest entries are dropped and counted,
 * so a database outage cannot exhaust memory.
 */
export function createAuditQueue(
  db: Database,
  logger: Logger,
  options: { flushIntervalMs?: number; maxBatch?: number; maxQueued?: number } = {},
): AuditSink {
  const flushIntervalMs = options.flushIntervalMs ?? 250;
  const maxBatch = options.maxBatch ?? 200;
  const maxQueued = options.maxQueued ?? 20_000;
  let queue: AuditEntry[] = [];
  let dropped = 0;
  let running: Promise<void> | null = null;
  let closed = false;

  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      try {
        await repos.insertAuditEntries(db, batch);
        queue = queue.slice(batch.length);
      } catch (err) {
        logger.error({ code: 'audit_write_failed', err: (err as Error).message }, 'audit write failed; will retry');
        return;
      }
    }
    if (dropped > 0) {
      logger.warn({ code: 'audit_dropped', dropped }, 'audit queue overflowed; oldest entries dropped');
      dropped = 0;
    }
  };

  const flush = (): Promise<void> => {
    if (!running) running = drain().finally(() => (running = null));
    return running;
  };

  const timer = setInterval(() => {
    if (queue.length > 0) void flush();
  }, flushIntervalMs);
  timer.unref();

  return {
    record(entry) {
      if (closed) return;
      // Stamp the event time now: the row is written later, in a batch.
      queue.push({ ...entry, at: entry.at ?? new Date(), arguments: entry.arguments === undefined ? undefined : redact(entry.arguments) });
      if (queue.length > maxQueued) {
        dropped += queue.length - maxQueued;
        queue = queue.slice(queue.length - maxQueued);
      }
      if (queue.length >= maxBatch) void flush();
    },
    async flush() {
      await flush();
      // A flush may have started before the latest record(); run once more to cover it.
      if (queue.length > 0) await flush();
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
      if (queue.length > 0) await flush();
    },
  };
}
