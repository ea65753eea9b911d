import { type Database, repos } from '@flowgate/db';
import { redact, redactString } from '@flowgate/secrets';
import type { Logger } from 'pino';
import { boundedJson, cleanText } from './sanitize.js';

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

  const errorCode = (err: unknown): string => {
    const cause = (err as { cause?: { code?: unknown } }).cause;
    return typeof cause?.code === 'string' ? cause.code : 'unknown';
  };

  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      try {
        await repos.insertAuditEntries(db, batch);
        queue = queue.slice(batch.length);
        continue;
      } catch (err) {
        // Never log the driver's message: it carries every parameter of the batch.
        logger.warn(
          { code: 'audit_batch_failed', dbCode: errorCode(err), size: batch.length },
          'audit batch failed; retrying row by row',
        );
      }
      // One bad row must not hold back the rest: write row by row; a row the database refuses is dropped.
      let written = 0;
      for (const entry of batch) {
        try {
          await repos.insertAuditEntries(db, [entry]);
          written++;
        } catch (err) {
          const code = errorCode(err);
          if (code === 'unknown' || code.startsWith('08') || code === '57P01') {
            // Connection trouble, not a bad row: keep the rest queued and try again on the next tick.
            queue = queue.slice(written);
            logger.error({ code: 'audit_write_failed', dbCode: code }, 'audit write failed; will retry');
            return;
          }
          logger.error(
            { code: 'audit_entry_dropped', dbCode: code, action: entry.action, kind: entry.kind },
            'audit entry refused by the database',
          );
        }
        written++;
      }
      queue = queue.slice(batch.length);
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
      // Stamp the event time now (the row is written later, in a batch); bound and clean what callers sent.
      queue.push({
        ...entry,
        at: entry.at ?? new Date(),
        action: redactString(cleanText(entry.action, 500)),
        reason: entry.reason == null ? entry.reason : redactString(cleanText(entry.reason, 1_000)),
        clientName: entry.clientName == null ? entry.clientName : cleanText(entry.clientName, 200),
        clientVersion:
          entry.clientVersion == null ? entry.clientVersion : cleanText(entry.clientVersion, 100),
        arguments: entry.arguments == null ? entry.arguments : redact(boundedJson(entry.arguments)),
        blockers: entry.blockers == null ? entry.blockers : boundedJson(entry.blockers),
        resourceUris:
          entry.resourceUris == null
            ? entry.resourceUris
            : entry.resourceUris.slice(0, 20).map((u) => redactString(cleanText(u, 500))),
      });
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
