import { sql } from 'drizzle-orm';
import type { Logger } from 'drizzle-orm/logger';
import { drizzle as drizzlePostgres, PostgresJsPreparedQuery } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import journal from '../migrations/meta/_journal.json' with { type: 'json' };
import type { Database, DbHandle, Statements } from './client.js';
import { runBackfills } from './maintenance.js';
import * as schema from './schema.js';
import { type Statement, toQuery } from './statement.js';
import { instrumentQueryBuilder, tracedStatements } from './telemetry.js';

/**
 * The Postgres driver (postgres.js) on its own, for every runtime: no embedded database and no file read at import,
 * so a Workers bundle that imports `@flowgate/db/postgres` holds neither PGlite nor the migrations folder. Node's
 * `createDb` builds on it.
 */

/** Timestamp, date and interval types: passed through as text, as the query builder's drivers do. */
export const TEXT_TYPES = [1082, 1083, 1114, 1184, 1182, 1185, 1115, 1231, 1186];

/** How many migrations this build ships: read from drizzle's journal, imported as a module (no disk read). */
export const SHIPPED_MIGRATIONS = journal.entries.length;

export function statementLogger(onStatement: ((text: string) => void) | undefined): Logger | undefined {
  return onStatement ? { logQuery: (query) => onStatement(query) } : undefined;
}

export async function checkReady(db: Database): Promise<boolean> {
  try {
    const rows = await db.statements.rows<{ n: number }>(
      sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
    );
    return (rows[0]?.n ?? 0) >= SHIPPED_MIGRATIONS;
  } catch {
    return false;
  }
}

export function textTypesAsText(client: postgres.Sql): void {
  for (const oid of TEXT_TYPES) client.options.parsers[oid] = (v: string) => v;
}

export const runOn = async <T>(
  client: postgres.Sql,
  statement: Statement,
  onStatement: ((text: string) => void) | undefined,
): Promise<T[]> => {
  const { sql: text, params } = toQuery(statement);
  onStatement?.(text);
  const rows = await client.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true });
  return [...rows] as T[];
};

/**
 * On Postgres, plain statements share the query builder's pool; prepared ones run on a small pool of their own whose
 * sessions ask for generic plans. postgres.js prepares each statement text once per connection and keeps it.
 */
function postgresStatements(
  client: postgres.Sql,
  url: string,
  max: number,
  onStatement: ((text: string) => void) | undefined,
): Statements & { end(): Promise<void> } {
  const generic = postgres(url, {
    max,
    onnotice: () => {},
    connection: { application_name: 'flowgate', plan_cache_mode: 'force_generic_plan' },
  });
  textTypesAsText(client);
  textTypesAsText(generic);
  return {
    rows: (statement) => runOn(client, statement, onStatement),
    prepared: (statement) => runOn(generic, statement, onStatement),
    end: () => generic.end({ timeout: 5 }),
  };
}

/** The query builder and raw statements over one postgres.js client. */
export function drizzleOn(
  client: postgres.Sql,
  statements: Statements,
  onStatement: ((text: string) => void) | undefined,
): Database {
  instrumentQueryBuilder(PostgresJsPreparedQuery, 'postgres');
  const logger = statementLogger(onStatement);
  return Object.assign(drizzlePostgres(client, { schema, ...(logger ? { logger } : {}) }), {
    statements: tracedStatements(statements, 'postgres'),
  }) as unknown as Database;
}

export interface PostgresOptions {
  /** postgres.js pool size. */
  maxConnections?: number | undefined;
  onStatement?: ((text: string) => void) | undefined;
  /**
   * Where drizzle's migration files are (Node passes its folder). Without it `migrate()` refuses: migrations run
   * from Node (`flowgate db migrate`).
   */
  migrationsFolder?: string | undefined;
}

const MIGRATION_LOCK_KEY = 727_001;

/** A long-lived pool on Postgres (Node, Bun, Deno): LISTEN/NOTIFY on its connections. */
export function createPostgresDb(url: string, options: PostgresOptions = {}): DbHandle {
  const max = options.maxConnections ?? 10;
  const { onStatement, migrationsFolder } = options;
  const client = postgres(url, { max, onnotice: () => {}, connection: { application_name: 'flowgate' } });
  const statements = postgresStatements(client, url, Math.max(1, Math.ceil(max / 4)), onStatement);
  const db = drizzleOn(client, statements, onStatement);
  return {
    db,
    driver: 'postgres',
    migrate: async () => {
      if (!migrationsFolder) throw new Error('migrations run from Node: flowgate db migrate');
      const { migrate } = await import('drizzle-orm/postgres-js/migrator');
      // One connection holds an advisory lock so concurrent replicas migrate one at a time.
      const lockClient = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await lockClient`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
        await migrate(drizzlePostgres(lockClient), { migrationsFolder });
      } finally {
        await lockClient`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.catch(() => {});
        await lockClient.end();
      }
      await runBackfills(db);
    },
    ready: () => checkReady(db),
    listen: async (channel, onPayload) => {
      const sub = await client.listen(channel, onPayload);
      return () => sub.unlisten();
    },
    notify: async (channel, payload) => {
      await client.notify(channel, payload);
    },
    close: async () => {
      await Promise.all([client.end({ timeout: 5 }), statements.end()]);
    },
  };
}
