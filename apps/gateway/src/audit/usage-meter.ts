import { newId } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import type { EndedRunUsage, RunUsageHooks } from '@flowgate/workspace';
import { cleanText } from './sanitize.js';

/** One MCP request as the meter counts it. */
export interface MeteredCall {
  workspaceId: string;
  method: string;
  /** The tool of a `tools/call`, else null. */
  tool: string | null;
  /** The API key id, `jwt:<sub>`, or the principal id (see `usagePrincipal`). */
  principal: string;
  client: string | null;
  outcome: repos.UsageCallOutcome;
  durationMs: number;
}

export interface UsageMeter extends RunUsageHooks {
  /** False when metering is off (`FLOWGATE_USAGE_METERING=off`): nothing is counted or written. */
  readonly enabled: boolean;
  /** Counts one MCP request in memory; never blocks and never throws. */
  call(entry: MeteredCall): void;
  /** True while counts or unacknowledged batches wait to be written. */
  readonly pending: boolean;
  /**
   * Cuts what was counted into a batch and writes every batch not yet acknowledged, oldest first; a batch that
   * fails stays for the next flush with the same id (so it is added once however often it is retried). Never throws.
   */
  flush(): Promise<void>;
  /** Stops its own timer (if any) and flushes. */
  close(): Promise<void>;
}

/** The principal as usage names it: the key it called with, else `jwt:<sub>` for a token's user, else its id. */
export function usagePrincipal(p: { kind: string; id: string; keyId?: string | null }): string {
  if (p.keyId) return p.keyId;
  return p.kind === 'user' ? `jwt:${p.id}` : p.id;
}

const HOUR_MS = 3_600_000;

/** Whether two calls count in the same row (the same hour aside). */
function sameCall(a: MeteredCall, b: MeteredCall): boolean {
  return (
    a.workspaceId === b.workspaceId &&
    a.method === b.method &&
    a.tool === b.tool &&
    a.principal === b.principal &&
    a.client === b.client &&
    a.outcome === b.outcome
  );
}
const SEP = '\u0001';

/**
 * Usage counted in memory per workspace × hour × dimensions and written in batches (with the audit queue's flushes):
 * the request path only adds to a map entry. Memory is bounded: at `maxKeys` distinct rows a batch is cut at once,
 * and at most `maxBatches` batches wait unacknowledged (past that the oldest is dropped and counted in the log).
 */
