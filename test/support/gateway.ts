import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, type DbHandle } from '@flowgate/db';
import { createEmptyTestDatabase, createTestDb } from '@flowgate/db/testing';
import {
  createLogger,
  type GatewayConfig,
  loadConfig,
  type RunningGateway,
  startGateway,
} from '@flowgate/gateway';
import { createSecretBox, generateEncryptionKey, parseEncryptionKey } from '@flowgate/secrets';
import { createWorker, type Worker } from '@flowgate/worker';
import type { AuditEntryRecord } from '@flowgate/workspace';
import { type ChildRuntimeName, type E2eRuntime, e2eRuntime, spawnChildGateway } from './runtimes.js';

/**
 * The real gateway on 127.0.0.1 (port 0) over a fresh test database — PGlite, or a throwaway database on the
 * server named by DATABASE_URL — seeded only through the admin API over HTTP, as an operator would.
 *
 * With FLOWGATE_E2E_RUNTIME=bun|deno|workerd|node-process (runtimes.ts) the same tests run against that runtime's
 * gateway started as a child process on a throwaway Postgres database; a test asking for FLOWGATE_WORKER gets a Node
 * worker in the test process on the same database, as `flowgate worker` would run next to it. The test keeps `db`
 * (its own connection to that database); `running.deps` exists only in-process, so files that need it stay out of
 * the runtime suite (vitest.config.ts).
 */

export const ADMIN_TOKEN = 'e2e-operator-token-0123456789abcdefghij';

export interface ServiceAccountKey {
  serviceAccountId: string;
  keyId: string;
  apiKey: string;
}

/** One audit entry as `GET /api/workspaces/{ws}/audit` returns it: the domain's record, blockers as objects. */
export type AuditItem = Omit<AuditEntryRecord, 'blockers'> & {
  blockers: Array<Record<string, unknown>> | null;
};

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed body, or `undefined` when it is empty or not JSON. */
  json: unknown;
}

export interface TestGateway {
  url: string;
  /** Where the gateway runs: `node` in this process, otherwise a child process (runtimes.ts). */
  runtime: E2eRuntime;
  /** `deps` is the in-process gateway's internals; reading it throws when the gateway is a child process. */
  running: RunningGateway;
  /**
   * The database the gateway runs on; it stays open after `running.close()` until `close()` (and after `close()`
   * too when the caller passed it in).
   */
  db: DbHandle;
  mcpUrl(workspaceId: string): string;
  /** A call to the admin API with the operator token. */
  admin(method: string, path: string, body?: unknown): Promise<HttpAnswer>;
  createWorkspace(id: string, name?: string): Promise<void>;
  /** A service account with these capabilities and one fresh API key. */
  mintKey(workspaceId: string, capabilities: string[], name?: string): Promise<ServiceAccountKey>;
  createConnection(workspaceId: string, body: Record<string, unknown>): Promise<{ connectionId: string }>;
  setPolicy(workspaceId: string, policy: Record<string, unknown>): Promise<void>;
  /** Newest first, read over HTTP after the queue's periodic flush has written what was recorded. */
  audit(workspaceId: string): Promise<AuditItem[]>;
  /** Polls the audit API (the queue flushes every 250 ms) until `accept` holds for the items, or fails. */
  waitForAudit(
    workspaceId: string,
    accept: (items: AuditItem[]) => boolean,
    timeoutMs?: number,
  ): Promise<AuditItem[]>;
  close(): Promise<void>;
}

/** A response read whole: its text, and its JSON when the text parses. */
export async function answer(res: Response): Promise<HttpAnswer> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export interface TestGatewayOptions {
  /**
   * Run on this open database instead of a fresh one (a restart over the same data); `close()` then leaves it open
   * for the caller to close. Pass the same FLOWGATE_ENCRYPTION_KEY as before, or stored secrets cannot be read.
   */
  db?: DbHandle;
  /** Receives every line the gateway logs (raw pino JSON, at FLOWGATE_LOG_LEVEL) instead of discarding it. */
  logLines?: string[];
  /** Overrides FLOWGATE_E2E_RUNTIME for this gateway (the mixed-runtime replica test starts one of each). */
  runtime?: E2eRuntime;
}

