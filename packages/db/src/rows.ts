import type { SQL } from 'drizzle-orm';
import type { Executor } from './client.js';

/**
 * The rows a raw statement (`db.execute`) returned, whichever driver ran it: postgres.js answers an array of rows,
 * PGlite an object holding them. The one place that knows; repos read raw results only through it.
 */
export async function executeRows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result: unknown = await db.execute(query);
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
