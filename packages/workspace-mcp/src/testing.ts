/**
 * Shared fixtures for this package's tests: a real, migrated database per test file (PGlite in memory, or a
 * throwaway Postgres database when DATABASE_URL is set), request contexts whose workspace is the real `Workspace`
 * opened on it, and JSON-RPC helpers. Seed data with `@flowgate/workspace/testing`.
 */

import { type Capability, GRANTED_BY_FULL } from '@flowgate/auth';
import type { Database, DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { openWorkspace, type WorkspaceDeps } from '@flowgate/workspace';
import { testWorkspaceDeps } from '@flowgate/workspace/testing';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll } from 'vitest';
import { getTool } from './catalog.js';
import type { McpAuditEntry, McpRequestContext } from './context.js';
import { handleMcpMessage } from './dispatch.js';
import { NO_NARROWING } from './narrowing.js';
import { OPEN_WORKSPACE_POLICY } from './policy.js';

/** Every capability a tool can be gated by: the auth package's list, so a new capability reaches these tests. */
export const ALL_CAPABILITIES: readonly Capability[] = GRANTED_BY_FULL;

export interface TestContext extends McpRequestContext {
  audits: McpAuditEntry[];
  errors: unknown[];
}

/**
 * A request context for workspace `over.workspaceId` (default ws-acme) with every capability and no narrowing; its
 * `workspace` is the real one, opened on `deps` for the principal.
 */
export function makeCtx(deps: WorkspaceDeps, over: Partial<McpRequestContext> = {}): TestContext {
  const audits: McpAuditEntry[] = [];
  const errors: unknown[] = [];
  const workspaceId = over.workspaceId ?? 'ws-acme';
  const principal = over.principal ?? {
    kind: 'service_account' as const,
    id: 'sa_agent',
    name: 'agent',
    keyId: 'key_1',
  };
  const workspace = openWorkspace(deps, { workspaceId, actor: { kind: principal.kind, id: principal.id } });
  return {
    workspaceId,
    principal,
    capabilities: new Set<Capability>(ALL_CAPABILITIES),
    narrowing: NO_NARROWING,
    workspacePolicy: OPEN_WORKSPACE_POLICY,
    workspace: () => workspace,
    protocolVersionHeader: '2025-11-25',
    cursorKey: 'test-cursor-key',
    publicBaseUrl: 'https://flowgate.test',
    audit: (e: McpAuditEntry) => audits.push(e),
    onError: (e: unknown) => errors.push(e),
    ...over,
    audits,
    errors,
  };
}

/** One database for a test file; usable inside tests and hooks registered after `useTestDb()`. */
export interface TestDb {
  readonly db: Database;
  readonly deps: WorkspaceDeps;
  /** `makeCtx` on this database. */
  ctx(over?: Partial<McpRequestContext>): TestContext;
  /** What `fn` returned, and the SQL statements it sent, in order. */
  statementsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }>;
  /** A workspace id not used before in this file: `{prefix}-{n}`. */
  uniqueId(prefix: string): string;
}

/** Opens a migrated database before the file's tests (and closes it after), counting the statements sent. */
export function useTestDb(): TestDb {
  let handle: DbHandle | undefined;
  let deps: WorkspaceDeps | undefined;
  let recording: string[] | null = null;
  let ids = 0;
  beforeAll(async () => {
    handle = await createTestDb({ onStatement: (text) => recording?.push(text) });
    deps = testWorkspaceDeps(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
  });
  const opened = (): WorkspaceDeps => {
    if (!deps) throw new Error('the test database opens in beforeAll; use it inside tests and hooks');
    return deps;
  };
  return {
    get db() {
      return opened().db;
    },
    get deps() {
      return opened();
    },
    ctx: (over) => makeCtx(opened(), over),
    async statementsDuring(fn) {
      const statements: string[] = [];
      recording = statements;
      try {
        return { result: await fn(), statements };
      } finally {
        recording = null;
      }
    },
    uniqueId: (prefix) => `${prefix}-${++ids}`,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies structurally.
export type Json = any;

export interface RpcResponse {
  status: number;
  body: {
    jsonrpc: string;
    id: unknown;
    result?: Json;
    error?: { code: number; message: string; data?: Json };
  };
}

let nextId = 1;

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new Map<string, ValidateFunction>();

/**
 * Every tool result a test sees, success or error, must validate against the output schema tools/list publishes:
 * SDK v1 clients reject a result whose structuredContent does not (even with isError set).
 */
function checkPublishedOutput(name: string, result: Json): void {
  const tool = getTool(name);
  if (!tool || result?.structuredContent === undefined) return;
  let validate = validators.get(name);
  if (!validate) {
    validate = ajv.compile(tool.descriptor.outputSchema);
    validators.set(name, validate);
  }
  if (!validate(result.structuredContent))
    throw new Error(
      `${name}: structuredContent fails the published outputSchema: ${ajv.errorsText(validate.errors)}`,
    );
}

/** Sends one request and returns the HTTP status and the parsed body. */
export async function rpc(
  ctx: McpRequestContext,
  method: string,
  params?: Record<string, unknown>,
): Promise<RpcResponse> {
  const id = nextId++;
  const res = await handleMcpMessage(
    params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params },
    ctx,
  );
  if (res.body === null) throw new Error(`expected a body, got status ${res.status}`);
  const body = JSON.parse(res.body);
  if (body.id !== id) throw new Error(`response id ${body.id} does not match request id ${id}`);
  if (method === 'tools/call') checkPublishedOutput(String(params?.name), body.result);
  return { status: res.status, body };
}

export async function callTool(
  ctx: McpRequestContext,
  name: string,
  args?: unknown,
  meta?: Record<string, unknown>,
) {
  const params: Record<string, unknown> = { name };
  if (args !== undefined) params.arguments = args;
  if (meta) params._meta = meta;
  return rpc(ctx, 'tools/call', params);
}

/**
 * `sealed` with its last two characters changed, always to different ones (a fixed replacement equals them once in
 * 4,096 seals, and the tampered value is then the real one).
 */
export function tamperedSeal(sealed: string): string {
  return `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`;
}
