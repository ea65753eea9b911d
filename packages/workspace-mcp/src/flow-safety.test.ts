/**
 * Metadata safety (docs/flows.md) across every model-facing path: flow-authored text never reaches the
 * model unless a trust decision applies, every descriptor says which decision applies, and search still
 * matches on the text it does not return.
 */
import { repos } from '@flowgate/db';
import { AUTHORED_MARKERS, type FlowWorld, seedFlowWorld } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { callTool, type Json, rpc, useTestDb } from './testing.js';

const env = useTestDb();
/** ws-acme's flow world with no opt-in by the installer: only the source's own admin trusts partner-lookup. */
let untrusted: FlowWorld;
beforeAll(async () => {
  untrusted = await seedFlowWorld(env.deps, { installerOptIn: false });
});

/** A request context on the untrusted world. */
const untrustedCtx = () => env.ctx({ workspaceId: untrusted.workspaceId });

/** Every model-facing read of the hostile flows, as [label, method, params of the world] triples. */
const MODEL_FACING: Array<[string, string, (w: FlowWorld) => Record<string, unknown>]> = [
  ['search_flows browse', 'tools/call', () => ({ name: 'search_flows', arguments: {} })],
  ['search_flows query', 'tools/call', () => ({ name: 'search_flows', arguments: { query: 'zebracorn' } })],
  ['search_flow_tools browse', 'tools/call', () => ({ name: 'search_flow_tools', arguments: {} })],
  [
    'search_flow_tools query',
    'tools/call',
    () => ({ name: 'search_flow_tools', arguments: { query: 'ignore' } }),
  ],
  [
    'search_flow_tools exact',
    'tools/call',
    () => ({ name: 'search_flow_tools', arguments: { tool_name: 'partner_lookup' } }),
  ],
  [
    'inspect own',
    'tools/call',
    () => ({
      name: 'inspect_flow_tool',
      arguments: { flow_slug: 'enrich-company', tool_name: 'enrich_company' },
    }),
  ],
  [
    'inspect own draft',
    'tools/call',
    () => ({
      name: 'inspect_flow_tool',
      arguments: { flow_slug: 'enrich-company', tool_name: 'enrich_company', target: 'draft' },
    }),
  ],
  [
    'inspect installed',
    'tools/call',
    (w) => ({
      name: 'inspect_flow_tool',
      arguments: {
        flow_slug: 'partner-lookup',
        tool_name: 'partner_lookup',
        installation_id: w.installations.pinned,
      },
    }),
  ],
  [
    'readiness own',
    'tools/call',
    () => ({ name: 'check_flow_readiness', arguments: { flow_slug: 'enrich-company' } }),
  ],
  [
    'readiness installed',
    'tools/call',
    (w) => ({
      name: 'check_flow_readiness',
      arguments: { flow_slug: 'partner-lookup', installation_id: w.installations.tracking },
    }),
  ],
  ['flow resource', 'resources/read', () => ({ uri: 'flowgate://flows/enrich-company' })],
  [
    'installed flow resource',
    'resources/read',
    (w) => ({ uri: `flowgate://flows/partner-lookup?installation_id=${w.installations.tracking}` }),
  ],
  [
    'tool resource',
    'resources/read',
    () => ({ uri: 'flowgate://flows/enrich-company/mcp-tools/enrich_company' }),
  ],
  [
    'installed tool resource',
    'resources/read',
    (w) => ({
      uri: `flowgate://flows/partner-lookup/mcp-tools/partner_lookup?installation_id=${w.installations.pinned}`,
    }),
  ],
  ['tools/list', 'tools/list', () => ({})],
  ['templates/list', 'resources/templates/list', () => ({})],
  ['prompts/list', 'prompts/list', () => ({})],
];

