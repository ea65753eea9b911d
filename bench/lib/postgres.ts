import { randomBytes } from 'node:crypto';
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

/** A fresh database on the server at `baseUrl`, for one benchmark; `drop()` removes it (and its connections). */
export async function throwawayDatabase(
  baseUrl: string,
  prefix: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = await createDb({ url: baseUrl, maxConnections: 1 });
  await admin.db.execute(`create database ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.db.execute(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.close();
    },
  };
}

/**
 * Sessions ever opened to database `name` (pg_stat_database.sessions, Postgres 14+; a session's figures are
 * reported when it ends): how many connections a run opened, pooled or per request. NaN where unknown.
 */
export async function sessionCounter(
  baseUrl: string,
  name: string,
): Promise<{ read(): Promise<number>; close(): Promise<void> }> {
  const h = await createDb({ url: baseUrl, maxConnections: 1 });
  return {
    async read() {
      try {
        // The name is the benchmark's own (prefix + hex), safe to inline.
        const res = (await h.db.execute(
          `select sessions from pg_stat_database where datname = '${name.replace(/'/g, "''")}'`,
        )) as unknown;
        const rows = (Array.isArray(res) ? res : (res as { rows?: unknown[] }).rows) as
          | { sessions?: unknown }[]
          | undefined;
        return Number(rows?.[0]?.sessions ?? Number.NaN);
      } catch {
        return Number.NaN;
      }
    },
    close: () => h.close(),
  };
}
