import type { Capability } from '@flowgate/auth';
import { seedFlow, seedWorkspace } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { CATALOG, TOOL_NAMES } from './catalog.js';
import { DOCS_LAST_MODIFIED, renderAllDocs, renderDoc } from './docs/index.js';
import { toolsetIcons } from './icons.js';
import { parseNarrowingHeaders } from './narrowing.js';
import { AVAILABLE_PROMPTS, isPromptAvailable, PROMPTS } from './prompts.js';
import { compileUriTemplate, RESOURCE_TEMPLATES } from './resource-catalog.js';
import { callTool, rpc, useTestDb } from './testing.js';

const env = useTestDb();
beforeAll(async () => {
  await seedWorkspace(env.db, 'ws-acme', 'Acme');
});

const DOC_URIS = [
  'flowgate://mcp-docs/overview',
  'flowgate://mcp-docs/client-setup',
  'flowgate://mcp-docs/flow-authoring',
  'flowgate://mcp-docs/tool-safety',
];

describe('resources/list', () => {
  it('lists the workspace context and the four docs with annotations', async () => {
    const { body } = await rpc(env.ctx(), 'resources/list');
    expect(body.result.nextCursor).toBeUndefined();
    const resources = body.result.resources;
    expect(resources.map((r: { uri: string }) => r.uri)).toEqual([
      'flowgate://workspaces/ws-acme/mcp',
      ...DOC_URIS,
    ]);
    expect(resources[0]).toEqual({
      uri: 'flowgate://workspaces/ws-acme/mcp',
      name: 'workspace-mcp-context',
      title: 'Workspace MCP context',
      description: expect.any(String),
      mimeType: 'application/json',
      annotations: {
        audience: ['assistant'],
        priority: 0.9,
        lastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
      icons: toolsetIcons('context'),
    });
    expect(resources[1]).toEqual({
      uri: 'flowgate://mcp-docs/overview',
      name: 'mcp-docs-overview',
      title: 'Flowgate MCP overview',
      description: expect.any(String),
      mimeType: 'text/markdown',
      annotations: { audience: ['assistant', 'user'], priority: 1, lastModified: DOCS_LAST_MODIFIED },
      icons: toolsetIcons('context'),
    });
  });

  it('omits lastModified for 2025-03-26 clients', async () => {
    const { body } = await rpc(env.ctx({ protocolVersionHeader: '2025-03-26' }), 'resources/list');
    for (const r of body.result.resources) expect(r.annotations.lastModified).toBeUndefined();
  });

  it('needs no capability for the docs', async () => {
    const { body } = await rpc(env.ctx({ capabilities: new Set<Capability>() }), 'resources/list');
    expect(body.result.resources).toHaveLength(5);
  });

  it('rejects an invalid cursor with -32602', async () => {
    const { body } = await rpc(env.ctx(), 'resources/list', { cursor: 'garbage' });
    expect(body.error).toEqual({ code: -32602, message: 'Invalid cursor' });
    const templates = await rpc(env.ctx(), 'resources/templates/list', { cursor: 42 });
    expect(templates.body.error?.code).toBe(-32602);
    const prompts = await rpc(env.ctx(), 'prompts/list', { cursor: '' });
    expect(prompts.body.error?.code).toBe(-32602);
  });
});

describe('resources/templates/list', () => {
  it('lists the docs template, the flow templates and the run templates for a caller with both reads', async () => {
    const { body } = await rpc(env.ctx(), 'resources/templates/list');
    expect(body.result.resourceTemplates[0]).toEqual({
      uriTemplate: 'flowgate://mcp-docs/{doc_id}',
      name: 'mcp-doc',
      title: 'Flowgate MCP doc',
      description: 'One curated MCP doc by id: overview, client-setup, flow-authoring, tool-safety.',
      mimeType: 'text/markdown',
      annotations: { audience: ['assistant', 'user'], priority: 0.6 },
      icons: toolsetIcons('context'),
    });
    expect(
      body.result.resourceTemplates.map((t: { uriTemplate: string; mimeType: string }) => [
        t.uriTemplate,
        t.mimeType,
      ]),
    ).toEqual([
      ['flowgate://mcp-docs/{doc_id}', 'text/markdown'],
      ['flowgate://flows/{slug}', 'application/json'],
      ['flowgate://flows/{slug}/definition/{source}', 'application/json'],
      ['flowgate://flows/{slug}/versions/{version}/definition', 'application/json'],
      ['flowgate://flows/{slug}/mcp-tools/{tool_name}', 'application/json'],
      ['flowgate://runs/{run_id}', 'application/json'],
      ['flowgate://runs/{run_id}/result', 'application/json'],
      ['flowgate://runs/{run_id}/events', 'application/json'],
    ]);
  });

  it('hides the flow templates without flows.read', async () => {
    const { body } = await rpc(
      env.ctx({ capabilities: new Set(['feedback.send']) }),
      'resources/templates/list',
    );
    expect(body.result.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate)).toEqual([
      'flowgate://mcp-docs/{doc_id}',
    ]);
  });

  it('accepts only the declared query parameters, once each', () => {
    const match = compileUriTemplate('flowgate://flows/{slug}', ['installation_id']);
    expect(match('flowgate://flows/a?installation_id=inst_1')).toEqual({
      slug: 'a',
      installation_id: 'inst_1',
    });
    expect(match('flowgate://flows/a')).toEqual({ slug: 'a' });
    expect(match('flowgate://flows/a?other=1')).toBeNull();
    expect(match('flowgate://flows/a?installation_id=1&installation_id=2')).toBeNull();
    expect(match('flowgate://flows/a?installation_id=1#x')).toBeNull();
    expect(compileUriTemplate('flowgate://mcp-docs/{doc_id}')('flowgate://mcp-docs/overview?x=1')).toBeNull();
  });

  it('matches variables that never span a slash', () => {
    const match = compileUriTemplate('flowgate://flows/{slug}/versions/{version}/definition');
    expect(match('flowgate://flows/enrich/versions/3/definition')).toEqual({ slug: 'enrich', version: '3' });
    expect(match('flowgate://flows/a/b/versions/3/definition')).toBeNull();
    expect(match('flowgate://flows/%E0%A4%A/versions/3/definition')).toBeNull();
    expect(compileUriTemplate('flowgate://mcp-docs/{doc_id}')('flowgate://mcp-docs/a.b')).toEqual({
      doc_id: 'a.b',
    });
  });
});

