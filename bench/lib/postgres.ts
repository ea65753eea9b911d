import { createDb, type DbHandle } from '@flowgate/db';

/** The local server the benchmarks use when `DATABASE_URL` is unset. */
export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** `DATABASE_URL`, else the local default. */
export function benchPostgresUrl(): string {
  return process.env.DATABASE_URL ?? DEFAULT_PG_URL;
}

/** Whether a Postgres server answers at `url` within 5 s (the Postgres half of a benchmark is skipped otherwise). */
export async function postgresReachable(url: string = benchPostgresUrl()): Promise<boolean> {
  let h: DbHandle | undefined;
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 5000).unref());
  try {
    // NOTIFY is a real round trip that needs no table: it fails fast when nothing listens on the port.
    const probe = (async () => {
      h = await createDb({ url, maxConnections: 1 });
      await h.notify('flowgate_bench_probe', '');
      return true;
    })();
    return await Promise.race([probe, timeout]);
  } catch {
    return false;
  } finally {
    await h?.close().catch(() => {});
  }
}