export function createUsageMeter(
  db: Database,
  logger: { warn(fields: Record<string, unknown>, message: string): void },
  options: {
    enabled?: boolean;
    /** The clock in ms (tests roll hours over with it). */
    now?: () => number;
    maxKeys?: number;
    maxBatches?: number;
    /**
     * Flushes on its own timer every this many ms (0, the default: the audit queue flushes it): for a process
     * without an audit queue (`flowgate worker`).
     */
    flushIntervalMs?: number;
    /** Batch ids (tests). */
    batchId?: () => string;
  } = {},
): UsageMeter {
  const enabled = options.enabled ?? true;
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 10_000;
  const maxBatches = options.maxBatches ?? 50;
  const batchId = options.batchId ?? (() => newId('ub', 20));
  let calls = new Map<string, repos.UsageCallDelta>();
  let runs = new Map<string, repos.UsageRunDelta>();
  /** Cut, not yet acknowledged by the database; written oldest first. */
  const batches: repos.UsageBatch[] = [];
  let dropped = 0;
  let running: Promise<void> | null = null;
  /** The row the previous call was counted in. */
  let last: {
    call: MeteredCall;
    hourStart: number;
    rows: Map<string, repos.UsageCallDelta>;
    row: repos.UsageCallDelta;
  } | null = null;

  const hourOf = (t: number) => new Date(t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS));

  const cut = () => {
    if (calls.size === 0 && runs.size === 0) return;
    batches.push({ id: batchId(), calls: [...calls.values()], runs: [...runs.values()] });
    calls = new Map();
    runs = new Map();
    while (batches.length > maxBatches) {
      const lost = batches.shift();
      dropped += (lost?.calls.length ?? 0) + (lost?.runs.length ?? 0);
    }
  };

  const runRow = (workspaceId: string, flow: string): repos.UsageRunDelta => {
    const hour = hourOf(now());
    const key = `${workspaceId}${SEP}${hour.getTime()}${SEP}${flow}`;
    let row = runs.get(key);
    if (!row) {
      if (runs.size >= maxKeys) cut();
      row = { workspaceId, hour, flow, ...repos.NO_RUN_COUNTS };
      runs.set(key, row);
    }
    return row;
  };

  const drain = async () => {
    cut();
    while (batches.length > 0) {
      const batch = batches[0] as repos.UsageBatch;
      try {
        await repos.applyUsageBatch(db, batch);
      } catch (err) {
        // Kept with its id: if it was in fact applied (the answer got lost), the retry adds nothing.
        const cause = (err as { cause?: { code?: unknown } }).cause;
        logger.warn(
          {
            code: 'usage_batch_failed',
            dbCode: typeof cause?.code === 'string' ? cause.code : 'unknown',
            waiting: batches.length,
          },
          'usage batch failed; will retry',
        );
        return;
      }
      if (batches[0] === batch) batches.shift();
    }
    if (dropped > 0) {
      logger.warn({ code: 'usage_dropped', rows: dropped }, 'usage batches overflowed; oldest dropped');
      dropped = 0;
    }
  };

  if (!enabled) {
    return {
      enabled: false,
      pending: false,
      call() {},
      runStarted() {},
      runEnded() {},
      flush: async () => {},
      close: async () => {},
    };
  }

  const meter: UsageMeter = {
    enabled: true,
    get pending() {
      return calls.size > 0 || runs.size > 0 || batches.length > 0;
    },
    call(e) {
      const t = now();
      const hourStart = t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS);
      // A busy caller makes the same call again and again: its row is found again without building and hashing the
      // key (only while that row is still in the map being filled: a cut hands it to a batch).
      const seen = last;
      let row =
        seen !== null && seen.rows === calls && seen.hourStart === hourStart && sameCall(seen.call, e)
          ? seen.row
          : undefined;
      if (!row) {
        // Callers pass bounded strings; they are cleaned once, when their row is made (rows that clean alike merge
        // when written).
        const key = `${e.workspaceId}${SEP}${hourStart}${SEP}${e.method}${SEP}${e.tool ?? ''}${SEP}${e.principal}${SEP}${e.client ?? ''}${SEP}${e.outcome}`;
        row = calls.get(key);
        if (!row) {
          if (calls.size >= maxKeys) cut();
          row = {
            workspaceId: e.workspaceId,
            hour: new Date(hourStart),
            method: cleanText(e.method, 100),
            tool: e.tool === null ? '' : cleanText(e.tool, 128),
            principal: cleanText(e.principal, 200),
            client: e.client === null ? '' : cleanText(e.client, 200),
            outcome: e.outcome,
            count: 0,
            durations: new Array<number>(repos.USAGE_BUCKETS).fill(0),
          };
          calls.set(key, row);
        }
        last = { call: e, hourStart, rows: calls, row };
      }
      row.count++;
      const bucket = repos.usageBucketOf(Math.max(0, e.durationMs));
      row.durations[bucket] = (row.durations[bucket] ?? 0) + 1;
    },
    runStarted(run) {
      runRow(run.workspaceId, run.flowSlug).started++;
    },
    runEnded(run: EndedRunUsage) {
      const row = runRow(run.workspaceId, run.flowSlug);
      if (run.status === 'completed') row.completed++;
      else if (run.status === 'cancelled') row.cancelled++;
      else row.failed++; // failed and timed-out
      row.steps += run.steps;
      row.httpCalls += run.httpCalls;
      row.llmTokens += run.llmTokens;
    },
    async flush() {
      // After a drain already under way, so what was counted since it started is written too.
      while (running) await running;
      running = drain().finally(() => (running = null));
      return running;
    },
    async close() {
      if (timer) clearInterval(timer);
      await meter.flush();
    },
  };
  const timer = options.flushIntervalMs
    ? setInterval(() => {
        if (meter.pending) void meter.flush();
      }, options.flushIntervalMs)
    : null;
  timer?.unref?.();
  return meter;
}