describe('resources/read', () => {
  it('reads every doc as markdown, by direct URI and through the template', async () => {
    const ctx = env.ctx();
    for (const uri of DOC_URIS) {
      const { body } = await rpc(ctx, 'resources/read', { uri });
      expect(body.result.contents).toEqual([
        { uri, mimeType: 'text/markdown', text: expect.stringMatching(/^# /) },
      ]);
    }
    expect(ctx.audits.map((a) => [a.kind, a.action, a.outcome, a.resourceUris])).toEqual(
      DOC_URIS.map((u) => ['resources/read', u, 'ok', [u]]),
    );
  });

  it('reads the workspace context as the same JSON get_workspace_context returns', async () => {
    const ctx = env.ctx();
    const { body } = await rpc(ctx, 'resources/read', { uri: 'flowgate://workspaces/ws-acme/mcp' });
    const [content] = body.result.contents;
    expect(content.mimeType).toBe('application/json');
    const tool = await callTool(ctx, 'get_workspace_context', {});
    expect(JSON.parse(content.text)).toEqual(tool.body.result.structuredContent);
    // Compact, like the tool's text block: byte for byte the same JSON.
    expect(content.text).toBe(tool.body.result.content[0].text);
  });

  it.each([
    'flowgate://workspaces/ws-other/mcp',
    'flowgate://mcp-docs/secrets',
    'flowgate://mcp-docs/',
    'flowgate://runs/run_1',
    'flowgate://flows/enrich',
    'https://example.com/',
  ])('answers %s as not found with -32602 and data.uri', async (uri) => {
    const ctx = env.ctx();
    const { status, body } = await rpc(ctx, 'resources/read', { uri });
    expect(status).toBe(200);
    expect(body.error).toEqual({ code: -32602, message: 'Resource not found', data: { uri } });
    expect(ctx.audits[0]).toMatchObject({ kind: 'resources/read', outcome: 'error', errorCode: 'not_found' });
  });

  it('requires a bounded string uri', async () => {
    for (const params of [{}, { uri: 5 }, { uri: '' }, { uri: `flowgate://${'x'.repeat(2100)}` }]) {
      const { body } = await rpc(env.ctx(), 'resources/read', params);
      expect(body.error?.code).toBe(-32602);
    }
  });
});

describe('docs', () => {
  const docs = renderAllDocs({ publicBaseUrl: 'https://flowgate.test', workspaceId: 'ws-acme' });

  it('tabulate every served tool from the catalog', () => {
    for (const tool of CATALOG) {
      expect(docs.overview).toContain(`| \`${tool.name}\` | ${tool.toolsets.join(', ')} |`);
      expect(docs['tool-safety']).toContain(`| \`${tool.name}\` |`);
    }
  });

  it('explain discovery, narrowing, blockers, pagination and errors', () => {
    for (const topic of [
      '## First steps',
      '## Narrowing',
      'X-MCP-Exclude-Tools',
      '## Blockers',
      'workspace_disabled_tool',
      '## Pagination',
      '## Errors',
      '-32602',
      'invalid_narrowing',
    ]) {
      expect(docs.overview).toContain(topic);
    }
  });

  it('give setup snippets for all twelve clients and the stdio bridge, with the reader URL and workspace', () => {
    const setup = docs['client-setup'];
    for (const client of [
      'Codex',
      'Claude Code',
      'Cursor',
      'Windsurf',
      'VS Code',
      'Cline',
      'Roo Code',
      'Continue',
      'Gemini CLI',
      'opencode',
      'Goose',
      'Zed',
    ]) {
      expect(setup).toContain(`## ${client}`);
    }
    expect(setup).toContain('https://flowgate.test/api/workspaces/ws-acme/mcp');
    expect(setup).toContain('flowgate mcp stdio --workspace ws-acme --token-env-var FLOWGATE_MCP_TOKEN');
    expect(setup).toContain('bearer_token_env_var = "FLOWGATE_MCP_TOKEN"');
    // Each client's own variable syntax (literal text, not templates).
    expect(setup).toContain(`$${'{'}input:flowgate_mcp_token}`);
    expect(setup).toContain(`$${'{'}env:FLOWGATE_MCP_TOKEN}`);
    expect(setup).toContain(`$${'{'}{ secrets.FLOWGATE_MCP_TOKEN }}`);
    expect(setup).toContain('{env:FLOWGATE_MCP_TOKEN}');
    expect(setup).not.toMatch(/fgk_[A-Za-z0-9]+_[A-Za-z0-9]{16,}/);
  });

  it('have valid JSON in every json snippet', () => {
    for (const [id, text] of Object.entries(docs)) {
      const snippets = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] as string);
      for (const s of snippets) expect(() => JSON.parse(s), `${id}: ${s}`).not.toThrow();
    }
  });

  it('render placeholders without a workspace and reuse rendered text', () => {
    const generic = renderDoc('overview', { publicBaseUrl: 'https://x.test', workspaceId: null });
    expect(generic).toContain('https://x.test/api/workspaces/{workspace_id}/mcp');
    expect(renderDoc('overview', { publicBaseUrl: 'https://x.test', workspaceId: null })).toBe(generic);
  });

  it('name the authoring and release tools this server serves', () => {
    expect(docs['flow-authoring']).toContain(
      'Authoring and release tools you can use here: `inspect_flow_tool`, `check_flow_readiness`, `get_step_reference`, `validate_flow_definition`, `get_flow_definition`, `create_flow_draft`, `release_flow`.',
    );
    expect(docs['flow-authoring']).not.toContain('does not serve the authoring and release tools yet');
  });
});

