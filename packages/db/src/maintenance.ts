import type { Database } from './client.js';
import { backfillMetadataDigests, backfillVersionSummaries } from './repos/flow-backfills.js';
import { backfills } from './schema.js';

/**
 * Backfills fill what SQL cannot: columns computed in TypeScript from the stored model, for rows older versions wrote.
 * `migrate()` runs each one that has not completed on this database and records it in `backfills`, so a start after
 * that reads one small table instead of scanning flows. A name is never reused: a changed backfill gets a new one.
 */
export const BACKFILLS: ReadonlyArray<{ name: string; run(db: Database): Promise<number> }> = [
  { name: 'flow_versions.summary', run: backfillVersionSummaries },
  { name: 'flow_versions.metadata_sha256', run: backfillMetadataDigests },
];

export interface BackfillOutcome {
  name: string;
  /** False when it had completed before and `force` was not given. */
  ran: boolean;
  rowsFilled: number;
}

/**
 * Runs the backfills this database has not completed (all of them with `force`: `flowgate db backfill`, for rows an
 * older replica wrote during a rolling upgrade) and records each as completed. Every backfill is idempotent, so two
 * processes running one at the same time fill nothing twice.
 */
export async function runBackfills(
  db: Database,
  options: { force?: boolean } = {},
): Promise<BackfillOutcome[]> {
  const done = new Set((await db.select({ name: backfills.name }).from(backfills)).map((r) => r.name));
  const outcomes: BackfillOutcome[] = [];
  for (const backfill of BACKFILLS) {
    if (done.has(backfill.name) && !options.force) {
      outcomes.push({ name: backfill.name, ran: false, rowsFilled: 0 });
      continue;
    }
    const rowsFilled = await backfill.run(db);
    const completedAt = new Date();
    await db
      .insert(backfills)
      .values({ name: backfill.name, rowsFilled, completedAt })
      .onConflictDoUpdate({ target: backfills.name, set: { rowsFilled, completedAt } });
    outcomes.push({ name: backfill.name, ran: true, rowsFilled });
  }
  return outcomes;
}
