import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { sha1Hex } from '@flowgate/core';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite, PglitePreparedQuery } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { DEFAULT_EMBEDDED_SHARED_BUFFERS_MB, embeddedSettings, initEmbeddedDataDir } from './embedded.js';
import { runBackfills } from './maintenance.js';
import { PgliteThread } from './pglite-thread.js';
import { checkReady, createPostgresDb, statementLogger, TEXT_TYPES } from './postgres.js';
import * as schema from './schema.js';
import { type Statement, toQuery } from './statement.js';
import { instrumentQueryBuilder, tracedStatements } from './telemetry.js';

export type Schema = typeof schema;

/**
 * Raw statements for what the query builder cannot say (ranked search, `FOR UPDATE SKIP LOCKED` claims), the same on
 * both drivers: repositories never ask which driver they run on. Rows come back with the same value types on both:
 * timestamps as text, json as parsed values.
 */
export interface Statements {
  /** The rows of one statement. */
  rows<T>(statement: Statement): Promise<T[]>;
  /**
   * The rows of a statement run as a named prepared statement with a generic plan, kept per connection and reused for
   * every parameter value: for multi-branch statements whose branches are gated by parameters at run time, where
   * planning costs more than running.
   */
  prepared<T>(statement: Statement): Promise<T[]>;
}

export type Database = PgDatabase<PgQueryResultHKT, Schema> & { readonly statements: Statements };

/** A transaction open on the database. */
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];
/** A database or a transaction open on it: what helpers that run inside either accept. */
export type Executor = Database | Transaction;

export interface DbHandle {
  db: Database;
  driver: 'pglite' | 'postgres';
  /**
   * Applies pending migrations, then the backfills this database has not completed (maintenance.ts); safe to call
   * concurrently from several processes on Postgres.
   */
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
  /** Shared buffers of the embedded database in MB (its memory bound; see embedded.ts). */
  embeddedSharedBuffersMb?: number | undefined;
  /** postgres.js pool size. */
  maxConnections?: number;
  /** Sees the text of every statement sent (tests count statements with it). */
  onStatement?: ((text: string) => void) | undefined;
}

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../migrations', import.meta.url));

/**
 * Node's database: Postgres when a URL is given, else the embedded PGlite. Other runtimes import
 * `@flowgate/db/postgres` (no PGlite, no migrations folder).
 */
export async function createDb(options: DbOptions = {}): Promise<DbHandle> {
  return options.url
    ? createPostgresDb(options.url, {
        maxConnections: options.maxConnections,
        onStatement: options.onStatement,
        migrationsFolder: MIGRATIONS_FOLDER,
      })
    : createPglite(
        options.dataDir,
        options.embeddedSharedBuffersMb ?? DEFAULT_EMBEDDED_SHARED_BUFFERS_MB,
        options.onStatement,
      );
}

/** A parameter in the text format of the extended protocol. */
function textParam(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

const statementName = (text: string) => `fg_${sha1Hex(text).slice(0, 24)}`;

/** Raw statements on the embedded database's thread (`prepared`: the extended protocol there, see pglite-worker.mjs). */
function pgliteStatements(
  thread: PgliteThread,
  onStatement: ((text: string) => void) | undefined,
): Statements {
  return {
    async rows<T>(statement: Statement) {
      const { sql: text, params } = toQuery(statement);
      onStatement?.(text);
      return thread.rows<T>(text, params);
    },
    async prepared<T>(statement: Statement) {
      const { sql: text, params } = toQuery(statement);
      onStatement?.(text);
      return thread.prepared<T>(text, statementName(text), params.map(textParam));
    },
  };
}

async function createPglite(
  dataDir: string | undefined,
  sharedBuffersMb: number,
  onStatement: ((text: string) => void) | undefined,
): Promise<DbHandle> {
  instrumentQueryBuilder(PglitePreparedQuery, 'pglite');
  if (dataDir) await initEmbeddedDataDir(dataDir);
  const thread = await PgliteThread.start({
    dataDir,
    postgresqlconf: embeddedSettings(sharedBuffersMb),
    textTypes: TEXT_TYPES,
  });
  // drizzle's PGlite session calls only `query` and `transaction`, which the thread offers with PGlite's signature.
  const client = thread as unknown as PGlite;
  const logger = statementLogger(onStatement);
  const db = Object.assign(drizzlePglite(client, { schema, ...(logger ? { logger } : {}) }), {
    statements: tracedStatements(pgliteStatements(thread, onStatement), 'pglite'),
  }) as unknown as Database;
  const handle: DbHandle = {
    db,
    driver: 'pglite',
    migrate: async () => {
      await migratePglite(drizzlePglite(client), { migrationsFolder: MIGRATIONS_FOLDER });
      await runBackfills(db);
      // PGlite has no autovacuum: refresh planner statistics at each start so plans follow the data's real size.
      await thread.exec('analyze');
    },
    ready: () => checkReady(db),
    listen: (channel, onPayload) => thread.listen(channel, onPayload),
    notify: async (channel, payload) => {
      await thread.query('select pg_notify($1, $2)', [channel, payload]);
    },
    close: () => thread.close(),
  };
  return handle;
}

/**
 * Like `ready()`, but a failure to connect (refused, bad credentials, missing database) is thrown rather than
 * folded into "not ready": a caller that waits for the database must tell what can heal from what cannot.
 */
export async function databaseState(handle: DbHandle): Promise<'ready' | 'not_migrated'> {
  await handle.db.statements.rows(sql`select 1`);
  return (await handle.ready()) ? 'ready' : 'not_migrated';
}
