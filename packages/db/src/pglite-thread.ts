import { Worker } from 'node:worker_threads';
import { messages, type Results } from '@electric-sql/pglite';

/**
 * The embedded database on a thread of its own (pglite-worker.mjs). PGlite is Postgres compiled to WebAssembly: in
 * the gateway's thread every statement would hold the event loop for as long as Postgres works, stalling every other
 * request. Here the main thread only posts statements and receives rows.
 *
 * `PgliteThread` offers what drizzle's PGlite session calls on a client (`query(text, params, { rowMode, parsers })`
 * and `transaction(fn)`) plus the raw statements, LISTEN and close, so the query builder and the repositories run on
 * it unchanged. PGlite's own `PGliteWorker` is not used: it needs the browser's Web Locks and BroadcastChannel
 * leader election, and passes only an error's message, not its Postgres fields.
 */

export interface PgliteThreadOptions {
  /** Data directory; absent means in memory. */
  dataDir?: string | undefined;
  /** Server settings (embedded.ts `embeddedSettings`). */
  postgresqlconf: string[];
  /** Type ids whose values stay text in `rows` and `prepared` (postgres.ts `TEXT_TYPES`). */
  textTypes: number[];
}

type Parser = (value: string, typeId?: number) => unknown;

/** The query options drizzle passes; parsers must be identity parsers (only their type ids cross the thread). */
export interface ThreadQueryOptions {
  rowMode?: 'array' | 'object';
  parsers?: Record<number, Parser>;
}

/** What drizzle's session calls on a client or on a transaction open on it. */
export interface ThreadQueryable {
  query<T>(text: string, params?: unknown[], options?: ThreadQueryOptions): Promise<Results<T>>;
  exec(text: string): Promise<void>;
}

/** The embedded database thread stopped (a fault in the database, or closed): every call then fails with this. */
export class EmbeddedDatabaseStopped extends Error {
  readonly code = 'embedded_database_stopped';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddedDatabaseStopped';
  }
}

/** An error as the worker sends it: its message and, for a Postgres error, its fields. */
interface ErrorFields {
  message: string;
  name?: string;
  stack?: string;
  database?: boolean;
  [field: string]: unknown;
}

type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: ErrorFields }
  | { notify: number; payload: string }
  | { ready: true }
  | { ready: false; error: ErrorFields };

type Request =
  | {
      op: 'query';
      tx?: number;
      text: string;
      params: unknown[];
      rowMode?: 'array' | 'object';
      raw?: number[];
    }
  | { op: 'rows'; text: string; params: unknown[] }
  | { op: 'prepared'; text: string; name: string; params: (string | null)[] }
  | { op: 'exec'; tx?: number; text: string }
  | { op: 'begin' }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'listen'; channel: string; sub: number }
  | { op: 'unlisten'; sub: number }
  | { op: 'close' };

/** Young generation of the database thread's V8 heap, in MB (see `start`). */
const YOUNG_GENERATION_MB = 8;

const OWN_FIELDS = new Set(['message', 'name', 'stack', 'database']);

/** The worker's error as an error of the same kind here: a Postgres error is PGlite's `DatabaseError` again. */
function toError(fields: ErrorFields): Error {
  const error = fields.database
    ? new messages.DatabaseError(fields.message, 0, 'error')
    : new Error(fields.message);
  for (const [key, value] of Object.entries(fields)) {
    if (!OWN_FIELDS.has(key)) (error as unknown as Record<string, unknown>)[key] = value;
  }
  if (!fields.database && fields.name) Object.defineProperty(error, 'name', { value: fields.name });
  // The database thread's stack says where Postgres or PGlite raised it; the caller's awaits follow it.
  if (fields.stack) error.stack = fields.stack;
  return error;
}

/** The type ids of `parsers`, each checked to leave text as it is (a function cannot cross to the thread). */
function identityTypeIds(parsers: Record<number, Parser>): number[] {
  const ids: number[] = [];
  for (const key of Object.keys(parsers)) {
    const id = Number(key);
    if (parsers[id]?.('0', id) !== '0') {
      throw new Error(`the embedded database thread takes only identity parsers (type ${key})`);
    }
    ids.push(id);
  }
  return ids;
}

