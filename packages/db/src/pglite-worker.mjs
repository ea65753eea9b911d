// The embedded database's own thread (`startPgliteThread` in pglite-thread.ts): it owns the PGlite instance, so
// Postgres's work never runs on the gateway's event loop. Plain JavaScript so it runs under any loader (tsx, vitest,
// the production bundle) without inheriting one. Its extensions must match embedded-init.mjs: the flow-search
// migration creates them, and PGlite can only create the ones it was started with.
//
// Requests arrive as `{ id, op, ... }` and are answered `{ id, ok: true, value }` or `{ id, ok: false, error }`, the
// error as plain fields (a Postgres error keeps code, detail, constraint, …). Every statement goes through PGlite's
// own mutexes, which are first-come first-served: statements run in the order they arrive, and an open transaction
// holds everything else back until it ends, as one Postgres connection would. Notifications are posted as
// `{ notify: subscription, payload }`, after the answer of the statement that raised them.
import { setFlagsFromString } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { messages, PGlite, parse, protocol } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/** @type {{ dataDir?: string, postgresqlconf: string[], textTypes: number[] }} */
const config = workerData;
const port = parentPort;
if (!port) throw new Error('pglite-worker.mjs runs as a worker thread');

/** The fields of a Postgres error (pg-protocol's DatabaseError) that cross to the caller. */
const ERROR_FIELDS = [
  'severity',
  'code',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
  'query',
];

/** @param {unknown} error */
function errorFields(error) {
  if (!(error instanceof Error)) return { message: String(error) };
  /** @type {Record<string, unknown>} */
  const out = {
    message: error.message,
    name: error.name,
    stack: error.stack,
    database: error instanceof messages.DatabaseError,
  };
  for (const field of ERROR_FIELDS) {
    const value = /** @type {Record<string, unknown>} */ (error)[field];
    if (typeof value === 'string' || typeof value === 'number') out[field] = value;
  }
  return out;
}

/** Parsers that leave a type's text as it is, by the set of type ids (drizzle's and ours are identity parsers). */
const identityParsers = new Map();
/** @param {number[] | undefined} oids */
function parsersFor(oids) {
  if (!oids || oids.length === 0) return undefined;
  const key = oids.join(',');
  let parsers = identityParsers.get(key);
  if (!parsers) {
    parsers = {};
    for (const oid of oids) parsers[oid] = (/** @type {string} */ v) => v;
    identityParsers.set(key, parsers);
  }
  return parsers;
}

/**
 * PGlite's parsers with identity ones laid over them, made once per set of type ids: handed to `parseResults` as
 * its defaults, so it does not copy PGlite's few hundred parsers into a new object for every statement as it does
 * for `options.parsers`. Built on first use, after PGlite has added its array types at start.
 */
const mergedParsers = new Map();
/** @param {number[] | undefined} oids */
function allParsers(oids) {
  const key = oids?.join(',') ?? '';
  let parsers = mergedParsers.get(key);
  if (!parsers) {
    parsers = { ...client.parsers, ...parsersFor(oids) };
    mergedParsers.set(key, parsers);
  }
  return parsers;
}
// V8 compiles PGlite's WebAssembly (and tiers hot functions up) on as many background tasks as it likes; each
// task's thread keeps the freed compiler memory in a malloc arena of its own, tens of MB of an idle gateway's
// resident memory. One task compiles the same code (idle RSS 268-295 -> 228-240 MB in the bench's setup).
setFlagsFromString('--wasm-num-compilation-tasks=1');
const options = { extensions: { pg_trgm, btree_gin }, postgresqlconf: config.postgresqlconf };
// PGlite reads its options from the first argument unless that is a data directory.
const client = config.dataDir ? new PGlite(config.dataDir, options) : new PGlite(options);

/** Open transactions by id: PGlite's transaction object and how to end it. */
const transactions = new Map();
let nextTransaction = 1;
/** Notification subscriptions by the caller's id → PGlite's unsubscribe. */
const subscriptions = new Map();

// ---- prepared statements (the extended protocol under PGlite's locks; see `Statements.prepared`) ----------------

const serialize = protocol.serialize;
/** Statement text → the name it was parsed under on this connection. */
const parsed = new Map();
const genericOn = serialize.query('set plan_cache_mode = force_generic_plan');
const genericOff = serialize.query('reset plan_cache_mode');

