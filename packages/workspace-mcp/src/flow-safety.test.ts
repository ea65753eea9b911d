/**
 * Metadata safety (spec 7.5, seed 004) across every model-facing path: flow-authored text never reaches the
 * model unless a trust decision applies, every descriptor says which decision applies, and search still
 * matches on the text it does not return.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORED_MARKERS, flowWorld } from './flow-fixtures.js';
import { callTool, makeCtx, rpc } from './test-support.js';

function untrustedWorld() {
  const w = flowWorld();
  for (const inst of w.store.installations) inst.trustMetadata = false;
  return { ...w, ctx: makeCtx({ services: w.services }) };
}

/** Every model-facing read of the hostile flows, as [label, request] pairs. */
const MODEL_FACING: Array<[string, string, Record<string, unknown>]> = [
  ['search_flows browse', 'tools/call', { name: 'search_flows', arguments: {} }],
  ['search_flows query', 'tools/call', { name: 'search_flows', arguments: { query: 'zebracorn' } }],
  ['search_flow_tools browse', 'tools/call', { name: 'search_flow_tools', arguments: {} }],
  ['search_flow_tools query', 'tools/call', { name: 'search_flow_tools', arguments: { query: 'ignore' } }],
  [
    'search_flow_tools exact',
    'tools/call',
    { name: 'search_flow_tools', arguments: { tool_name: 'partner_lookup' } },
  ],
  [
    'inspect own',
    'tools/call',
    { name: 'inspect_flow_tool', arguments: { flow_slug: 'enrich-company', tool_name: 'enrich_company' } },
  ],
  [
    'inspect own draft',
    'tools/call',
    {
      name: 'inspect_flow_tool',
      arguments: { flow_slug: 'enrich-company', tool_name: 'enrich_company', target: 'draft' },
    },
  ],
  [
    'inspect installed',
    'tools/call',
    {
      name: 'inspect_flow_tool',
      arguments: {
        flow_slug: 'partner-lookup',
        tool_name: 'partner_lookup',
        installation_id: 'inst_trusted',
      },
    },
  ],
  [
    'readiness own',
    'tools/call',
    { name: 'check_flow_readiness', arguments: { flow_slug: 'enrich-company' } },
  ],
  [
    'readiness installed',
    'tools/call',
    {
      name: 'check_flow_readiness',
      arguments: { flow_slug: 'partner-lookup', installation_id: 'inst_plain' },
    },
  ],
  ['flow resource', 'resources/read', { uri: 'flowgate://flows/enrich-company' }],
  [
    'installed flow resource',
    'resources/read',
    { uri: 'flowgate://flows/partner-lookup?installation_id=inst_plain' },
  ],
  ['tool resource', 'resources/read', { uri: 'flowgate://flows/enrich-company/mcp-tools/enrich_company' }],
  [
    'installed tool resource',
    'resources/read',
    { uri: 'flowgate://flows/partner-lookup/mcp-tools/partner_lookup?installation_id=inst_trusted' },
  ],
  ['tools/list', 'tools/list', {}],
  ['templates/list', 'resources/templates/list', {}],
  ['prompts/list', 'prompts/list', {}],
];

