import { fileURLToPath } from 'node:url';
import { PGlite, parse, protocol } from '@electric-sql/pglite';
import { sha1Hex } from '@flowgate/core';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite, PglitePreparedQuery } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import {
  DEFAULT_EMBEDDED_SHARED_BUFFERS_MB,
  EMBEDDED_EXTENSIONS,
  embeddedSettings,
  initEmbeddedDataDir,
} from './embedded.js';
import { runBackfills } from './maintenance.js';
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

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const statementName = (text: string) => `fg_${sha1Hex(text).slice(0, 24)}`;

/**
 * PGlite caches no plan for the unnamed statements its `query` sends, and SQL `EXECUTE` takes no bind parameters, so
 * prepared statements speak the extended protocol: Parse once per statement text, then Bind/Execute with the generic
 * plan asked for around the Bind (where the plan is chosen), all under the locks `query` itself takes.
 */
function pgliteStatements(client: PGlite, onStatement: ((text: string) => void) | undefined): Statements {
  const serialize = protocol.serialize;
  /** Statement text → the name it was parsed under on this connection. */
  const parsed = new Map<string, string>();
  const parsers: Record<number, (v: string) => string> = {};
  for (const oid of TEXT_TYPES) parsers[oid] = (v) => v;
  const genericOn = serialize.query('set plan_cache_mode = force_generic_plan');
  const genericOff = serialize.query('reset plan_cache_mode');
  return {
    async rows<T>(statement: Statement) {
      const { sql: text, params } = toQuery(statement);
      onStatement?.(text);
      return (await client.query<T>(text, params, { parsers })).rows;
    },
    async prepared<T>(statement: Statement) {
      const { sql: text, params } = toQuery(statement);
      onStatement?.(text);
      const known = parsed.get(text);
      const name = known ?? statementName(text);
      const messages = [];
      if (known === undefined) messages.push(serialize.parse({ name, text }), serialize.sync());
      messages.push(
        genericOn,
        serialize.bind({ statement: name, values: params.map(textParam) }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
        genericOff,
      );
      const message = concatBytes(messages);
      const result = await client._runExclusiveTransaction(() =>
        client._runExclusiveQuery(() => client.execProtocol(message)),
      );
      parsed.set(text, name);
      const sets = parse.parseResults(result.messages, { ...client.parsers, ...parsers });
      // The SET and RESET answer without rows; the statement's rows are the set with a row description.
      const answer = sets.find((r) => r.fields.length > 0);
      return (answer?.rows ?? []) as T[];
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
  const options = { extensions: EMBEDDED_EXTENSIONS, postgresqlconf: embeddedSettings(sharedBuffersMb) };
  const client = dataDir ? new PGlite(dataDir, options) : new PGlite(options);
  await client.waitReady;
  const logger = statementLogger(onStatement);
  const db = Object.assign(drizzlePglite(client, { schema, ...(logger ? { logger } : {}) }), {
    statements: tracedStatements(pgliteStatements(client, onStatement), 'pglite'),
  }) as unknown as Database;
  const handle: DbHandle = {
    db,
    driver: 'pglite',
    migrate: async () => {
      await migratePglite(drizzlePglite(client), { migrationsFolder: MIGRATIONS_FOLDER });
      await runBackfills(db);
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

/**
 * Like `ready()`, but a failure to connect (refused, bad credentials, missing database) is thrown rather than
 * folded into "not ready": a caller that waits for the database must tell what can heal from what cannot.
 */
export async function databaseState(handle: DbHandle): Promise<'ready' | 'not_migrated'> {
  await handle.db.statements.rows(sql`select 1`);
  return (await handle.ready()) ? 'ready' : 'not_migrated';
}
