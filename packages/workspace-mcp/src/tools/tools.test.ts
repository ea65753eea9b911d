import { REDACTED } from '@flowgate/secrets';
import { describe, expect, it } from 'vitest';
import {
  checkConnectionsTool,
  getWorkspaceContextTool,
  listConnectionsTool,
  sendFeedbackTool,
} from '../catalog.js';
import { parseNarrowingHeaders } from '../narrowing.js';
import { callTool, connection, fakeServices, makeCtx } from '../test-support.js';

function narrow(headers: Parameters<typeof parseNarrowingHeaders>[0]) {
  const r = parseNarrowingHeaders(headers);
  if (!r.ok) throw new Error(r.error.message);
  return r.narrowing;
}

describe('get_workspace_context', () => {
  it('reports workspace, principal, capabilities, toolsets, groups, narrowing, hidden tools, limits and versions', async () => {
    const ctx = makeCtx({
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
    });
    expect(out.docs.map((d: { uri: string }) => d.uri)).toEqual([
      'flowgate://mcp-docs/overview',
      'flowgate://mcp-docs/client-setup',
      'flowgate://mcp-docs/flow-authoring',
      'flowgate://mcp-docs/tool-safety',
    ]);
    expect(out.protocol).toEqual({
      version: '2025-06-18',
      supportedVersions: ['2025-11-25', '2025-06-18', '2025-03-26'],
    });
    expect(out.server).toEqual({
      name: 'flowgate-workspace-mcp',
      title: 'Flowgate workspace MCP',
      version: '0.1.0',
    });
    expect(ctx.audits[0]?.resourceUris).toEqual(['flowgate://workspaces/ws-acme/mcp']);
  });

  it('takes no arguments', async () => {
    const { body } = await callTool(makeCtx(), 'get_workspace_context', { verbose: true });
    expect(body.result.structuredContent.error.code).toBe('invalid_arguments');
  });
});