/** The Postgres URL of each database this harness opened, so a second gateway can be started on it. */
const databaseUrls = new WeakMap<DbHandle, string>();

/** The URL of a database the harness opened on Postgres (null on PGlite). */
export function databaseUrlOf(db: DbHandle): string | null {
  return databaseUrls.get(db) ?? null;
}

/**
 * A fresh migrated database: PGlite without DATABASE_URL, otherwise a throwaway database on that server (dropped on
 * close) whose URL the harness remembers.
 */
export async function openTestDatabase(): Promise<DbHandle> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) return createTestDb();
  const database = await createEmptyTestDatabase(baseUrl);
  const handle = await createDb({ url: database.url, maxConnections: 4 });
  try {
    await handle.migrate();
  } catch (err) {
    await handle.close();
    await database.drop();
    throw err;
  }
  const close = handle.close;
  handle.close = async () => {
    await close();
    await database.drop();
  };
  databaseUrls.set(handle, database.url);
  return handle;
}

/** The defaults every test gateway starts with; the test's `env` overrides them. */
function defaultEnv(dataDir: string): Record<string, string> {
  return {
    FLOWGATE_HOST: '127.0.0.1',
    FLOWGATE_PORT: '0',
    FLOWGATE_DATA_DIR: dataDir,
    FLOWGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    FLOWGATE_ENCRYPTION_KEY: generateEncryptionKey(),
    FLOWGATE_LOG_LEVEL: 'silent',
    FLOWGATE_WORKER: 'false',
  };
}

export interface TestWorker {
  worker: Worker;
  stop(): Promise<void>;
}

/**
 * A Node worker in this process on the database at `url`, configured as `flowgate worker` reads `config` (the
 * encryption key, concurrency, lease and run limits): what executes runs for gateways that have none of their own.
 */
export async function startTestWorker(
  url: string,
  config: GatewayConfig,
  logLines?: string[],
): Promise<TestWorker> {
  if (!config.encryptionKey) throw new Error('a worker needs FLOWGATE_ENCRYPTION_KEY to read run secrets');
  const db = await createDb({ url, maxConnections: Math.max(4, config.workerConcurrency + 2) });
  const log = logLines
    ? createLogger(config.logLevel, { write: (line: string) => void logLines.push(line) })
    : undefined;
  const worker = createWorker({
    db,
    secretBox: createSecretBox(parseEncryptionKey(config.encryptionKey)),
    concurrency: config.workerConcurrency,
    leaseMs: config.runLeaseMs,
    allowPrivateNetwork: config.allowPrivateNetwork,
    limits: config.runLimits,
    ...(log ? { log } : {}),
  });
  try {
    await worker.start();
  } catch (err) {
    await db.close();
    throw err;
  }
  return {
    worker,
    async stop() {
      try {
        await worker.stop();
      } finally {
        await db.close();
      }
    },
  };
}

/**
 * The gateway of `runtime` as a child process on the database at `url`, plus a Node worker in this process
 * when the configuration asks for one; `running.close()` stops both.
 */
async function startChildGateway(
  runtime: ChildRuntimeName,
  env: Record<string, string>,
  url: string,
  logLines: string[] | undefined,
): Promise<RunningGateway> {
  const childEnv = { ...env, DATABASE_URL: url };
  const config = loadConfig(childEnv);
  const worker = config.worker ? await startTestWorker(url, config, logLines) : null;
  let gateway: Awaited<ReturnType<typeof spawnChildGateway>>;
  try {
    // The child executes no runs (the worker above does), as `pnpm serve:<runtime>` next to `flowgate worker`.
    gateway = await spawnChildGateway(runtime, { ...childEnv, FLOWGATE_WORKER: 'false' }, { logLines });
  } catch (err) {
    await worker?.stop();
    throw err;
  }
  let closing: Promise<void> | null = null;
  return {
    url: gateway.url,
    port: gateway.port,
    get deps(): never {
      throw new Error(
        `running.deps is the in-process gateway's internals; on ${runtime} the gateway is a child process ` +
          '(keep this test out of the runtime suite in vitest.config.ts)',
      );
    },
    close() {
      closing ??= (async () => {
        const code = await gateway.stop();
        await worker?.stop();
        if (code !== 0) throw new Error(`the ${runtime} gateway exited with ${code} on SIGTERM`);
      })();
      return closing;
    },
  };
}