describe('prompts', () => {
  it('lists every prompt now that their tools and templates are served, gated by capabilities', async () => {
    expect(AVAILABLE_PROMPTS.map((p) => p.name)).toEqual([
      'review_flow_definition',
      'create_flow_from_goal',
      'publish_flow_safely',
      'debug_failed_run',
    ]);
    const { body } = await rpc(env.ctx(), 'prompts/list');
    expect(body.result.prompts.map((p: { name: string }) => p.name)).toEqual([
      'review_flow_definition',
      'create_flow_from_goal',
      'publish_flow_safely',
      'debug_failed_run',
    ]);
    const debugger_ = await rpc(env.ctx({ capabilities: new Set(['runs.read']) }), 'prompts/list');
    expect(debugger_.body.result.prompts.map((p: { name: string }) => p.name)).toEqual(['debug_failed_run']);
    const reader = await rpc(env.ctx({ capabilities: new Set(['flows.read']) }), 'prompts/list');
    expect(reader.body.result.prompts.map((p: { name: string }) => p.name)).toEqual([
      'review_flow_definition',
    ]);
    const none = await rpc(env.ctx({ capabilities: new Set(['flows.manage']) }), 'prompts/list');
    expect(none.body.result).toEqual({ prompts: [] });
  });

  it('renders a listed prompt with its arguments', async () => {
    const { body } = await rpc(env.ctx(), 'prompts/get', {
      name: 'publish_flow_safely',
      arguments: { flow_slug: 'enrich-company' },
    });
    expect(body.result.messages[0].content.text).toContain(
      'Prepare releasing the Flowgate flow "enrich-company"',
    );
    expect(body.result.messages[0].content.text).toContain('release_flow');
  });

  it('audits the run a run resource read or debug_failed_run is about', async () => {
    const ctx = env.ctx();
    const read = await rpc(ctx, 'resources/read', { uri: 'flowgate://runs/run_AbCdEfGhIjKlMnOpQrSt/result' });
    expect(read.body.error?.code).toBe(-32602);
    await rpc(ctx, 'prompts/get', {
      name: 'debug_failed_run',
      arguments: { run_id: 'run_ZyXwVuTsRqPoNmLkJiHg' },
    });
    await rpc(ctx, 'resources/read', { uri: 'flowgate://mcp-docs/overview' });
    expect(ctx.audits.map((a) => [a.kind, a.runId])).toEqual([
      ['resources/read', 'run_AbCdEfGhIjKlMnOpQrSt'],
      ['prompts/get', 'run_ZyXwVuTsRqPoNmLkJiHg'],
      ['resources/read', null],
    ]);
  });

  it('answers prompts/get for an unlisted prompt with -32602', async () => {
    // A prompt the caller's capabilities do not allow is as unknown as one that does not exist.
    const ctx = env.ctx({ capabilities: new Set(['flows.read']) });
    const { body } = await rpc(ctx, 'prompts/get', {
      name: 'debug_failed_run',
      arguments: { run_id: 'run_1' },
    });
    expect(body.error).toEqual({ code: -32602, message: 'Unknown prompt: debug_failed_run' });
    expect(ctx.audits[0]).toMatchObject({
      kind: 'prompts/get',
      action: 'debug_failed_run',
      outcome: 'error',
    });
    const missing = await rpc(ctx, 'prompts/get', {});
    expect(missing.body.error?.code).toBe(-32602);
  });

  it('become available exactly when every tool and template they use exists', () => {
    const allTools = new Set([
      ...TOOL_NAMES,
      'search_flows',
      'get_step_reference',
      'validate_flow_definition',
      'create_flow_draft',
      'check_flow_readiness',
      'get_flow_definition',
      'release_flow',
      'get_run_status',
      'inspect_run_step',
    ]);
    const allTemplates = new Set([
      ...RESOURCE_TEMPLATES.map((t) => t.uriTemplate),
      'flowgate://flows/{slug}',
      'flowgate://runs/{run_id}',
      'flowgate://runs/{run_id}/events',
    ]);
    for (const p of PROMPTS) {
      expect(isPromptAvailable(p, allTools, allTemplates)).toBe(true);
      expect(isPromptAvailable(p)).toBe(true);
      const without = new Set([...allTools].filter((t) => t !== p.usesTools[0]));
      expect(isPromptAvailable(p, without, allTemplates)).toBe(false);
    }
  });

  it('render workflows that name their tools and arguments', () => {
    const byName = Object.fromEntries(PROMPTS.map((p) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual([
      'create_flow_from_goal',
      'debug_failed_run',
      'publish_flow_safely',
      'review_flow_definition',
    ]);
    expect(byName.debug_failed_run?.capabilities).toEqual(['runs.read']);
    expect(byName.create_flow_from_goal?.capabilities).toEqual(['flows.read', 'flows.manage']);
    for (const p of PROMPTS) {
      const args = Object.fromEntries(p.arguments.map((a) => [a.name, `${a.name}-value`]));
      const text = p.render(args);
      for (const t of p.usesTools) expect(text, `${p.name} mentions ${t}`).toContain(t);
      for (const a of p.arguments.filter((x) => x.required)) expect(text).toContain(`${a.name}-value`);
    }
  });
});

// Issue 12 finding 5: the workspace policy and narrowing covered tools only, not the resources and prompts that
// expose the same content.
describe('policy over resources and prompts', () => {
  const uri = 'flowgate://flows/policy-x/definition/draft';
  const names = (list: Array<{ name: string }>) => list.map((p) => p.name);

  beforeAll(async () => {
    await seedFlow(env.db, 'ws-acme', '{:slug :policy-x :flow (flow/input)}', { release: false });
  });

  it('answers a template as compact JSON, the same text get_flow_definition gives', async () => {
    const ctx = env.ctx();
    const [content] = (await rpc(ctx, 'resources/read', { uri })).body.result.contents;
    expect(content.mimeType).toBe('application/json');
    const tool = await callTool(ctx, 'get_flow_definition', { flow_slug: 'policy-x' });
    expect(content.text).toBe(JSON.stringify(tool.body.result.structuredContent));
    expect(content.text).not.toContain('\n');
  });

  it('refuses and hides a template whose tool a workspace admin disabled', async () => {
    expect((await rpc(env.ctx(), 'resources/read', { uri })).body.result.contents).toHaveLength(1);
    const ctx = env.ctx({ workspacePolicy: { readOnly: false, disabledTools: ['get_flow_definition'] } });
    const { body } = await rpc(ctx, 'resources/read', { uri });
    expect(body.error).toEqual({ code: -32602, message: 'Resource not found', data: { uri } });
    const templates = await rpc(ctx, 'resources/templates/list');
    const listed = names(templates.body.result.resourceTemplates);
    expect(listed).not.toContain('flow-definition');
    expect(listed).not.toContain('flow-version-definition');
    expect(listed).toContain('run');
    const prompts = await rpc(ctx, 'prompts/list');
    expect(names(prompts.body.result.prompts)).not.toContain('review_flow_definition');
  });

  it('refuses a template whose tool narrowing excludes', async () => {
    const n = parseNarrowingHeaders({ excludeTools: 'get_flow_definition' });
    if (!n.ok) throw new Error(n.error.message);
    const { body } = await rpc(env.ctx({ narrowing: n.narrowing }), 'resources/read', { uri });
    expect(body.error?.message).toBe('Resource not found');
  });

  it('does not list or render authoring prompts in read-only mode', async () => {
    const ctx = env.ctx({ workspacePolicy: { readOnly: true, disabledTools: [] } });
    const { body } = await rpc(ctx, 'prompts/list');
    expect(names(body.result.prompts)).toEqual(['review_flow_definition', 'debug_failed_run']);
    const got = await rpc(ctx, 'prompts/get', { name: 'create_flow_from_goal', arguments: { goal: 'x' } });
    expect(got.body.error?.code).toBe(-32602);
    // Reading is not a change: the definition stays readable in read-only mode.
    expect((await rpc(ctx, 'resources/read', { uri })).body.result.contents).toHaveLength(1);
  });
});