/** @param {Uint8Array[]} parts */
function concatBytes(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/**
 * PGlite caches no plan for the unnamed statements its `query` sends, and SQL `EXECUTE` takes no bind parameters, so
 * prepared statements speak the extended protocol: Parse once per statement text, then Bind/Execute with the generic
 * plan asked for around the Bind (where the plan is chosen), all under the locks `query` itself takes.
 * @param {{ text: string, name: string, params: (string | null)[] }} request
 */
async function prepared({ text, name, params }) {
  const known = parsed.get(text);
  const messages = [];
  if (known === undefined) messages.push(serialize.parse({ name, text }), serialize.sync());
  messages.push(
    genericOn,
    serialize.bind({ statement: known ?? name, values: params }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
    genericOff,
  );
  const message = concatBytes(messages);
  const result = await client._runExclusiveTransaction(() =>
    client._runExclusiveQuery(() => client.execProtocol(message)),
  );
  parsed.set(text, known ?? name);
  const sets = parse.parseResults(result.messages, allParsers(config.textTypes));
  // The SET and RESET answer without rows; the statement's rows are the set with a row description.
  const answer = sets.find((r) => r.fields.length > 0);
  return answer?.rows ?? [];
}

// ---- data statements, parsed once ---------------------------------------------------------------------------------

/**
 * PGlite's `query` parses, analyses and plans every statement anew, in six calls into the database (Parse, Describe,
 * Bind, Describe, Execute, Sync). The query builder and the repositories' raw statements send the same few texts
 * over and over with new parameters, so a data statement is parsed once under a name of its own, with the types of
 * its parameters remembered, and every later run is one call (Bind, Describe, Execute, Sync) that reuses the parse
 * and, after a few runs, the plan (Postgres's plan cache decides custom or generic) — as postgres.js does on a
 * server. At most `MAX_NAMED` texts are kept, the least recently used closed first. Other statements (DDL, SET, the
 * migrations) go through `query`.
 */
const MAX_NAMED = 256;
const DATA_STATEMENT = /^\s*(select|insert|update|delete|with)\b/i;
/** Statement text → its name and parameter types on this connection, least recently used first. */
const named = new Map();
let nextName = 1;

/** Names no longer in `named` still to be closed on the connection (sent with the next Parse). */
const unused = [];

/** Forgets the name of `text`; its statement is closed with the next Parse. */
function forget(text) {
  const statement = named.get(text);
  if (statement === undefined) return;
  named.delete(text);
  unused.push(statement.name);
}

/** Parses `text` under a new name and learns its parameter types (inside the caller's exclusive section). */
async function parseNamed(text) {
  if (named.size >= MAX_NAMED) forget(named.keys().next().value);
  const name = `fg_q${nextName++}`;
  const closing = unused.splice(0);
  const described = await client.execProtocol(
    concatBytes([
      ...closing.map((old) => serialize.close({ type: 'S', name: old })),
      serialize.parse({ name, text }),
      serialize.describe({ type: 'S', name }),
      serialize.sync(),
    ]),
    { syncToFs: false },
  );
  const types = described.messages.find((m) => m.name === 'parameterDescription')?.dataTypeIDs ?? [];
  const statement = { name, types };
  named.set(text, statement);
  return statement;
}

/** @param {{ name: string, types: number[] }} statement @param {unknown[]} params @param {boolean} sync */
async function runNamed(statement, params, sync) {
  const values = params.map((param, i) => {
    if (param === null || param === undefined) return null;
    const serializer = client.serializers[statement.types[i]];
    return serializer ? serializer(param) : String(param);
  });
  const result = await client.execProtocol(
    concatBytes([
      serialize.bind({ statement: statement.name, values }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    ]),
    { syncToFs: sync },
  );
  return result.messages;
}

/** A table the statement reads changed shape since it was parsed: Postgres will not run the old parse again. */
function staleStatement(error) {
  return (
    error instanceof messages.DatabaseError && error.code === '0A000' && /cached plan/.test(error.message)
  );
}

/**
 * @param {{ tx?: number, text: string, params: unknown[], rowMode?: 'array' | 'object', raw?: number[] }} request
 */
async function query(request) {
  const { text, params } = request;
  const known = named.get(text);
  if (known !== undefined) {
    // Most recently used last.
    named.delete(text);
    named.set(text, known);
  } else if (!DATA_STATEMENT.test(text)) {
    const options = { rowMode: request.rowMode, parsers: parsersFor(request.raw) };
    const result = await on(request.tx).query(text, params, options);
    return { rows: result.rows, fields: result.fields, affectedRows: result.affectedRows };
  }
  const alone = request.tx === undefined;
  // A statement for a transaction that has ended is refused here, as PGlite's transaction object refuses it.
  if (!alone) on(request.tx);
  const run = async () => {
    try {
      return await runNamed(named.get(text) ?? (await parseNamed(text)), params, alone);
    } catch (error) {
      if (!staleStatement(error)) throw error;
      forget(text);
      // Outside a transaction it is parsed again and run once more; inside one the error has ended the transaction.
      if (!alone) throw error;
      return await runNamed(await parseNamed(text), params, alone);
    }
  };
  try {
    // Inside an open transaction its holder has the transaction lock already; alone, a statement takes both, as
    // `query` does.
    const results = alone
      ? await client._runExclusiveTransaction(() => client._runExclusiveQuery(run))
      : await client._runExclusiveQuery(run);
    const options = request.rowMode ? { rowMode: request.rowMode } : undefined;
    const [result] = parse.parseResults(results, allParsers(request.raw), options);
    return {
      rows: result?.rows ?? [],
      fields: result?.fields ?? [],
      affectedRows: result?.affectedRows ?? 0,
    };
  } catch (error) {
    // As PGlite's own errors: the statement's text (never its values) comes with the error.
    if (error instanceof messages.DatabaseError) /** @type {Record<string, unknown>} */ (error).query = text;
    throw error;
  }
}

// ---- transactions -------------------------------------------------------------------------------------------------

/**
 * Opens a transaction and holds it: PGlite's `transaction` keeps its mutex until the callback returns, which is when
 * the caller sends `end`. Resolves with the transaction's id once BEGIN has run.
 */
function begin() {
  return new Promise((resolve, reject) => {
    const id = nextTransaction++;
    let opened = false;
    /** @type {(commit: boolean) => void} */
    let finish = () => {};
    const ended = new Promise((r) => {
      finish = r;
    });
    const done = client.transaction(async (tx) => {
      opened = true;
      transactions.set(id, { tx, finish, done });
      resolve(id);
      if (!(await ended)) await tx.rollback();
    });
    // Kept for `end`; a failure before BEGIN completed (closed database) is the answer to `begin` itself.
    transactions.set(id, { tx: undefined, finish, done });
    done.catch((error) => {
      if (!opened) {
        transactions.delete(id);
        reject(error);
      }
    });
  });
}

/** @param {number} id @param {boolean} commit */
async function end(id, commit) {
  const open = transactions.get(id);
  if (!open) throw new Error('Transaction is closed');
  transactions.delete(id);
  open.finish(commit);
  await open.done;
}

/** @param {number | undefined} id */
function on(id) {
  if (id === undefined) return client;
  const open = transactions.get(id);
  if (!open?.tx) throw new Error('Transaction is closed');
  return open.tx;
}

// ---- requests -----------------------------------------------------------------------------------------------------

/** @param {Record<string, any>} request */
async function handle(request) {
  switch (request.op) {
    case 'query':
      return query(request);
    case 'rows':
      return (await query({ text: request.text, params: request.params, raw: config.textTypes })).rows;
    case 'prepared':
      return prepared(request);
    case 'exec':
      await on(request.tx).exec(request.text);
      return undefined;
    case 'begin':
      return begin();
    case 'end':
      return end(request.tx, request.commit);
    case 'listen': {
      const sub = request.sub;
      subscriptions.set(
        sub,
        // Posted on the next turn, after the answer of the statement that raised it (PGlite calls back while it
        // reads that statement's results): the caller sees its own statement end before anyone hears of it, as
        // with Postgres, where a notification comes only after the commit. The in-process worker reports the run it
        // just ended before the echo of its own NOTIFY arrives, so a waiting call needs no second read of the run.
        await client.listen(request.channel, (payload) =>
          setImmediate(() => port.postMessage({ notify: sub, payload })),
        ),
      );
      return undefined;
    }
    case 'unlisten': {
      const unsubscribe = subscriptions.get(request.sub);
      subscriptions.delete(request.sub);
      await unsubscribe?.();
      return undefined;
    }
    case 'close':
      await client.close();
      return undefined;
    case 'crash':
      // Tests: an uncaught error on this thread, as a fault in the database would raise.
      setImmediate(() => {
        throw new Error('embedded database thread crashed on request');
      });
      return undefined;
    default:
      throw new Error(`unknown request ${String(request.op)}`);
  }
}

port.on('message', (request) => {
  handle(request).then(
    (value) => {
      port.postMessage({ id: request.id, ok: true, value });
      // After the answer to `close`, nothing holds this thread: closing the port lets it end on its own.
      if (request.op === 'close') port.close();
    },
    (error) => port.postMessage({ id: request.id, ok: false, error: errorFields(error) }),
  );
});

try {
  await client.waitReady;
  port.postMessage({ ready: true });
} catch (error) {
  port.postMessage({ ready: false, error: errorFields(error) });
  port.close();
}