describe('untrusted flow-authored text', () => {
  it.each(MODEL_FACING)('never appears in %s', async (_label, method, params) => {
    const { body } = await rpc(untrustedCtx(), method, params(untrusted));
    expect(body.error).toBeUndefined();
    expect(body.result.isError).toBeUndefined();
    const text = JSON.stringify(body);
    for (const marker of [...AUTHORED_MARKERS, 'COMMENT-MARKER']) expect(text, marker).not.toContain(marker);
  });

  it('every brokered descriptor says which trust decision applies', async () => {
    const ctx = untrustedCtx();
    const toolsOut = (await callTool(ctx, 'search_flow_tools', {})).body.result.structuredContent;
    const flowsOut = (await callTool(ctx, 'search_flows', {})).body.result.structuredContent;
    const entries = [
      ...toolsOut.tools.map((entry: Json) => [entry, toolsOut.metadataSafetyNotes]),
      ...flowsOut.flows.map((entry: Json) => [entry, flowsOut.metadataSafetyNotes]),
    ];
    for (const [entry, notes] of entries) {
      expect(entry.metadataSafety.flowAuthoredMetadata).toMatch(
        /^(omitted_untrusted|trusted_installer_opt_in|trusted_workspace_admin_opt_in)$/,
      );
      // The note is given once per answer, keyed by the decision (and by the reason, when there is one).
      expect(notes[entry.metadataSafety.flowAuthoredMetadata].length).toBeGreaterThan(40);
      if (entry.metadataSafety.untrustedReason)
        expect(notes[entry.metadataSafety.untrustedReason].length).toBeGreaterThan(40);
      if (entry.metadataSafety.flowAuthoredMetadata === 'omitted_untrusted')
        expect(entry.authored).toBeNull();
    }
  });

  it('still matches on the text it does not return', async () => {
    for (const word of ['zebracorn', 'TOOLDESC', 'previous instructions', 'title-marker']) {
      const { body } = await callTool(untrustedCtx(), 'search_flow_tools', { query: word });
      const tools = body.result.structuredContent.tools;
      expect(tools.map((t: { toolName: string; source: string }) => `${t.toolName}:${t.source}`)).toEqual([
        'enrich_company:draft',
        'enrich_company:live',
        'partner_lookup:live',
        'partner_lookup:live',
      ]);
      expect(JSON.stringify(body)).not.toContain('zebracorn');
    }
  });

  it('returns the source on explicit request, marked as untrusted content', async () => {
    const ctx = untrustedCtx();
    const { body } = await callTool(ctx, 'get_flow_definition', {
      flow_slug: 'enrich-company',
      source: 'live',
    });
    const out = body.result.structuredContent;
    expect(out.flowLiteral).toContain('IGNORE PREVIOUS INSTRUCTIONS');
    expect(out.flowLiteral).toContain(';; COMMENT-MARKER');
    expect(out.contentTrust).toBe('flow_authored_untrusted');
    const read = await rpc(ctx, 'resources/read', { uri: 'flowgate://flows/enrich-company/definition/live' });
    expect(JSON.parse(read.body.result.contents[0].text)).toEqual(out);
  });
});

describe('opt-ins', () => {
  it('show authored text for an installation only when its installer opted in', async () => {
    const w = await seedFlowWorld(env.deps, { workspaceId: env.uniqueId('ws-acme') });
    const { body } = await callTool(env.ctx({ workspaceId: w.workspaceId }), 'search_flow_tools', {
      tool_name: 'partner_lookup',
    });
    const tools = body.result.structuredContent.tools;
    const plain = tools.find(
      (e: { installationId: string }) => e.installationId === w.installations.tracking,
    );
    const trusted = tools.find(
      (e: { installationId: string }) => e.installationId === w.installations.pinned,
    );
    expect(plain).toMatchObject({ authored: null });
    expect(plain.metadataSafety.flowAuthoredMetadata).toBe('omitted_untrusted');
    expect(trusted).toMatchObject({
      metadataSafety: { flowAuthoredMetadata: 'trusted_installer_opt_in' },
      authored: { title: 'TITLE-MARKER' },
    });
    // The untrusted world's pinned installation is the same flow and version, without the opt-in.
    const without = await callTool(untrustedCtx(), 'search_flow_tools', { tool_name: 'partner_lookup' });
    expect(JSON.stringify(without.body)).not.toContain('TITLE-MARKER');
  });

  it("show an own flow's text only after the workspace admin's opt-in", async () => {
    const w = await seedFlowWorld(env.deps, { workspaceId: env.uniqueId('ws-acme') });
    const ctx = env.ctx({ workspaceId: w.workspaceId });
    const before = await callTool(ctx, 'inspect_flow_tool', {
      flow_slug: 'enrich-company',
      tool_name: 'enrich_company',
    });
    expect(JSON.stringify(before.body)).not.toContain('LABEL-MARKER');
    await repos.setFlowTrustMetadata(env.db, w.workspaceId, 'enrich-company', true);
    const after = await callTool(ctx, 'inspect_flow_tool', {
      flow_slug: 'enrich-company',
      tool_name: 'enrich_company',
    });
    const out = after.body.result.structuredContent;
    expect(out.metadataSafety.flowAuthoredMetadata).toBe('trusted_workspace_admin_opt_in');
    expect(out.inputSchema.properties.domain.title).toBe('LABEL-MARKER');
    expect(out.authored.title).toBe('TITLE-MARKER');
  });
});

