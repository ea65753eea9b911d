/** Shared fixtures for this package's tests: an in-memory WorkspaceServices and a request context builder. */
import type { Capability } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import type { ConnectionCheck, ConnectionSummary } from './catalog.js';
import type { FeedbackInput, McpAuditEntry, McpRequestContext, WorkspaceServices } from './context.js';
import { handleMcpMessage } from './dispatch.js';
import { NO_NARROWING } from './narrowing.js';
import { OPEN_WORKSPACE_POLICY } from './policy.js';

export const ALL_CAPABILITIES: readonly Capability[] = [
  'flows.read',
  'flows.run',
  'flows.manage',
  'runs.read',
  'resources.read',
  'installations.read',
  'connections.read',
  'steps.read',
  'feedback.send',
];

export function connection(n: number, over: Partial<ConnectionSummary> = {}): ConnectionSummary {
  return {
    id: `conn_${String(n).padStart(3, '0')}`,
    name: `crm-${n}`,
    type: 'http-api',
    baseUrl: `https://api${n}.example.test/v1`,
    authType: 'bearer',
    status: 'active',
    health: null,
    configKeys: ['header_name'],
    boundSlots: [],
    createdAt: '2026-11-01T00:00:00.000Z',
    ...over,
  };
}

export interface FakeServices extends WorkspaceServices {
  connections: ConnectionSummary[];
  feedback: FeedbackInput[];
  calls: { method: string; input: unknown }[];
}

export function fakeServices(
  connections: ConnectionSummary[] = [connection(1), connection(2), connection(3)],
): FakeServices {
  const svc: FakeServices = {
    connections,
    feedback: [],
    calls: [],
    async workspaceInfo() {
      svc.calls.push({ method: 'workspaceInfo', input: null });
      return { id: 'ws-acme', name: 'Acme' };
    },
    async listConnections(input) {
      svc.calls.push({ method: 'listConnections', input });
      const start = input.after === null ? 0 : svc.connections.findIndex((c) => c.id === input.after) + 1;
      const items = svc.connections.slice(start, start + input.limit);
      const last = items.at(-1);
      return { items, nextAfter: start + input.limit < svc.connections.length && last ? last.id : null };
    },
    async checkConnections(input) {
      svc.calls.push({ method: 'checkConnections', input });
      const check = (c: ConnectionSummary): ConnectionCheck => ({
        connectionId: c.id,
        name: c.name,
        type: c.type,
        ok: c.status === 'active',
        status: c.status === 'active' ? 'healthy' : 'disabled',
        httpStatus: c.status === 'active' ? 200 : null,
        latencyMs: c.status === 'active' ? 12 : null,
        message: null,
        checkedAt: '2026-11-20T10:00:00.000Z',
      });
      if (input.connectionIds) {
        const known = svc.connections.filter((c) => input.connectionIds?.includes(c.id));
        return {
          items: known.map(check),
          unknownConnectionIds: input.connectionIds.filter((id) => !known.some((c) => c.id === id)),
          nextAfter: null,
        };
      }
      const start = input.after === null ? 0 : svc.connections.findIndex((c) => c.id === input.after) + 1;
      const items = svc.connections.slice(start, start + input.limit);
      const last = items.at(-1);
      return {
        items: items.map(check),
        unknownConnectionIds: [],
        nextAfter: start + input.limit < svc.connections.length && last ? last.id : null,
      };
    },
    async sendFeedback(input) {
      svc.calls.push({ method: 'sendFeedback', input });
      if (input.summary === 'explode')
        throw new AppError('unavailable', 'Feedback storage is unavailable, try again later');
      svc.feedback.push(input);
      return { feedbackId: `fb_${svc.feedback.length}`, createdAt: '2026-11-20T10:00:00.000Z' };
    },
  };
  return svc;
}

export interface TestContext extends McpRequestContext {
  services: FakeServices;
  audits: McpAuditEntry[];
  errors: unknown[];
}

export function makeCtx(over: Partial<McpRequestContext> = {}): TestContext {
  const audits: McpAuditEntry[] = [];
  const errors: unknown[] = [];
  const ctx = {
    workspaceId: 'ws-acme',
    principal: { kind: 'service_account', id: 'sa_agent', name: 'agent', keyId: 'key_1' },
    capabilities: new Set<Capability>(ALL_CAPABILITIES),
    narrowing: NO_NARROWING,
    workspacePolicy: OPEN_WORKSPACE_POLICY,
    services: fakeServices(),
    protocolVersionHeader: '2025-11-25',
    cursorKey: 'test-cursor-key',
    publicBaseUrl: 'https://flowgate.test',
    audit: (e: McpAuditEntry) => audits.push(e),
    onError: (e: unknown) => errors.push(e),
    ...over,
    audits,
    errors,
  } as TestContext;
  return ctx;
}

// biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies structurally.
type Json = any;

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