describe('list_connections', () => {
  const many = Array.from({ length: 5 }, (_, i) => connection(i + 1));

  it('pages with signed opaque cursors and passes raw positions to the services', async () => {
    const ctx = makeCtx({ services: fakeServices(many) });
    const first = await callTool(ctx, 'list_connections', { limit: 2 });
    const page1 = first.body.result.structuredContent;
    expect(listConnectionsTool.output.parse(page1)).toEqual(page1);
    expect(page1.connections.map((c: { id: string }) => c.id)).toEqual(['conn_001', 'conn_002']);
    expect(page1.nextCursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(page1.nextCursor).not.toContain('conn_002');
    const second = await callTool(ctx, 'list_connections', { limit: 2, cursor: page1.nextCursor });
    expect(second.body.result.structuredContent.connections.map((c: { id: string }) => c.id)).toEqual([
      'conn_003',
      'conn_004',
    ]);
    const third = await callTool(ctx, 'list_connections', {
      limit: 2,
      cursor: second.body.result.structuredContent.nextCursor,
    });
    expect(third.body.result.structuredContent).toMatchObject({ nextCursor: null });
    expect(third.body.result.structuredContent.connections.map((c: { id: string }) => c.id)).toEqual([
      'conn_005',
    ]);
    expect(ctx.services.calls.map((c) => c.input)).toEqual([
      { limit: 2, after: null },
      { limit: 2, after: 'conn_002' },
      { limit: 2, after: 'conn_004' },
    ]);
  });

  it('uses the default page size', async () => {
    const ctx = makeCtx();
    await callTool(ctx, 'list_connections', {});
    expect(ctx.services.calls[0]?.input).toEqual({ limit: 25, after: null });
  });

  it('refuses forged, tampered and foreign cursors as invalid arguments', async () => {
    const ctx = makeCtx({ services: fakeServices(many) });
    const { body } = await callTool(ctx, 'list_connections', { limit: 1 });
    const cursor: string = body.result.structuredContent.nextCursor;
    const [payload, mac] = cursor.split('.') as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ k: 'tool:list_connections', s: 'ws-acme', p: 'conn_004' })).toString('base64url')}.${mac}`;
    const otherWorkspace = makeCtx({ workspaceId: 'ws-other', services: fakeServices(many) });
    const otherKey = makeCtx({ cursorKey: 'another-deployment-key', services: fakeServices(many) });
    for (const [c, bad] of [
      [ctx, 'not-a-cursor'],
      [ctx, forged],
      [ctx, `${payload}.${mac.slice(0, -2)}AA`],
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

  it('strips credentials from base URLs and redacts health messages', async () => {
    const ctx = makeCtx({
      services: fakeServices([
        connection(1, {
          baseUrl: 'https://user:hunter2@api.example.test/v1?x=1',
          health: {
            ok: false,
            checkedAt: '2026-11-20T00:00:00.000Z',
            httpStatus: 401,
            message: 'rejected Bearer abcdefghijklmnopqrstu',
          },
        }),
      ]),
    });
    const { body } = await callTool(ctx, 'list_connections', {});
    const c = body.result.structuredContent.connections[0];
    expect(c.baseUrl).toBe('https://api.example.test/v1?x=1');
    expect(c.health.message).toBe(`rejected ${REDACTED}`);
    expect(JSON.stringify(body)).not.toContain('hunter2');
  });
});

describe('check_connections', () => {
  it('checks selected ids, reports unknown ids and summarises', async () => {
    const ctx = makeCtx({ services: fakeServices([connection(1), connection(2, { status: 'disabled' })]) });
    const { body } = await callTool(ctx, 'check_connections', {
      connection_ids: ['conn_001', 'conn_002', 'conn_999', 'conn_001'],
    });
    const out = body.result.structuredContent;
    expect(checkConnectionsTool.output.parse(out)).toEqual(out);
    expect(
      out.checks.map((c: { connectionId: string; status: string }) => [c.connectionId, c.status]),
    ).toEqual([
      ['conn_001', 'healthy'],
      ['conn_002', 'disabled'],
    ]);
    expect(out.unknownConnectionIds).toEqual(['conn_999']);
    expect(out.summary).toEqual({ checked: 2, healthy: 1, unhealthy: 0, disabled: 1 });
    expect(out.nextCursor).toBeNull();
    expect(ctx.services.calls[0]?.input).toEqual({
      connectionIds: ['conn_001', 'conn_002', 'conn_999'],
      limit: 10,
      after: null,
    });
  });

  it('pages through all connections when no ids are given', async () => {
    const ctx = makeCtx({ services: fakeServices([connection(1), connection(2), connection(3)]) });
    const first = await callTool(ctx, 'check_connections', { limit: 2 });
    expect(first.body.result.structuredContent.checks).toHaveLength(2);
    const next = await callTool(ctx, 'check_connections', {
      limit: 2,
      cursor: first.body.result.structuredContent.nextCursor,
    });
    expect(
      next.body.result.structuredContent.checks.map((c: { connectionId: string }) => c.connectionId),
    ).toEqual(['conn_003']);
  });

  it('bounds its arguments', async () => {
    const tooMany = Array.from({ length: 21 }, (_, i) => `conn_${i}`);
    for (const args of [
      { connection_ids: tooMany },
      { connection_ids: [] },
      { limit: 21 },
      { connection_ids: ['conn_001'], cursor: 'abc' },
    ]) {
      const { body } = await callTool(makeCtx(), 'check_connections', args);
      expect(body.result.structuredContent.error.code).toBe('invalid_arguments');
    }
  });
});

describe('send_feedback', () => {
  it('redacts before the services store it and says so', async () => {
    const ctx = makeCtx();
    const { body } = await callTool(ctx, 'send_feedback', {
      summary: '  Setup failed  ',
      details: 'Used key fgk_k1_abcdefghijklmnopqrstuvwxyz012345 and it was refused',
      area: 'setup',
      resource_uri: 'flowgate://mcp-docs/client-setup',
      run_id: 'run_1',
      flow_slug: 'enrich-company',
      context: { client: 'cursor', api_key: 'sk-live-1234567890abcdefgh', attempts: 2 },
    });
    expect(sendFeedbackTool.output.parse(body.result.structuredContent)).toEqual({
      feedbackId: 'fb_1',
      receivedAt: '2026-11-20T10:00:00.000Z',
      redacted: true,
    });
    expect(ctx.services.feedback).toEqual([
      {
        summary: 'Setup failed',
        details: `Used key ${REDACTED} and it was refused`,
        area: 'setup',
        resourceUri: 'flowgate://mcp-docs/client-setup',
        runId: 'run_1',
        flowSlug: 'enrich-company',
        context: { client: 'cursor', api_key: REDACTED, attempts: 2 },
      },
    ]);
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
      const { body } = await callTool(makeCtx(), 'send_feedback', args);
      expect(body.result.structuredContent.error.code).toBe('invalid_arguments');
    }
  });

  it('stays callable under X-MCP-Readonly and workspace read-only mode', async () => {
    const ctx = makeCtx({
      narrowing: narrow({ readOnly: '1' }),
      workspacePolicy: { readOnly: true, disabledTools: [] },
    });
    const { body } = await callTool(ctx, 'send_feedback', { summary: 's', details: 'd', area: 'mcp' });
    expect(body.result.isError).toBeUndefined();
  });
});