export class PgliteThread implements ThreadQueryable {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  readonly #listeners = new Map<number, (payload: string) => void>();
  #nextId = 1;
  #stopped: Error | undefined;
  #closing: Promise<void> | undefined;
  #exited: Promise<void>;
  #fault: Error | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    this.#exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: Reply) => this.#receive(reply));
    worker.on('error', (error) => {
      this.#fault = error;
      this.#stop(
        new EmbeddedDatabaseStopped(`the embedded database thread failed: ${error.message}`, {
          cause: error,
        }),
      );
    });
    worker.on('exit', (code) => {
      this.#stop(
        this.#closing
          ? new EmbeddedDatabaseStopped('the embedded database is closed')
          : new EmbeddedDatabaseStopped(
              `the embedded database thread stopped unexpectedly (exit code ${code})${this.#fault ? `: ${this.#fault.message}` : ''}`,
              { cause: this.#fault },
            ),
      );
    });
  }

  /** Starts the thread and resolves once the database is ready (or rejects with why it could not start). */
  static async start(options: PgliteThreadOptions): Promise<PgliteThread> {
    const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), {
      workerData: options,
      // Plain JavaScript: none of the parent's loader flags (tsx, a test runner's) are wanted there.
      execArgv: [],
      name: 'flowgate-embedded-db',
      // The thread's own V8 heap churns with every result it serialises; V8 would grow its young generation to
      // ≈ 48 MB and keep it at idle. A small one costs more frequent scavenges of short-lived objects only.
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const onMessage = (reply: Reply) => {
          if (!('ready' in reply)) return;
          done();
          if (reply.ready) resolve();
          else reject(toError(reply.error));
        };
        const onError = (error: Error) => {
          done();
          reject(error);
        };
        const onExit = (code: number) => {
          done();
          reject(
            new Error(`the embedded database thread exited (code ${code}) before the database was ready`),
          );
        };
        const done = () => {
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
        };
        worker.on('message', onMessage);
        worker.once('error', onError);
        worker.once('exit', onExit);
      });
    } catch (error) {
      await worker.terminate();
      throw error;
    }
    const thread = new PgliteThread(worker);
    // Idle, the thread keeps nothing alive: like the database in this thread, only calls in flight do.
    worker.unref();
    return thread;
  }

  /** The thread itself (tests stop it to see calls fail). */
  get worker(): Worker {
    return this.#worker;
  }

  #receive(reply: Reply): void {
    if ('notify' in reply) {
      const listener = this.#listeners.get(reply.notify);
      // As PGlite calls its listeners: after the current task, so a throwing listener fails alone.
      if (listener) queueMicrotask(() => listener(reply.payload));
      return;
    }
    if (!('id' in reply)) return;
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0 && !this.#closing) this.#worker.unref();
    if (reply.ok) pending.resolve(reply.value);
    else pending.reject(toError(reply.error));
  }

  #stop(error: Error): void {
    this.#stopped ??= error;
    for (const pending of this.#pending.values()) pending.reject(this.#stopped);
    this.#pending.clear();
    this.#listeners.clear();
  }

  #call<T>(request: Request): Promise<T> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      // A call in flight keeps the process alive, as an awaited statement on this thread would.
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#worker.postMessage({ ...request, id });
    });
  }

  #query<T>(
    tx: number | undefined,
    text: string,
    params: unknown[] = [],
    options: ThreadQueryOptions = {},
  ): Promise<Results<T>> {
    let raw: number[] | undefined;
    try {
      raw = options.parsers ? identityTypeIds(options.parsers) : undefined;
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#call({
      op: 'query',
      ...(tx === undefined ? {} : { tx }),
      text,
      params,
      ...(options.rowMode ? { rowMode: options.rowMode } : {}),
      ...(raw ? { raw } : {}),
    });
  }

  query<T>(text: string, params?: unknown[], options?: ThreadQueryOptions): Promise<Results<T>> {
    return this.#query<T>(undefined, text, params, options);
  }

  async exec(text: string): Promise<void> {
    await this.#call({ op: 'exec', text });
  }

  /**
   * A transaction held open on the thread until `fn` settles: commit when it returns, rollback when it throws.
   * Statements of other callers wait behind it (PGlite's mutex), as on one Postgres connection; nested transactions
   * are drizzle's savepoints, statements like any other.
   */
  async transaction<T>(fn: (tx: ThreadQueryable) => Promise<T>): Promise<T> {
    const tx = await this.#call<number>({ op: 'begin' });
    const open: ThreadQueryable = {
      query: <R>(text: string, params?: unknown[], options?: ThreadQueryOptions) =>
        this.#query<R>(tx, text, params, options),
      exec: async (text: string) => {
        await this.#call({ op: 'exec', tx, text });
      },
    };
    let result: T;
    try {
      result = await fn(open);
    } catch (error) {
      // The caller's error is the one to see; a rollback that fails too (the thread stopped) adds nothing to it.
      await this.#call({ op: 'end', tx, commit: false }).catch(() => {});
      throw error;
    }
    await this.#call({ op: 'end', tx, commit: true });
    return result;
  }

  /** The rows of a statement, values of `textTypes` as text. */
  async rows<T>(text: string, params: unknown[]): Promise<T[]> {
    return this.#call<T[]>({ op: 'rows', text, params });
  }

  /** The rows of a statement run as the named prepared statement `name` with a generic plan (see pglite-worker.mjs). */
  async prepared<T>(text: string, name: string, params: (string | null)[]): Promise<T[]> {
    return this.#call<T[]>({ op: 'prepared', text, name, params });
  }

  /** LISTEN on `channel`; the thread forwards each notification. Returns the unsubscribe. */
  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const sub = this.#nextId++;
    this.#listeners.set(sub, onPayload);
    try {
      await this.#call({ op: 'listen', channel, sub });
    } catch (error) {
      this.#listeners.delete(sub);
      throw error;
    }
    return async () => {
      if (!this.#listeners.delete(sub)) return;
      await this.#call({ op: 'unlisten', sub });
    };
  }

  /** Closes the database (its files flushed) and waits for the thread to end. Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#stopped) return;
      // Until the thread has ended, not only answered: the caller may exit right after.
      this.#worker.ref();
      try {
        await this.#call({ op: 'close' });
      } finally {
        // The thread ends on its own once it answered; a stuck one is stopped.
        const timer = setTimeout(() => void this.#worker.terminate(), 5_000);
        await this.#exited;
        clearTimeout(timer);
      }
    })();
    return this.#closing;
  }
}