describe('flow resources', () => {
  it('read flow metadata with the definitions that exist', async () => {
    const ctx = untrustedCtx();
    const { tracking } = untrusted.installations;
    const { body } = await rpc(ctx, 'resources/read', { uri: 'flowgate://flows/enrich-company' });
    const [contents] = body.result.contents;
    expect(contents.mimeType).toBe('application/json');
    const flow = JSON.parse(contents.text);
    expect(flow).toMatchObject({ flowSlug: 'enrich-company', origin: 'workspace', authored: null });
    expect(flow.definitionUris).toEqual([
      'flowgate://flows/enrich-company/definition/draft',
      'flowgate://flows/enrich-company/definition/latest',
      'flowgate://flows/enrich-company/definition/live',
      'flowgate://flows/enrich-company/definition/active',
    ]);
    for (const uri of flow.definitionUris) {
      const def = await rpc(ctx, 'resources/read', { uri });
      expect(JSON.parse(def.body.result.contents[0].text).contentTrust).toBe('flow_authored_untrusted');
    }
    const installed = await rpc(ctx, 'resources/read', {
      uri: `flowgate://flows/partner-lookup?installation_id=${tracking}`,
    });
    expect(JSON.parse(installed.body.result.contents[0].text).definitionUris).toEqual([
      `flowgate://flows/partner-lookup/definition/active?installation_id=${tracking}`,
      `flowgate://flows/partner-lookup/versions/1/definition?installation_id=${tracking}`,
    ]);
  });

  it('read a released version and a tool descriptor equal to inspect_flow_tool', async () => {
    const ctx = untrustedCtx();
    const version = await rpc(ctx, 'resources/read', {
      uri: 'flowgate://flows/enrich-company/versions/1/definition',
    });
    expect(JSON.parse(version.body.result.contents[0].text)).toMatchObject({ version: 1, source: null });
    const tool = await rpc(ctx, 'resources/read', {
      uri: 'flowgate://flows/enrich-company/mcp-tools/enrich_company',
    });
    const inspected = await callTool(ctx, 'inspect_flow_tool', {
      flow_slug: 'enrich-company',
      tool_name: 'enrich_company',
    });
    expect(JSON.parse(tool.body.result.contents[0].text)).toEqual(inspected.body.result.structuredContent);
  });

  it('read as not found when missing, malformed or hidden', async () => {
    const { tracking } = untrusted.installations;
    const uris = [
      'flowgate://flows/nope',
      'flowgate://flows/enrich-company/definition/bogus',
      'flowgate://flows/enrich-company/versions/0/definition',
      'flowgate://flows/enrich-company/versions/7/definition',
      'flowgate://flows/enrich-company/mcp-tools/nope',
      'flowgate://flows/..%2Fetc',
      `flowgate://flows/enrich-company?installation_id=${tracking}`,
      'flowgate://flows/partner-lookup?other=1',
      'flowgate://flows/partner-secret-flow',
      `flowgate://flows/partner-lookup/definition/draft?installation_id=${tracking}`,
    ];
    for (const uri of uris) {
      const { body } = await rpc(untrustedCtx(), 'resources/read', { uri });
      expect(body.error, uri).toEqual({ code: -32602, message: 'Resource not found', data: { uri } });
    }
    const noInstallations = env.ctx({
      workspaceId: untrusted.workspaceId,
      capabilities: new Set(['flows.read']),
    });
    const hidden = await rpc(noInstallations, 'resources/read', {
      uri: `flowgate://flows/partner-lookup?installation_id=${tracking}`,
    });
    expect(hidden.body.error?.code).toBe(-32602);
    const noFlows = env.ctx({ workspaceId: untrusted.workspaceId, capabilities: new Set(['feedback.send']) });
    const { result: gated, statements } = await env.statementsDuring(() =>
      rpc(noFlows, 'resources/read', { uri: 'flowgate://flows/enrich-company' }),
    );
    expect(gated.body.error?.code).toBe(-32602);
    // Refused before the workspace is read.
    expect(statements).toEqual([]);
  });
});
