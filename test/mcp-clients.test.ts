import { schema } from '@flowgate/db';
import {
  AVAILABLE_PROMPTS,
  DIRECT_RESOURCES,
  LATEST_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
  PROMPTS,
  RESOURCE_TEMPLATES,
  TOOL_NAMES,
} from '@flowgate/workspace-mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_CAPABILITIES,
  ALL_TOOLS,
  allowedBy,
  inCatalogOrder,
  inToolsets,
  missingFor,
  readOnlyKept,
  without,
} from './support/catalog.js';
import {
  CLIENT_FLAVOURS,
  type ConnectOptions,
  connectClient,
  type McpSession,
  protocolErrorCode,
} from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';

/**
 * Both MCP SDK generations against the real gateway on loopback: connect with a bearer key, list, call, read
 * resources, get prompts, and see narrowing headers and blockers exactly as docs/mcp-surface.md describes them.
 */

const WS = 'ws-clients';
const FEEDBACK_CAPS = ['feedback.send'];
let gw: TestGateway;
let full: ServiceAccountKey;
let feedbackOnly: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS, 'Clients Inc');
  full = await gw.mintKey(WS, ['workspace.full'], 'full-agent');
  feedbackOnly = await gw.mintKey(WS, ['feedback.send'], 'feedback-agent');
});

afterAll(async () => {
  await gw?.close();
});

async function expectProtocolError(promise: Promise<unknown>, code: number): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the call should have thrown').not.toBeNull();
  expect(protocolErrorCode(err)).toBe(code);
}