describe('untrusted flow-authored text', () => {
  it.each(MODEL_FACING)('never appears in %s', async (_label, method, params) => {
    const { ctx } = untrustedWorld();
    const { body } = await rpc(ctx, method, params);
    expect(body.error).toBeUndefined();
    expect(body.result.isError).toBeUndefined();
    const text = JSON.stringify(body);
    for (const marker of [...AUTHORED_MARKERS, 'COMMENT-MARKER']) expect(text, marker).not.toContain(marker);
  });

  it('every brokered descriptor says which trust decision applies', async () => {
    const { ctx } = untrustedWorld();
    const tools = (await callTool(ctx, 'search_flow_tools', {})).body.result.structuredContent.tools;
    const flows = (await callTool(ctx, 'search_flows', {})).body.result.structuredContent.flows;
    for (const entry of [...tools, ...flows]) {
      expect(entry.metadataSafety.flowAuthoredMetadata).toMatch(
        /^(omitted_untrusted|trusted_installer_opt_in|trusted_workspace_admin_opt_in)$/,
      );
      expect(entry.metadataSafety.note.length).toBeGreaterThan(40);
      if (entry.metadataSafety.flowAuthoredMetadata === 'omitted_untrusted')
        expect(entry.authored).toBeNull();
    }
  });

  it('still matches on the text it does not return', async () => {
    for (const word of ['zebracorn', 'TOOLDESC', 'previous instructions', 'title-marker']) {
      const { ctx } = untrustedWorld();
      const { body } = await callTool(ctx, 'search_flow_tools', { query: word });
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
    const { ctx } = untrustedWorld();
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
    const w = flowWorld();
    const ctx = makeCtx({ services: w.services });
    const { body } = await callTool(ctx, 'search_flow_tools', { tool_name: 'partner_lookup' });
    const [plain, trusted] = body.result.structuredContent.tools;
    expect(plain).toMatchObject({ installationId: 'inst_plain', authored: null });
    expect(plain.metadataSafety.flowAuthoredMetadata).toBe('omitted_untrusted');
    expect(trusted).toMatchObject({
      installationId: 'inst_trusted',
      metadataSafety: { flowAuthoredMetadata: 'trusted_installer_opt_in' },
      authored: { title: 'TITLE-MARKER' },
    });
  });

  it("show an own flow's text only after the workspace admin's opt-in", async () => {
    const w = flowWorld();
    const ctx = makeCtx({ services: w.services });
    const before = await callTool(ctx, 'inspect_flow_tool', {
      flow_slug: 'enrich-company',
      tool_name: 'enrich_company',
    });
    expect(JSON.stringify(before.body)).not.toContain('LABEL-MARKER');
    w.hostile.trustMetadata = true;
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
    const { ctx } = untrustedWorld();
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
      uri: 'flowgate://flows/partner-lookup?installation_id=inst_plain',
    });
    expect(JSON.parse(installed.body.result.contents[0].text).definitionUris).toEqual([
      'flowgate://flows/partner-lookup/definition/active?installation_id=inst_plain',
      'flowgate://flows/partner-lookup/versions/1/definition?installation_id=inst_plain',
    ]);
  });

  it('read a released version and a tool descriptor equal to inspect_flow_tool', async () => {
    const { ctx } = untrustedWorld();
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
    const uris = [
      'flowgate://flows/nope',
      'flowgate://flows/enrich-company/definition/bogus',
      'flowgate://flows/enrich-company/versions/0/definition',
      'flowgate://flows/enrich-company/versions/7/definition',
      'flowgate://flows/enrich-company/mcp-tools/nope',
      'flowgate://flows/..%2Fetc',
      'flowgate://flows/enrich-company?installation_id=inst_plain',
      'flowgate://flows/partner-lookup?other=1',
      'flowgate://flows/partner-secret-flow',
      'flowgate://flows/partner-lookup/definition/draft?installation_id=inst_plain',
    ];
    for (const uri of uris) {
      const { body } = await rpc(untrustedWorld().ctx, 'resources/read', { uri });
      expect(body.error, uri).toEqual({ code: -32602, message: 'Resource not found', data: { uri } });
    }
    const noInstallations = makeCtx({
      services: flowWorld().services,
      capabilities: new Set(['flows.read']),
    });
    const hidden = await rpc(noInstallations, 'resources/read', {
      uri: 'flowgate://flows/partner-lookup?installation_id=inst_plain',
    });
    expect(hidden.body.error?.code).toBe(-32602);
    const noFlows = makeCtx({ services: flowWorld().services, capabilities: new Set(['feedback.send']) });
    const gated = await rpc(noFlows, 'resources/read', { uri: 'flowgate://flows/enrich-company' });
    expect(gated.body.error?.code).toBe(-32602);
    expect(noFlows.services.calls).toEqual([]);
  });
});