export async function startTestGateway(
  env: Record<string, string> = {},
  options: TestGatewayOptions = {},
): Promise<TestGateway> {
  const runtime = options.runtime ?? e2eRuntime();
  if (runtime !== 'node' && !process.env.DATABASE_URL && !options.db) {
    throw new Error(
      `the ${runtime} gateway runs on Postgres only: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres); ` +
        'the harness creates and drops a throwaway database on that server',
    );
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'fg-e2e-'));
  const ownsDb = !options.db;
  let db: DbHandle | undefined;
  let running: RunningGateway;
  try {
    db = options.db ?? (await openTestDatabase());
    const fullEnv = { ...defaultEnv(dataDir), ...env };
    if (runtime === 'node') {
      const config = loadConfig(fullEnv);
      const lines = options.logLines;
      running = await startGateway({
        config,
        db,
        ...(lines
          ? { logger: createLogger(config.logLevel, { write: (line: string) => void lines.push(line) }) }
          : {}),
      });
    } else {
      const url = databaseUrlOf(db);
      if (!url) throw new Error(`the ${runtime} gateway needs a database this harness opened on Postgres`);
      running = await startChildGateway(runtime, fullEnv, url, options.logLines);
    }
  } catch (err) {
    if (ownsDb) await db?.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const openDb = db;
  const url = running.url;

  const admin = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return answer(
      await fetch(`${url}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
  };

  const expectStatus = async (
    method: string,
    path: string,
    body: unknown,
    status: number,
  ): Promise<Record<string, unknown>> => {
    const res = await admin(method, path, body);
    if (res.status !== status)
      throw new Error(`${method} ${path}: expected ${status}, got ${res.status}: ${res.text}`);
    return (res.json ?? {}) as Record<string, unknown>;
  };

  const audit = async (workspaceId: string): Promise<AuditItem[]> => {
    const body = await expectStatus('GET', `/api/workspaces/${workspaceId}/audit?limit=200`, undefined, 200);
    return body.items as AuditItem[];
  };

  let closed = false;
  return {
    url,
    runtime,
    running,
    db: openDb,
    mcpUrl: (workspaceId) => `${url}/api/workspaces/${workspaceId}/mcp`,
    admin,
    async createWorkspace(id, name = id) {
      await expectStatus('POST', '/api/admin/workspaces', { id, name }, 201);
    },
    async mintKey(workspaceId, capabilities, name = 'agent') {
      const sa = await expectStatus(
        'POST',
        `/api/workspaces/${workspaceId}/service-accounts`,
        { name, capabilities },
        201,
      );
      const serviceAccountId = sa.serviceAccountId as string;
      const created = await expectStatus(
        'POST',
        `/api/workspaces/${workspaceId}/service-accounts/${serviceAccountId}/keys`,
        {},
        201,
      );
      const key = created.key as { keyId: string; apiKey: string };
      return { serviceAccountId, keyId: key.keyId, apiKey: key.apiKey };
    },
    async createConnection(workspaceId, body) {
      const created = await expectStatus('POST', `/api/workspaces/${workspaceId}/connections`, body, 201);
      return { connectionId: created.connectionId as string };
    },
    async setPolicy(workspaceId, policy) {
      await expectStatus('PUT', `/api/workspaces/${workspaceId}/mcp-policy`, policy, 200);
    },
    audit,
    async waitForAudit(workspaceId, accept, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const items = await audit(workspaceId);
        if (accept(items)) return items;
        if (Date.now() > deadline) {
          throw new Error(
            `audit condition not met within ${timeoutMs} ms; entries: ${JSON.stringify(items, null, 1)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await running.close();
      } finally {
        if (ownsDb) await openDb.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
