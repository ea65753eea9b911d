import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { repos } from '@flowgate/db';
import { REDACTED } from '@flowgate/secrets';
import { openWorkspace } from '@flowgate/workspace';
import {
  connectionId,
  seedConnection,
  seedWorkspace,
  storedFeedback,
  TEST_CONNECTION_SECRET,
  TEST_NOW,
} from '@flowgate/workspace/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNarrowingHeaders } from '../narrowing.js';
import { callTool, tamperedSeal, useTestDb } from '../testing.js';
import { checkConnectionsTool } from './check-connections.js';
import { getWorkspaceContextTool } from './get-workspace-context.js';
import { listConnectionsTool } from './list-connections.js';
import { sendFeedbackTool } from './send-feedback.js';

const env = useTestDb();

/** An outside system for health checks: answers every request with 200 and records its path. */
let server: Server;
let upstream: string;
const requests: string[] = [];

beforeAll(async () => {
  await seedWorkspace(env.db, 'ws-acme', 'Acme');
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A new workspace with connections 1…n (crm-1…), each created with `spec(n)`. */
async function workspaceWithConnections(
  n: number,
  spec: (i: number) => Parameters<typeof seedConnection>[3] = () => ({}),
): Promise<{ ws: string; ids: string[] }> {
  const ws = await seedWorkspace(env.db, env.uniqueId('ws-conn'), 'Connections');
  const ids: string[] = [];
  for (let i = 1; i <= n; i++) ids.push(await seedConnection(env.deps, ws, i, spec(i)));
  return { ws, ids };
}

function narrow(headers: Parameters<typeof parseNarrowingHeaders>[0]) {
  const r = parseNarrowingHeaders(headers);
  if (!r.ok) throw new Error(r.error.message);
  return r.narrowing;
}

describe('get_workspace_context', () => {
  it('reports workspace, principal, capabilities, toolsets, groups, narrowing, hidden tools, limits and versions', async () => {
    const ctx = env.ctx({
      capabilities: new Set(['flows.read', 'resources.read', 'installations.read', 'feedback.send']),
      narrowing: narrow({ toolsets: 'read,feedback', readOnly: 'true' }),
      workspacePolicy: { readOnly: false, disabledTools: ['check_connections'] },
      protocolVersionHeader: '2025-06-18',
      limits: { maxRequestBodyBytes: 1_048_576 },
    });
    const { body } = await callTool(ctx, 'get_workspace_context', {});
    const out = body.result.structuredContent;
    expect(getWorkspaceContextTool.output.parse(out)).toEqual(out);
    expect(out.workspace).toEqual({ id: 'ws-acme', name: 'Acme' });
    expect(out.principal).toEqual({ kind: 'service_account', id: 'sa_agent', name: 'agent' });
    expect(JSON.stringify(out)).not.toContain('key_1');
    expect(out.capabilities).toEqual(['flows.read', 'resources.read', 'installations.read', 'feedback.send']);
    expect(out.toolsets.active).toEqual(['read', 'feedback']);
    expect(out.toolsets.available.map((t: { name: string }) => t.name)).toEqual([
      'context',
      'read',
      'search',
      'run',
      'setup',
      'authoring',
      'release',
      'debug',
      'feedback',
    ]);
    expect(out.capabilityGroups.find((g: { id: string }) => g.id === 'read_search')).toMatchObject({
      satisfied: true,
      missingCapabilities: [],
    });
    expect(out.capabilityGroups.find((g: { id: string }) => g.id === 'run_debug')).toMatchObject({
      satisfied: false,
      missingCapabilities: ['flows.run', 'runs.read'],
    });
    expect(out.narrowing).toEqual({
      toolsets: ['read', 'feedback'],
      tools: null,
      excludeTools: [],
      readOnly: true,
    });
    expect(out.workspacePolicy).toEqual({ readOnly: false, disabledTools: ['check_connections'] });
    expect(out.tools).toEqual({
      visible: [
        'get_workspace_context',
        'search_flows',
        'search_flow_tools',
        'inspect_flow_tool',
        'check_flow_readiness',
        'send_feedback',
        'validate_flow_definition',
        'get_flow_definition',
      ],
      hidden: [
        {
          tool: 'list_connections',
          blockers: [
            { reason: 'missing_service_account_capabilities', missingCapabilities: ['connections.read'] },
          ],
        },
        {
          tool: 'check_connections',
          blockers: [
            { reason: 'missing_service_account_capabilities', missingCapabilities: ['connections.read'] },
            { reason: 'workspace_disabled_tool' },
          ],
        },
        {
          tool: 'call_flow_tool',
          blockers: [
            { reason: 'missing_service_account_capabilities', missingCapabilities: ['flows.run'] },
            { reason: 'read_only_policy' },
            { reason: 'toolset_policy', toolToolsets: ['run'], activeToolsets: ['read', 'feedback'] },
          ],
        },
        {
          tool: 'get_run_status',
          blockers: [{ reason: 'missing_service_account_capabilities', missingCapabilities: ['runs.read'] }],
        },
        {
          tool: 'inspect_run_step',
          blockers: [{ reason: 'missing_service_account_capabilities', missingCapabilities: ['runs.read'] }],
        },
        {
          tool: 'get_step_reference',
          blockers: [{ reason: 'missing_service_account_capabilities', missingCapabilities: ['steps.read'] }],
        },
        {
          tool: 'create_flow_draft',
          blockers: [
            { reason: 'missing_service_account_capabilities', missingCapabilities: ['flows.manage'] },
            { reason: 'read_only_policy' },
            { reason: 'toolset_policy', toolToolsets: ['authoring'], activeToolsets: ['read', 'feedback'] },
          ],
        },
        {
          tool: 'release_flow',
          blockers: [
            { reason: 'missing_service_account_capabilities', missingCapabilities: ['flows.manage'] },
            { reason: 'read_only_policy' },
            { reason: 'toolset_policy', toolToolsets: ['release'], activeToolsets: ['read', 'feedback'] },
          ],
        },
      ],
    });
    expect(out.limits).toMatchObject({
      listConnectionsMaxLimit: 100,
      checkConnectionsMaxIds: 20,
      maxRequestBodyBytes: 1_048_576,
      maxToolResultBytes: 81_920,
    });
    expect(out.docs.map((d: { uri: string }) => d.uri)).toEqual([
      'flowgate://mcp-docs/overview',
      'flowgate://mcp-docs/client-setup',
      'flowgate://mcp-docs/flow-authoring',
      'flowgate://mcp-docs/tool-safety',
    ]);
    expect(out.protocol).toEqual({
      version: '2025-06-18',
      supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
    });
    expect(out.server).toEqual({
      name: 'flowgate-workspace-mcp',
      title: 'Flowgate workspace MCP',
      version: '0.1.0',
    });
    expect(ctx.audits[0]?.resourceUris).toEqual(['flowgate://workspaces/ws-acme/mcp']);
  });

  it('takes no arguments', async () => {
    const { body } = await callTool(env.ctx(), 'get_workspace_context', { verbose: true });
    expect(body.result.structuredContent.error.code).toBe('invalid_arguments');
  });
});

describe('list_connections', () => {
  let five: { ws: string; ids: string[] };
  beforeAll(async () => {
    five = await workspaceWithConnections(5);
  });

  it('pages with signed opaque cursors that carry the position', async () => {
    const ctx = env.ctx({ workspaceId: five.ws });
    const first = await callTool(ctx, 'list_connections', { limit: 2 });
    const page1 = first.body.result.structuredContent;
    expect(listConnectionsTool.output.parse(page1)).toEqual(page1);
    expect(page1.connections.map((c: { id: string }) => c.id)).toEqual(five.ids.slice(0, 2));
    expect(page1.nextCursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(page1.nextCursor).not.toContain(five.ids[1]);
    const second = await callTool(ctx, 'list_connections', { limit: 2, cursor: page1.nextCursor });
    expect(second.body.result.structuredContent.connections.map((c: { id: string }) => c.id)).toEqual(
      five.ids.slice(2, 4),
    );
    const third = await callTool(ctx, 'list_connections', {
      limit: 2,
      cursor: second.body.result.structuredContent.nextCursor,
    });
    expect(third.body.result.structuredContent).toMatchObject({ nextCursor: null });
    expect(third.body.result.structuredContent.connections.map((c: { id: string }) => c.id)).toEqual(
      five.ids.slice(4),
    );
  });

  it('uses the default page size', async () => {
    const { ws, ids } = await workspaceWithConnections(26);
    const ctx = env.ctx({ workspaceId: ws });
    const first = (await callTool(ctx, 'list_connections', {})).body.result.structuredContent;
    expect(first.connections.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 25));
    const rest = (await callTool(ctx, 'list_connections', { cursor: first.nextCursor })).body.result
      .structuredContent;
    expect(rest).toMatchObject({ connections: [{ id: ids[25] }], nextCursor: null });
  });

  it('refuses forged, tampered and foreign cursors as invalid arguments', async () => {
    const ctx = env.ctx({ workspaceId: five.ws });
    const { body } = await callTool(ctx, 'list_connections', { limit: 1 });
    const cursor: string = body.result.structuredContent.nextCursor;
    const [payload, mac] = cursor.split('.') as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ k: 'tool:list_connections', s: five.ws, p: five.ids[3] })).toString('base64url')}.${mac}`;
    const otherWorkspace = env.ctx({ workspaceId: 'ws-other' });
    const otherKey = env.ctx({ workspaceId: five.ws, cursorKey: 'another-deployment-key' });
    for (const [c, bad] of [
      [ctx, 'not-a-cursor'],
      [ctx, forged],
      [ctx, `${payload}.${tamperedSeal(mac)}`],
      [otherWorkspace, cursor],
      [otherKey, cursor],
    ] as const) {
      const res = await callTool(c, 'list_connections', { cursor: bad });
      expect(res.body.result.structuredContent).toEqual({
        error: {
          code: 'invalid_arguments',
          message:
            'Invalid arguments for list_connections: cursor: Invalid or foreign cursor; omit it to start from the first page',
        },
        details: {
          issues: [
            { path: 'cursor', message: 'Invalid or foreign cursor; omit it to start from the first page' },
          ],
        },
      });
    }
    // A list_connections cursor is not a check_connections cursor.
    const cross = await callTool(ctx, 'check_connections', { cursor });
    expect(cross.body.result.structuredContent.error.code).toBe('invalid_arguments');
  });

  it('strips credentials from base URLs, redacts health messages and never returns the secret', async () => {
    const { ws, ids } = await workspaceWithConnections(1, () => ({
      baseUrl: 'https://user:hunter2@api.example.test/v1?x=1',
      secret: TEST_CONNECTION_SECRET,
      health: {
        ok: false,
        checkedAt: '2026-11-20T00:00:00.000Z',
        status: 401,
        message: 'rejected Bearer abcdefghijklmnopqrstu',
      },
    }));
    const { body } = await callTool(env.ctx({ workspaceId: ws }), 'list_connections', {});
    const c = body.result.structuredContent.connections[0];
    // Only scheme, host, port and path are shown: the query may carry a credential under any name.
    expect(c.baseUrl).toBe('https://api.example.test/v1');
    expect(c.health).toEqual({
      ok: false,
      checkedAt: '2026-11-20T00:00:00.000Z',
      httpStatus: 401,
      message: `rejected ${REDACTED}`,
    });
    expect(c.configKeys).toEqual(['header_name']);
    const text = JSON.stringify(body);
    const stored = await repos.getConnection(env.db, ws, ids[0] as string);
    for (const secret of ['hunter2', TEST_CONNECTION_SECRET, stored?.secretCiphertext, 'X-Crm-Key']) {
      expect(text).not.toContain(secret);
    }
  });
});

describe('list_connections and check_connections on an mcp-server', () => {
  const health = {
    ok: true,
    checkedAt: TEST_NOW,
    mcp: {
      protocolVersion: '2025-06-18',
      serverName: 'remote-tools',
      serverVersion: '2.0.1',
      toolCount: 2,
      tools: ['search_tickets', 'fetch_ticket'],
    },
  };

  it('lists the protocol, server and tool count, never the tool names', async () => {
    const { ws } = await workspaceWithConnections(1, () => ({
      type: 'mcp-server',
      config: { 'header:X-Tenant': 'acme-tenant' },
      health,
    }));
    const { body } = await callTool(env.ctx({ workspaceId: ws }), 'list_connections', {});
    const c = body.result.structuredContent.connections[0];
    expect(c.type).toBe('mcp-server');
    expect(c.mcp).toBeUndefined();
    expect(c.health.message).toBe('MCP 2025-06-18, server remote-tools, 2 tools');
    expect(c.configKeys).toEqual(['header:X-Tenant']);
    expect(JSON.stringify(body)).not.toMatch(/search_tickets|acme-tenant|2\.0\.1/);
  });

  it('checks through the workspace port and reports what the server said', async () => {
    const { ws, ids } = await workspaceWithConnections(1, () => ({ type: 'mcp-server' }));
    const workspace = openWorkspace(
      {
        ...env.deps,
        mcpCheck: async () => ({
          protocolVersion: '2025-11-25',
          serverName: 'remote',
          tools: ['a', 'b', 'c'],
        }),
      },
      { workspaceId: ws, actor: { kind: 'service_account', id: 'sa_agent' } },
    );
    const { body } = await callTool(
      env.ctx({ workspaceId: ws, workspace: () => workspace }),
      'check_connections',
      {},
    );
    const out = body.result.structuredContent;
    expect(checkConnectionsTool.output.parse(out)).toEqual(out);
    expect(out.checks).toEqual([
      {
        connectionId: ids[0],
        name: 'crm-1',
        type: 'mcp-server',
        ok: true,
        status: 'healthy',
        httpStatus: null,
        latencyMs: expect.any(Number),
        message: 'MCP 2025-11-25, server remote, 3 tools',
        checkedAt: TEST_NOW,
      },
    ]);
  });
});

describe('check_connections', () => {
  it('checks selected ids once each, reports unknown ids, summarises and stores the health', async () => {
    const { ws, ids } = await workspaceWithConnections(2, (i) => ({
      baseUrl: `${upstream}/v1`,
      disabled: i === 2,
    }));
    const [one, two] = ids as [string, string];
    requests.length = 0;
    const { body } = await callTool(env.ctx({ workspaceId: ws }), 'check_connections', {
      connection_ids: [one, two, 'conn_999', one],
    });
    const out = body.result.structuredContent;
    expect(checkConnectionsTool.output.parse(out)).toEqual(out);
    expect(
      out.checks.map((c: { connectionId: string; status: string }) => [c.connectionId, c.status]),
    ).toEqual([
      [one, 'healthy'],
      [two, 'disabled'],
    ]);
    expect(out.checks[0]).toMatchObject({ ok: true, httpStatus: 200, checkedAt: TEST_NOW });
    expect(out.unknownConnectionIds).toEqual(['conn_999']);
    expect(out.summary).toEqual({ checked: 2, healthy: 1, unhealthy: 0, disabled: 1 });
    expect(out.nextCursor).toBeNull();
    // The duplicate id was checked once, the disabled connection not at all.
    expect(requests).toEqual(['/v1']);
    expect((await repos.getConnection(env.db, ws, one))?.health).toEqual({
      ok: true,
      checkedAt: TEST_NOW,
      status: 200,
    });
    expect((await repos.getConnection(env.db, ws, two))?.health).toBeNull();
  });

  it('pages through all connections when no ids are given', async () => {
    const { ws, ids } = await workspaceWithConnections(3, () => ({ baseUrl: `${upstream}/v1` }));
    const ctx = env.ctx({ workspaceId: ws });
    const first = await callTool(ctx, 'check_connections', { limit: 2 });
    expect(
      first.body.result.structuredContent.checks.map((c: { connectionId: string }) => c.connectionId),
    ).toEqual(ids.slice(0, 2));
    const next = await callTool(ctx, 'check_connections', {
      limit: 2,
      cursor: first.body.result.structuredContent.nextCursor,
    });
    expect(
      next.body.result.structuredContent.checks.map((c: { connectionId: string }) => c.connectionId),
    ).toEqual([ids[2]]);
    expect(next.body.result.structuredContent.nextCursor).toBeNull();
  });

  it('bounds its arguments', async () => {
    const tooMany = Array.from({ length: 21 }, (_, i) => `conn_${i}`);
    for (const args of [
      { connection_ids: tooMany },
      { connection_ids: [] },
      { limit: 21 },
      { connection_ids: [connectionId('ws-acme', 1)], cursor: 'abc' },
    ]) {
      const { body } = await callTool(env.ctx(), 'check_connections', args);
      expect(body.result.structuredContent.error.code).toBe('invalid_arguments');
    }
  });
});

describe('send_feedback', () => {
  it('redacts before the workspace stores it and says so', async () => {
    const ctx = env.ctx();
    const { body } = await callTool(ctx, 'send_feedback', {
      summary: '  Setup failed  ',
      details: 'Used key fgk_k1_abcdefghijklmnopqrstuvwxyz012345 and it was refused',
      area: 'setup',
      resource_uri: 'flowgate://mcp-docs/client-setup',
      run_id: 'run_1',
      flow_slug: 'enrich-company',
      context: { client: 'cursor', api_key: 'sk-live-1234567890abcdefgh', attempts: 2 },
    });
    const out = sendFeedbackTool.output.parse(body.result.structuredContent);
    expect(out).toEqual({
      feedbackId: expect.stringMatching(/^fb_[A-Za-z0-9]{16}$/),
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      redacted: true,
    });
    const stored = (await storedFeedback(env.db, 'ws-acme')).find((f) => f.id === out.feedbackId);
    expect(stored).toMatchObject({
      principalType: 'service_account',
      principalId: 'sa_agent',
      summary: 'Setup failed',
      details: `Used key ${REDACTED} and it was refused`,
      area: 'setup',
      resourceUri: 'flowgate://mcp-docs/client-setup',
      runId: 'run_1',
      flowSlug: 'enrich-company',
      context: { client: 'cursor', api_key: REDACTED, attempts: 2 },
    });
    expect(stored?.createdAt.toISOString()).toBe(out.receivedAt);
    expect(JSON.stringify(stored)).not.toMatch(/abcdefghijklmnopqrstuvwxyz012345|sk-live/);
    expect(ctx.audits[0]).toMatchObject({
      runId: 'run_1',
      resourceUris: ['flowgate://mcp-docs/client-setup'],
    });
  });

  it('validates area, sizes and the flow slug', async () => {
    const base = { summary: 's', details: 'd', area: 'docs' };
    const context21 = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i]));
    for (const args of [
      { ...base, area: 'billing' },
      { ...base, summary: 'x'.repeat(201) },
      { ...base, summary: '   ' },
      { ...base, details: 'x'.repeat(4001) },
      { ...base, flow_slug: '../etc' },
      { ...base, context: context21 },
      { ...base, context: { nested: { a: 1 } } },
      { summary: 's', area: 'docs' },
    ]) {
      const { body } = await callTool(env.ctx(), 'send_feedback', args);
      expect(body.result.structuredContent.error.code).toBe('invalid_arguments');
    }
  });

  it('stays callable under X-MCP-Readonly and workspace read-only mode', async () => {
    const ctx = env.ctx({
      narrowing: narrow({ readOnly: '1' }),
      workspacePolicy: { readOnly: true, disabledTools: [] },
    });
    const { body } = await callTool(ctx, 'send_feedback', { summary: 's', details: 'd', area: 'mcp' });
    expect(body.result.isError).toBeUndefined();
    const stored = await storedFeedback(env.db, 'ws-acme');
    expect(stored.map((f) => f.id)).toContain(body.result.structuredContent.feedbackId);
  });
});
