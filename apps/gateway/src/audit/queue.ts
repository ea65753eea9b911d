import { sha256, toBase64Url } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import { redact, redactString } from '@flowgate/secrets';
import type { Logger } from 'pino';
import { boundedJson, cleanText } from './sanitize.js';
import type { UsageMeter } from './usage-meter.js';

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
/**
 * A refused call and its identical repeats: the first is written as a row, the repeats within the window only
 * raise that row's `count`. Before this, one key sending blocked calls wrote one row (with arguments) per call.
 */
interface Repeats {
  /** The first call's queued entry, while it is still only queued; its count grows in place. */
  entry: AuditEntry;
  /** Set once the first call's row is being written; later repeats go to `pending` instead. */
  writing: boolean;
  id: number | null;
  pending: number;
  until: number;
}

/** Same caller, same call, same refusal: everything the row shows except time, request and duration. */
function fingerprint(e: AuditEntry): string {
  return toBase64Url(
    sha256(
      JSON.stringify([
        e.workspaceId,
        e.principalType,
        e.principalId,
        e.keyId ?? null,
        e.kind,
        e.action,
        e.outcome,
        e.errorCode ?? null,
        e.reason ?? null,
        e.arguments ?? null,
        e.blockers ?? null,
        e.resourceUris ?? null,
        e.runId ?? null,
        e.clientName ?? null,
        e.clientVersion ?? null,
        e.protocolVersion ?? null,
      ]),
    ),
  );
}

export function createAuditQueue(
  db: Database,
  logger: Logger,
  options: {
    /** 0 = no timer: the caller flushes (Workers, after each response, where a timer may not outlive a request). */
    flushIntervalMs?: number;
    maxBatch?: number;
    maxQueued?: number;
    /** How long identical refused calls fold into one row (default 60 s; 0 = never). */
    collapseWindowMs?: number;
    /** Written with every flush of the queue (same cadence, and on close): the usage meter's batches. */
    usage?: Pick<UsageMeter, 'pending' | 'flush'>;
    /** Distinct refused calls followed at once (default 10 000); past it new ones are simply written. */
    maxCollapsing?: number;
    now?: () => number;
  } = {},
): AuditSink {
  const flushIntervalMs = options.flushIntervalMs ?? 250;
  const maxBatch = options.maxBatch ?? 200;
  const maxQueued = options.maxQueued ?? 20_000;
  const collapseWindowMs = options.collapseWindowMs ?? 60_000;
  const maxCollapsing = options.maxCollapsing ?? 10_000;
  const now = options.now ?? Date.now;
  const usage = options.usage;
  let queue: AuditEntry[] = [];
  let dropped = 0;
  let running: Promise<void> | null = null;
  let closed = false;
  const collapsing = new Map<string, Repeats>();
  const groupOf = new WeakMap<AuditEntry, Repeats>();

  const markWriting = (batch: AuditEntry[]) => {
    for (const e of batch) {
      const g = groupOf.get(e);
      if (g) g.writing = true;
    }
  };
  const written = (entry: AuditEntry, id: number | undefined) => {
    const g = groupOf.get(entry);
    if (g && id !== undefined) g.id = id;
  };

  /** Adds repeats to rows already written, and forgets groups whose window has passed. */
  const settleRepeats = async (): Promise<void> => {
    const t = now();
    for (const [key, g] of collapsing) {
      if (g.id !== null && g.pending > 0) {
        const n = g.pending;
        g.pending = 0;
        try {
          await repos.addAuditRepeats(db, g.id, n);
        } catch {
          g.pending += n; // retried on the next tick
          return;
        }
      }
      // Settled runs after the queue drained, so a group without an id here had its row dropped: nothing to add to.
      if (g.until <= t && (g.pending === 0 || g.id === null)) collapsing.delete(key);
    }
  };

  const errorCode = (err: unknown): string => {
    const cause = (err as { cause?: { code?: unknown } }).cause;
    return typeof cause?.code === 'string' ? cause.code : 'unknown';
  };

  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      markWriting(batch);
      try {
        const ids = await repos.insertAuditEntries(db, batch);
        for (const [i, e] of batch.entries()) written(e, ids[i]);
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
      let done = 0;
      for (const entry of batch) {
        try {
          const [id] = await repos.insertAuditEntries(db, [entry]);
          written(entry, id);
          done++;
        } catch (err) {
          const code = errorCode(err);
          if (code === 'unknown' || code.startsWith('08') || code === '57P01') {
            // Connection trouble, not a bad row: keep the rest queued and try again on the next tick.
            queue = queue.slice(done);
            logger.error({ code: 'audit_write_failed', dbCode: code }, 'audit write failed; will retry');
            return;
          }
          logger.error(
            { code: 'audit_entry_dropped', dbCode: code, action: entry.action, kind: entry.kind },
            'audit entry refused by the database',
          );
        }
        done++;
      }
      queue = queue.slice(batch.length);
    }
    if (collapsing.size > 0) await settleRepeats();
    // Never throws: a failed usage batch waits for the next flush.
    if (usage?.pending) await usage.flush();
    if (dropped > 0) {
      logger.warn({ code: 'audit_dropped', dropped }, 'audit queue overflowed; oldest entries dropped');
      dropped = 0;
    }
  };

  const flush = (): Promise<void> => {
    if (!running) running = drain().finally(() => (running = null));
    return running;
  };

  const timer =
    flushIntervalMs > 0
      ? setInterval(() => {
          if (queue.length > 0 || collapsing.size > 0 || usage?.pending) void flush();
        }, flushIntervalMs)
      : null;
  timer?.unref();

  return {
    record(entry) {
      if (closed) return;
      // Stamp the event time now (the row is written later, in a batch); bound and clean what callers sent.
      const cleaned: AuditEntry = {
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
      };
      if (collapseWindowMs > 0 && cleaned.outcome !== 'ok') {
        const key = fingerprint(cleaned);
        const g = collapsing.get(key);
        if (g && g.until > now()) {
          if (g.writing) g.pending++;
          else g.entry.count = (g.entry.count ?? 1) + 1;
          return;
        }
        if (g && g.id !== null && g.pending > 0) {
          // The window passed before the last repeats were added: add them now, the new group starts afresh.
          void repos.addAuditRepeats(db, g.id, g.pending).catch(() => {});
        }
        if (collapsing.size < maxCollapsing || g) {
          const group: Repeats = {
            entry: cleaned,
            writing: false,
            id: null,
            pending: 0,
            until: now() + collapseWindowMs,
          };
          collapsing.set(key, group);
          groupOf.set(cleaned, group);
        }
      }
      queue.push(cleaned);
      if (queue.length > maxQueued) {
        dropped += queue.length - maxQueued;
        queue = queue.slice(queue.length - maxQueued);
      }
      if (queue.length >= maxBatch) void flush();
    },
    async flush() {
      await flush();
      // A flush may have started before the latest record(); run once more to cover it.
      if (queue.length > 0 || usage?.pending) await flush();
    },
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      await flush();
      if (queue.length > 0 || usage?.pending) await flush();
    },
  };
}
