import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { createLogger, loadConfig, type RunningGateway, startGateway } from '@flowgate/gateway';
import { generateEncryptionKey } from '@flowgate/secrets';
import type { AuditEntryRecord } from '@flowgate/workspace';

/**
 * The real gateway on 127.0.0.1 (port 0) over a fresh test database — PGlite, or a throwaway database on the
 * server named by DATABASE_URL — seeded only through the admin API over HTTP, as an operator would.
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
}

export async function startTestGateway(
  env: Record<string, string> = {},
  options: TestGatewayOptions = {},
): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fg-e2e-'));
  const ownsDb = !options.db;
  const db = options.db ?? (await createTestDb());
  let running: RunningGateway;
  try {
    const config = loadConfig({
      FLOWGATE_HOST: '127.0.0.1',
      FLOWGATE_PORT: '0',
      FLOWGATE_DATA_DIR: dataDir,
      FLOWGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      FLOWGATE_ENCRYPTION_KEY: generateEncryptionKey(),
      FLOWGATE_LOG_LEVEL: 'silent',
      FLOWGATE_WORKER: 'false',
      ...env,
    });
    const lines = options.logLines;
    running = await startGateway({
      config,
      db,
      ...(lines
        ? { logger: createLogger(config.logLevel, { write: (line: string) => void lines.push(line) }) }
        : {}),
    });
  } catch (err) {
    if (ownsDb) await db.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
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
    running,
    db,
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
        if (ownsDb) await db.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
