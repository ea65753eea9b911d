import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import * as schema from './schema.js';

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

export interface DbHandle {
  db: Database;
  driver: 'pglite' | 'postgres';
  /** Applies pending migrations; safe to call concurrently from several processes on Postgres. */
  migrate(): Promise<void>;
  /** True when the database answers and every shipped migration is applied. */
  ready(): Promise<boolean>;
  /** Subscribe to a NOTIFY channel; returns an unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** A postgres:// URL. When absent, the embedded PGlite database is used. */
  url?: string | undefined;
  /** PGlite data directory; absent means in-memory (tests). */
  dataDir?: string | undefined;
  /** postgres.js pool size. */
  maxConnections?: number;
}

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../migrations', import.meta.url));
const MIGRATION_LOCK_KEY = 727_001;

export async function createDb(options: DbOptions = {}): Promise<DbHandle> {
  return options.url
    ? createPostgres(options.url, options.maxConnections ?? 10)
    : createPglite(options.dataDir);
}

async function createPglite(dataDir: string | undefined): Promise<DbHandle> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // The flow-search migration creates these extensions; PGlite can only create the ones it was started with.
  const extensions = { pg_trgm, btree_gin };
  const client = dataDir ? new PGlite(dataDir, { extensions }) : new PGlite({ extensions });
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  const handle: DbHandle = {
    db,
    driver: 'pglite',
    migrate: async () => {
      await migratePglite(drizzlePglite(client), { migrationsFolder: MIGRATIONS_FOLDER });
      // PGlite has no autovacuum: refresh planner statistics at each start so plans follow the data's real size.
      await client.exec('analyze');
    },
    ready: () => checkReady(db),
    listen: async (channel, onPayload) => {
      const unsubscribe = await client.listen(channel, onPayload);
      return async () => unsubscribe();
    },
    notify: async (channel, payload) => {
      await client.query('select pg_notify($1, $2)', [channel, payload]);
    },
    close: () => client.close(),
  };
  return handle;
}

async function createPostgres(url: string, max: number): Promise<DbHandle> {
  const client = postgres(url, { max, onnotice: () => {}, connection: { application_name: 'flowgate' } });
  const db = drizzlePostgres(client, { schema }) as unknown as Database;
  return {
    db,
    driver: 'postgres',
    migrate: async () => {
      // One connection holds an advisory lock so concurrent replicas migrate one at a time.
      const lockClient = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await lockClient`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
        await migratePostgres(drizzlePostgres(lockClient), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await lockClient`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.catch(() => {});
        await lockClient.end();
      }
    },
    ready: () => checkReady(db),
    listen: async (channel, onPayload) => {
      const sub = await client.listen(channel, onPayload);
      return () => sub.unlisten();
    },
    notify: async (channel, payload) => {
      await client.notify(channel, payload);
    },
    close: () => client.end({ timeout: 5 }),
  };
}

async function checkReady(db: Database): Promise<boolean> {
  try {
    const { readMigrationFiles } = await import('drizzle-orm/migrator');
    const expected = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).length;
    const rows = (await db.execute(
      sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
    )) as unknown;
    const list = Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows;
    const n = (list[0] as { n: number } | undefined)?.n ?? 0;
    return n >= expected;
  } catch {
    return false;
  }
}
