import { AsyncLocalStorage } from 'node:async_hooks';
import postgres from 'postgres';
import type { Database, DbHandle, Statements } from './client.js';
import { checkReady, drizzleOn, runOn, textTypesAsText } from './postgres.js';

/**
 * A database opened per request, for runtimes that forbid sharing a socket between requests (Workers: an I/O object
 * created in one request cannot be used from another). The app holds one stable `DbHandle` whose `db` forwards each
 * call to the current request's client through AsyncLocalStorage, so query code never asks where it runs. Each
 * request's postgres.js client connects only when a statement runs (a request answered from caches opens nothing)
 * and is closed after the response.
 */
export interface PerRequestDb {
  /** What the app holds. Statements outside `RequestDb.run` throw `no_request_database`. */
  handle: DbHandle;
  /** A client for one request (no connection yet). */
  open(): RequestDb;
}

export interface RequestDb {
  /** Runs `fn` with this request's client as the database; what `fn` starts (promises, timers) keeps it. */
  run<T>(fn: () => T): T;
  /** Ends the client once its statements finish; call after the response (Workers: `ctx.waitUntil`). */
  close(): Promise<void>;
}

export interface PerRequestOptions {
  /** Connections one request may open (transactions hold one; Workers allows six open sockets per request). */
  maxConnections?: number;
  onStatement?: ((text: string) => void) | undefined;
}

interface Current {
  client: postgres.Sql;
  db: Database;
}

export function createPerRequestDb(url: string, options: PerRequestOptions = {}): PerRequestDb {
  const storage = new AsyncLocalStorage<Current>();
  const { onStatement } = options;
  const current = (): Current => {
    const found = storage.getStore();
    if (!found) {
      throw Object.assign(new Error('no database outside a request: run the call inside RequestDb.run'), {
        code: 'no_request_database',
      });
    }
    return found;
  };
  // A proxy over the request's drizzle instance: methods are bound to it, so `db.select()`, `db.transaction()` and
  // `db.statements` behave exactly as on a pool.
  const db = new Proxy({} as Database, {
    get(_target, property) {
      const target = current().db;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    has: (_target, property) => Reflect.has(current().db, property),
  });
  const handle: DbHandle = {
    db,
    driver: 'postgres',
    migrate: () => Promise.reject(new Error('migrations run from Node: flowgate db migrate')),
    ready: () => checkReady(db),
    // LISTEN needs a connection that outlives requests; wake-ups poll instead (createRunBroker's `settle`).
    listen: () => Promise.reject(new Error('no LISTEN on a per-request database')),
    notify: async (channel, payload) => {
      await current().client.notify(channel, payload);
    },
    close: async () => {},
  };
  return {
    handle,
    open() {
      // postgres.js connects on the first statement, not here.
      const client = postgres(url, {
        max: options.maxConnections ?? 3,
        onnotice: () => {},
        connection: { application_name: 'flowgate' },
        // postgres.js reads the server's array types with one more query per connection; a connection here lives one
        // request, and the schema uses built-in types only (no enums, no array columns).
        fetch_types: false,
      });
      textTypesAsText(client);
      // A connection lives one request, so a generic plan cached on it would never be reused: one pool for both.
      const statements: Statements = {
        rows: (statement) => runOn(client, statement, onStatement),
        prepared: (statement) => runOn(client, statement, onStatement),
      };
      const scope: Current = { client, db: drizzleOn(client, statements, onStatement) };
      return {
        run: (fn) => storage.run(scope, fn),
        close: () => client.end({ timeout: 5 }),
      };
    },
  };
}
