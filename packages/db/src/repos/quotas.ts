/**
 * Quota counters: what a workspace used of each quota per period. Every change is one statement on the counter's
 * row, so concurrent takers are serialised by the row itself and a limit is never passed on either driver.
 */
import type { QuotaName, QuotaPeriod } from '@flowgate/core';
import { and, eq, gt, lt, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { workspaceMcpPolicies, workspaceQuotaCounters } from '../schema.js';

const LIMIT_COLUMN = {
  runsPerMonth: workspaceMcpPolicies.quotaRunsPerMonth,
  llmTokensPerMonth: workspaceMcpPolicies.quotaLlmTokensPerMonth,
  toolCallsPerDay: workspaceMcpPolicies.quotaToolCallsPerDay,
} as const;

const counter = workspaceQuotaCounters;
const COUNTER_KEY = [counter.workspaceId, counter.quota, counter.periodStart];

/** The stored limit of one quota as a scalar subquery (null: none), for a statement that reads more beside it. */
export function quotaLimitValue(workspaceId: string, quota: QuotaName): SQL {
  return sql`(select ${LIMIT_COLUMN[quota]} from ${workspaceMcpPolicies} where ${eq(workspaceMcpPolicies.workspaceId, workspaceId)})`;
}

/** The stored limit of one quota; null: none. */
export async function quotaLimit(
  db: Executor,
  workspaceId: string,
  quota: QuotaName,
): Promise<number | null> {
  const [row] = await db
    .select({ limit: LIMIT_COLUMN[quota] })
    .from(workspaceMcpPolicies)
    .where(eq(workspaceMcpPolicies.workspaceId, workspaceId))
    .limit(1);
  return row?.limit ?? null;
}

/** A period's first row drops the rows older than the one before it: two periods are kept per quota. */
async function pruneOnNewPeriod(
  db: Executor,
  workspaceId: string,
  quota: QuotaName,
  period: QuotaPeriod,
  inserted: boolean | undefined,
): Promise<void> {
  if (!inserted) return;
  await db
    .delete(counter)
    .where(
      and(
        eq(counter.workspaceId, workspaceId),
        eq(counter.quota, quota),
        lt(counter.periodStart, period.previousStart),
      ),
    );
}

/**
 * Takes one unit when fewer than `limit` are used in the period: the insert of the period's row, or its update
 * guarded by `used < limit`, in one statement. False: the quota is used up, nothing changed.
 */
export async function takeQuota(
  db: Executor,
  workspaceId: string,
  quota: QuotaName,
  period: QuotaPeriod,
  limit: number,
): Promise<boolean> {
  if (limit < 1) return false;
  const [row] = await db
    .insert(counter)
    .values({ workspaceId, quota, periodStart: period.start, used: 1 })
    .onConflictDoUpdate({
      target: COUNTER_KEY,
      set: { used: sql`${counter.used} + 1` },
      setWhere: sql`${counter.used} < ${limit}`,
    })
    .returning({ inserted: sql<boolean>`(xmax = 0)` });
  if (!row) return false;
  await pruneOnNewPeriod(db, workspaceId, quota, period, row.inserted);
  return true;
}

/** Gives back a unit taken for work that did not start after all (an idempotent retry of an earlier start). */
export async function releaseQuota(
  db: Executor,
  workspaceId: string,
  quota: QuotaName,
  period: QuotaPeriod,
): Promise<void> {
  await db
    .update(counter)
    .set({ used: sql`${counter.used} - 1` })
    .where(
      and(
        eq(counter.workspaceId, workspaceId),
        eq(counter.quota, quota),
        eq(counter.periodStart, period.start),
        gt(counter.used, 0),
      ),
    );
}

/** Adds what was used after the fact (LLM tokens of a completed call), whatever the limit. */
export async function addQuotaUse(
  db: Executor,
  workspaceId: string,
  quota: QuotaName,
  period: QuotaPeriod,
  amount: number,
): Promise<void> {
  if (!(amount > 0)) return;
  const [row] = await db
    .insert(counter)
    .values({ workspaceId, quota, periodStart: period.start, used: amount })
    .onConflictDoUpdate({ target: COUNTER_KEY, set: { used: sql`${counter.used} + ${amount}` } })
    .returning({ inserted: sql<boolean>`(xmax = 0)` });
  await pruneOnNewPeriod(db, workspaceId, quota, period, row?.inserted);
}

/** What the workspace used of `quota` in the period (0 without a row). */
export async function quotaUsed(
  db: Executor,
  workspaceId: string,
  quota: QuotaName,
  period: QuotaPeriod,
): Promise<number> {
  const [row] = await db
    .select({ used: counter.used })
    .from(counter)
    .where(
      and(
        eq(counter.workspaceId, workspaceId),
        eq(counter.quota, quota),
        eq(counter.periodStart, period.start),
      ),
    )
    .limit(1);
  return row?.used ?? 0;
}

/**
 * The limit of an after-the-fact quota and what the period used, read together: work may start while `used < limit`.
 * Null when the workspace has no such quota.
 */
export async function quotaStanding(
  db: Executor,
  workspaceId: string,
  quota: QuotaName,
  period: QuotaPeriod,
): Promise<{ limit: number; used: number } | null> {
  const [row] = await db
    .select({ limit: LIMIT_COLUMN[quota], used: counter.used })
    .from(workspaceMcpPolicies)
    .leftJoin(
      counter,
      and(
        eq(counter.workspaceId, workspaceMcpPolicies.workspaceId),
        eq(counter.quota, quota),
        eq(counter.periodStart, period.start),
      ),
    )
    .where(eq(workspaceMcpPolicies.workspaceId, workspaceId))
    .limit(1);
  if (!row || row.limit === null) return null;
  return { limit: row.limit, used: row.used ?? 0 };
}

/** Drops every period's count of a quota: a quota removed and set again counts from then, like a new one. */
export async function clearQuotaCounters(db: Executor, workspaceId: string, quota: QuotaName): Promise<void> {
  await db.delete(counter).where(and(eq(counter.workspaceId, workspaceId), eq(counter.quota, quota)));
}
