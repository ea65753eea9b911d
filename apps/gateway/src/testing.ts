import type { DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { generateEncryptionKey } from '@flowgate/secrets';
import type { Hono } from 'hono';
import pino from 'pino';
import { createApp, type GatewayDeps, type RouteInstaller } from './app.js';
import { loadConfig } from './config.js';
import type { AppEnv } from './context.js';
import { DEFAULT_INSTALLERS } from './installers.js';
import { buildDeps } from './server.js';

export const TEST_ADMIN_TOKEN = 'test-operator-token-0123456789abcdef';

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Harness {
  app: Hono<AppEnv>;
  deps: GatewayDeps;
  db: DbHandle;
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  createWorkspace(id: string, name?: string): Promise<void>;
  createServiceAccount(
    workspaceId: string,
    capabilities: string[],
    name?: string,
  ): Promise<{ serviceAccountId: string; keyId: string; apiKey: string }>;
  close(): Promise<void>;
}

/**
 * An in-process gateway over a fresh test database (PGlite, or Postgres when DATABASE_URL is set), driven
 * through `app.request` — the same Request/Response path the Node server uses. Pass `db` to build a second
 * "replica" over the same database.
 */
export async function createHarness(
  options: {
    db?: DbHandle;
    env?: Record<string, string>;
    installers?: RouteInstaller[];
    /** The gateway's clock (ms since the epoch). */
    now?: () => number;
  } = {},
): Promise<Harness> {
  const ownsDb = !options.db;
  const db = options.db ?? (await createTestDb());
  const config = loadConfig({
    FLOWGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    FLOWGATE_ENCRYPTION_KEY: generateEncryptionKey(),
    FLOWGATE_LOG_LEVEL: 'silent',
    FLOWGATE_PUBLIC_URL: 'http://127.0.0.1:8787',
    ...options.env,
  });
  const deps = await buildDeps({
    config,
    db,
    logger: pino({ level: 'silent' }),
    ...(options.now ? { now: options.now } : {}),
  });
  const app = createApp(deps, options.installers ?? DEFAULT_INSTALLERS);

  const request = async (method: string, path: string, opts: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? TEST_ADMIN_TOKEN : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    return app.request(path, { method, headers, ...(body !== undefined ? { body } : {}) });
  };

  const expectStatus = async (res: Response, status: number) => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };

  return {
    app,
    deps,
    db,
    request,
    async createWorkspace(id, name = id) {
      await expectStatus(await request('POST', '/api/admin/workspaces', { body: { id, name } }), 201);
    },
    async createServiceAccount(workspaceId, capabilities, name = 'agent') {
      const sa = await expectStatus(
        await request('POST', `/api/workspaces/${workspaceId}/service-accounts`, {
          body: { name, capabilities },
        }),
        201,
      );
      const serviceAccountId = sa.serviceAccountId as string;
      const created = await expectStatus(
        await request('POST', `/api/workspaces/${workspaceId}/service-accounts/${serviceAccountId}/keys`, {
          body: {},
        }),
        201,
      );
      const key = created.key as { keyId: string; apiKey: string };
      return { serviceAccountId, keyId: key.keyId, apiKey: key.apiKey };
    },
    async close() {
      await deps.close();
      if (ownsDb) await db.close();
    },
  };
}