describe.each(CLIENT_FLAVOURS)('%s client', (flavour) => {
  const sessions: McpSession[] = [];
  const open = async (options: ConnectOptions) => {
    const s = await connectClient(flavour, gw.mcpUrl(WS), options);
    sessions.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.close()));
  });

  it('connects with a bearer key and negotiates the latest version without listChanged or subscribe', async () => {
    const s = await open({ token: full.apiKey });
    expect(s.protocolVersion()).toBe(LATEST_PROTOCOL_VERSION);
    // This key can run flows, so 2025-11-25 also offers Tasks (runs as tasks; mcp-tasks.test.ts).
    expect(s.serverCapabilities()).toEqual({
      tools: {},
      resources: {},
      prompts: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
  });

  it('lists exactly the tools the key allows', async () => {
    const s = await open({ token: full.apiKey });
    const names = (await s.listTools()).map((t) => t.name);
    expect(names).toEqual([...TOOL_NAMES]);
    expect(names).toEqual(
      expect.arrayContaining([
        'get_workspace_context',
        'list_connections',
        'check_connections',
        'send_feedback',
      ]),
    );
    const narrow = await open({ token: feedbackOnly.apiKey });
    const narrowNames = (await narrow.listTools()).map((t) => t.name);
    expect(narrowNames).toEqual(allowedBy(FEEDBACK_CAPS));
    expect(narrowNames).toEqual(expect.arrayContaining(['get_workspace_context', 'send_feedback']));
    expect(narrowNames).not.toContain('list_connections');
  });

  it('get_workspace_context describes the workspace, principal, capabilities and visible tools', async () => {
    const s = await open({ token: full.apiKey });
    const result = await s.callTool('get_workspace_context', {});
    expect(result.isError).toBeFalsy();
    const ctx = result.structuredContent as Record<string, unknown>;
    expect(ctx.workspace).toEqual({ id: WS, name: 'Clients Inc' });
    expect(ctx.principal).toEqual({ kind: 'service_account', id: full.serviceAccountId, name: 'full-agent' });
    expect([...(ctx.capabilities as string[])].sort()).toEqual([...ALL_CAPABILITIES].sort());
    expect(ctx.tools).toEqual({ visible: [...TOOL_NAMES], hidden: [] });
    expect(ctx.protocol).toMatchObject({ version: LATEST_PROTOCOL_VERSION });
    expect(ctx.narrowing).toEqual({ toolsets: null, tools: null, excludeTools: [], readOnly: false });
    expect(ctx.workspacePolicy).toEqual({ readOnly: false, disabledTools: [] });
    expect((ctx.server as Record<string, unknown>).name).toBe('flowgate-workspace-mcp');
    // A client that reads only content gets the whole answer too: the text block is its compact JSON, even far
    // above the 2 KB where it once became a summary.
    expect(JSON.stringify(ctx).length).toBeGreaterThan(2048);
    expect(result.content[0]).toEqual({ type: 'text', text: JSON.stringify(ctx) });

    const limited = await open({ token: feedbackOnly.apiKey });
    const lctx = (await limited.callTool('get_workspace_context', {})).structuredContent as Record<
      string,
      unknown
    >;
    expect(lctx.capabilities).toEqual(['feedback.send']);
    const visible = allowedBy(FEEDBACK_CAPS);
    expect(lctx.tools).toEqual({
      visible,
      hidden: without(ALL_TOOLS, ...visible).map((tool) => ({
        tool,
        blockers: [
          {
            reason: 'missing_service_account_capabilities',
            missingCapabilities: missingFor(tool, FEEDBACK_CAPS),
          },
        ],
      })),
    });
    expect((lctx.tools as { hidden: Array<{ tool: string }> }).hidden.map((h) => h.tool)).toContain(
      'list_connections',
    );
  });

  it('send_feedback stores a row in the workspace', async () => {
    const s = await open({ token: feedbackOnly.apiKey });
    const summary = `docs unclear (${flavour})`;
    const result = await s.callTool('send_feedback', {
      summary,
      details: 'The overview does not say how to narrow toolsets.',
      area: 'docs',
      resource_uri: 'flowgate://mcp-docs/overview',
      context: { client: flavour, attempt: 2 },
    });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as { feedbackId: string; receivedAt: string; redacted: boolean };
    expect(out.feedbackId).toMatch(/^fb/);
    expect(out.redacted).toBe(false);
    expect(Number.isNaN(Date.parse(out.receivedAt))).toBe(false);

    const rows = await gw.db.db.select().from(schema.feedback);
    const row = rows.find((r) => r.id === out.feedbackId);
    expect(row).toMatchObject({
      workspaceId: WS,
      principalType: 'service_account',
      principalId: feedbackOnly.serviceAccountId,
      area: 'docs',
      summary,
      details: 'The overview does not say how to narrow toolsets.',
      resourceUri: 'flowgate://mcp-docs/overview',
      context: { client: flavour, attempt: 2 },
    });
  });

  it('lists and reads resources and templates', async () => {
    const s = await open({ token: feedbackOnly.apiKey });
    const resources = await s.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      DIRECT_RESOURCES.filter((r) => r.capabilities.every((c) => FEEDBACK_CAPS.includes(c))).map((r) =>
        r.uriPattern.replace('{workspace_id}', WS),
      ),
    );
    expect(resources.map((r) => r.uri)).toContain('flowgate://mcp-docs/overview');
    const overview = resources.find((r) => r.uri === 'flowgate://mcp-docs/overview');
    expect(overview?.mimeType).toBe('text/markdown');
    expect(overview?.annotations).toMatchObject({
      audience: expect.any(Array),
      priority: expect.any(Number),
    });

    const contents = await s.readResource('flowgate://mcp-docs/overview');
    expect(contents).toHaveLength(1);
    expect(contents[0]?.uri).toBe('flowgate://mcp-docs/overview');
    expect(contents[0]?.mimeType).toBe('text/markdown');
    expect(contents[0]?.text).toMatch(/^# /m);
    expect(contents[0]?.text).toContain('get_workspace_context');

    const ctx = await s.readResource(`flowgate://workspaces/${WS}/mcp`);
    expect(ctx[0]?.mimeType).toBe('application/json');
    expect(JSON.parse(ctx[0]?.text ?? '{}')).toMatchObject({ workspace: { id: WS } });

    const templates = await s.listResourceTemplates();
    expect(templates.map((t) => t.uriTemplate)).toEqual(
      RESOURCE_TEMPLATES.filter((t) => t.capabilities.every((c) => FEEDBACK_CAPS.includes(c))).map(
        (t) => t.uriTemplate,
      ),
    );
    expect(templates.map((t) => t.uriTemplate)).toContain('flowgate://mcp-docs/{doc_id}');
    const viaTemplate = await s.readResource('flowgate://mcp-docs/tool-safety');
    expect(viaTemplate[0]?.text).toMatch(/^# /m);

    await expectProtocolError(s.readResource('flowgate://mcp-docs/no-such-doc'), -32602);
  });

  it('lists the prompts the package makes available and gets them; others are unknown', async () => {
    const s = await open({ token: full.apiKey });
    const prompts = await s.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(AVAILABLE_PROMPTS.map((p) => p.name));
    for (const prompt of AVAILABLE_PROMPTS) {
      const args = Object.fromEntries(
        prompt.arguments.filter((a) => a.required).map((a) => [a.name, 'example']),
      );
      const got = await s.getPrompt(prompt.name, args);
      expect(got.messages.length).toBeGreaterThan(0);
      expect(got.messages[0]?.role).toBe('user');
      expect(got.messages[0]?.content.type).toBe('text');
    }
    // Prompts whose tools are not served yet are not listed, and fetching one is an unknown prompt.
    const unavailable = PROMPTS.filter((p) => !AVAILABLE_PROMPTS.includes(p));
    for (const prompt of unavailable) {
      const args = Object.fromEntries(prompt.arguments.map((a) => [a.name, 'example']));
      await expectProtocolError(s.getPrompt(prompt.name, args), -32602);
    }
    expect(AVAILABLE_PROMPTS.length + unavailable.length).toBe(PROMPTS.length);
    await expectProtocolError(s.getPrompt('no_such_prompt', {}), -32602);
  });

  it('a hidden tool call is an isError result with every blocker', async () => {
    const s = await open({ token: feedbackOnly.apiKey, headers: { 'X-MCP-Toolsets': 'feedback' } });
    const result = await s.callTool('check_connections', {});
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: { code: 'tool_blocked', message: expect.stringContaining('check_connections is not available') },
      details: {
        tool: 'check_connections',
        blockers: [
          { reason: 'missing_service_account_capabilities', missingCapabilities: ['connections.read'] },
          { reason: 'toolset_policy', toolToolsets: ['read', 'setup'], activeToolsets: ['feedback'] },
        ],
      },
    });
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('connections.read') }]);
  });

  it('an unknown tool surfaces JSON-RPC -32602', async () => {
    const s = await open({ token: full.apiKey });
    await expectProtocolError(s.callTool('no_such_tool', {}), -32602);
  });

  describe('narrowing headers (docs/mcp-surface.md, "Who sees which tool")', () => {
    const listed = async (headers: Record<string, string>, token = full.apiKey) =>
      (await (await open({ token, headers })).listTools()).map((t) => t.name);

    it('X-MCP-Toolsets keeps tools in any listed toolset', async () => {
      expect(await listed({ 'X-MCP-Toolsets': 'feedback' })).toEqual(inToolsets('feedback'));
      expect(inToolsets('feedback')).toEqual(['send_feedback']);
      expect(await listed({ 'X-MCP-Toolsets': 'context' })).toEqual(inToolsets('context'));
      expect(inToolsets('context')).toContain('get_workspace_context');
      expect(await listed({ 'X-MCP-Toolsets': ' setup , feedback ' })).toEqual(
        inToolsets('setup', 'feedback'),
      );
      expect(inToolsets('setup', 'feedback')).toEqual(
        expect.arrayContaining(['list_connections', 'check_connections', 'send_feedback']),
      );
      expect(await listed({ 'X-MCP-Toolsets': 'all' })).toEqual([...TOOL_NAMES]);
    });

    it('X-MCP-Tools alone keeps only those; with X-MCP-Toolsets it adds them', async () => {
      expect(await listed({ 'X-MCP-Tools': 'check_connections' })).toEqual(['check_connections']);
      expect(await listed({ 'X-MCP-Toolsets': 'context', 'X-MCP-Tools': 'send_feedback' })).toEqual(
        inCatalogOrder([...inToolsets('context'), 'send_feedback']),
      );
    });

    it('X-MCP-Exclude-Tools hides and wins over everything', async () => {
      expect(await listed({ 'X-MCP-Exclude-Tools': 'list_connections,send_feedback' })).toEqual(
        without(ALL_TOOLS, 'list_connections', 'send_feedback'),
      );
      expect(
        await listed({ 'X-MCP-Tools': 'list_connections', 'X-MCP-Exclude-Tools': 'list_connections' }),
      ).toEqual([]);
    });
    it('X-MCP-Readonly hides tools that change state and keeps send_feedback', async () => {
      const kept = await listed({ 'X-MCP-Readonly': 'true' });
      expect(kept).toEqual(readOnlyKept());
      expect(kept).toEqual(expect.arrayContaining(['get_workspace_context', 'send_feedback']));
      const s = await open({ token: full.apiKey, headers: { 'X-MCP-Readonly': 'yes' } });
      const ctx = (await s.callTool('get_workspace_context', {})).structuredContent as Record<
        string,
        unknown
      >;
      expect(ctx.narrowing).toEqual({ toolsets: null, tools: null, excludeTools: [], readOnly: true });
    });

    it('headers never widen what the capabilities allow', async () => {
      expect(await listed({ 'X-MCP-Toolsets': 'all' }, feedbackOnly.apiKey)).toEqual(
        allowedBy(FEEDBACK_CAPS),
      );
      expect(await listed({ 'X-MCP-Tools': 'list_connections' }, feedbackOnly.apiKey)).toEqual([]);
    });

    it('a tool hidden by headers is blocked at call time with the header reasons', async () => {
      const s = await open({ token: full.apiKey, headers: { 'X-MCP-Exclude-Tools': 'list_connections' } });
      const result = await s.callTool('list_connections', {});
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        error: { code: 'tool_blocked' },
        details: { tool: 'list_connections', blockers: [{ reason: 'exclude_tools_policy' }] },
      });
    });
  });
});

describe('sdk-v2 client with version negotiation', () => {
  it('probes server/discover, gets 2026-07-28 without initialize, and works', async () => {
    const s = await connectClient('sdk-v2', gw.mcpUrl(WS), { token: full.apiKey, autoNegotiation: true });
    try {
      expect(s.protocolVersion()).toBe(MODERN_PROTOCOL_VERSION);
      expect((await s.listTools()).map((t) => t.name)).toEqual([...TOOL_NAMES]);
    } finally {
      await s.close();
    }
  });
});
