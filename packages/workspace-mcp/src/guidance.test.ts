import type { Capability } from '@flowgate/auth';
import { seedFlowWorld } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from './catalog.js';
import type { McpRequestContext } from './context.js';
import { flowSurface } from './flow-surface.js';
import { guideMarkdown, guideProse, hiddenTools } from './guidance.js';
import { parseNarrowingHeaders } from './narrowing.js';
import { WORKSPACE_SURFACE } from './surface.js';
import { ALL_CAPABILITIES, type Json, rpc, type TestContext, useTestDb } from './testing.js';

const env = useTestDb();
let workspaceId = '';

beforeAll(async () => {
  workspaceId = (await seedFlowWorld(env.deps, { workspaceId: env.uniqueId('ws-guide') })).workspaceId;
});

describe('guideProse and guideMarkdown', () => {
  const hidden = hiddenTools(['call_flow_tool', 'send_feedback']);

  it('drops the parenthetical, clause or sentence that names a hidden tool, and nothing else', () => {
    expect(guideProse('Poll it until the status is final (e.g. after call_flow_tool).', hidden)).toBe(
      'Poll it until the status is final.',
    );
    expect(
      guideProse('Results come inline if it ends in time; else poll call_flow_tool. Ask first.', hidden),
    ).toBe('Results come inline if it ends in time. Ask first.');
    expect(guideProse('Read the docs. When something is unclear, use send_feedback.', hidden)).toBe(
      'Read the docs.',
    );
    // A name is matched whole: a longer name that contains it stays.
    expect(guideProse('Use call_flow_tool_x here.', hidden)).toBe('Use call_flow_tool_x here.');
  });

  it('drops list items, table rows and code blocks naming hidden tools and renumbers ordered lists', () => {
    const md = [
      '# Title',
      '',
      '1. Search first.',
      '2. Then `call_flow_tool` with',
      '   the input.',
      '3. Poll the run.',
      '',
      '| tool | use |',
      '| `send_feedback` | report |',
      '| `get_run_status` | poll |',
      '',
      '```json',
      '{ "tool": "call_flow_tool" }',
      '```',
      'A paragraph. It names send_feedback.',
    ].join('\n');
    expect(guideMarkdown(md, hidden)).toBe(
      [
        '# Title',
        '',
        '1. Search first.',
        '2. Poll the run.',
        '',
        '| tool | use |',
        '| `get_run_status` | poll |',
        '',
        'A paragraph.',
      ].join('\n'),
    );
  });
});

type Case = {
  name: string;
  headers?: Parameters<typeof parseNarrowingHeaders>[0];
  capabilities?: readonly Capability[];
  flowEndpoint?: boolean;
};

const CASES: Case[] = [
  { name: 'everything' },
  { name: 'X-MCP-Toolsets: run', headers: { toolsets: 'run' } },
  { name: 'X-MCP-Toolsets: read', headers: { toolsets: 'read' } },
  { name: 'X-MCP-Toolsets: authoring', headers: { toolsets: 'authoring' } },
  { name: 'X-MCP-Toolsets: release,feedback', headers: { toolsets: 'release,feedback' } },
  { name: 'X-MCP-Toolsets: debug', headers: { toolsets: 'debug' } },
  { name: 'X-MCP-Toolsets: search,setup', headers: { toolsets: 'search,setup' } },
  { name: 'X-MCP-Toolsets: context', headers: { toolsets: 'context' } },
  { name: 'X-MCP-Readonly', headers: { readOnly: 'true' } },
  { name: 'X-MCP-Tools: get_run_status', headers: { tools: 'get_run_status' } },
  {
    name: 'X-MCP-Exclude-Tools: get_workspace_context,send_feedback,check_connections',
    headers: { excludeTools: 'get_workspace_context,send_feedback,check_connections' },
  },
  { name: 'flows.read + flows.manage only', capabilities: ['flows.read', 'flows.manage'] },
  { name: 'runs.read only', capabilities: ['runs.read'] },
  { name: 'per-flow endpoint', flowEndpoint: true },
  { name: 'per-flow endpoint, X-MCP-Toolsets: run', flowEndpoint: true, headers: { toolsets: 'run' } },
  {
    name: 'per-flow endpoint, get_run_status excluded',
    flowEndpoint: true,
    headers: { excludeTools: 'get_run_status' },
  },
];

async function contextFor(c: Case): Promise<TestContext> {
  let surface = WORKSPACE_SURFACE;
  const base = env.ctx({ workspaceId });
  if (c.flowEndpoint) {
    const open = await base.workspace().flows.open({
      slug: 'enrich-company',
      installationId: null,
      includeInstalled: true,
    });
    if (!open) throw new Error('no flow enrich-company');
    const made = await flowSurface(open);
    if (!made) throw new Error('enrich-company has no surface');
    surface = made;
  }
  const parsed = parseNarrowingHeaders(c.headers ?? {}, surface.toolNames);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const over: Partial<McpRequestContext> = {
    workspaceId,
    narrowing: parsed.narrowing,
    capabilities: new Set(c.capabilities ?? ALL_CAPABILITIES),
    surface,
  };
  return env.ctx(over);
}

/** Every piece of guidance a caller receives, labelled by where it came from. */
async function guidanceOf(ctx: TestContext): Promise<{ visible: string[]; texts: [string, string][] }> {
  const texts: [string, string][] = [];
  const init = await rpc(ctx, 'initialize', { protocolVersion: '2025-11-25', capabilities: {} });
  texts.push(['instructions', init.body.result.instructions]);
  const tools: Json[] = (await rpc(ctx, 'tools/list')).body.result.tools;
  for (const t of tools) texts.push([`tools/list ${t.name}`, JSON.stringify(t)]);
  if (ctx.surface?.servesResources ?? true) {
    const resources: Json[] = (await rpc(ctx, 'resources/list')).body.result.resources;
    for (const r of resources) {
      texts.push([`resources/list ${r.uri}`, r.description]);
      // The workspace report lists hidden tools with their blockers on purpose: it is the diagnosis, not guidance.
      if (!r.uri.startsWith('flowgate://mcp-docs/')) continue;
      const read = await rpc(ctx, 'resources/read', { uri: r.uri });
      texts.push([`resources/read ${r.uri}`, read.body.result.contents[0].text]);
    }
    const templates: Json[] = (await rpc(ctx, 'resources/templates/list')).body.result.resourceTemplates;
    for (const t of templates) texts.push([`template ${t.uriTemplate}`, t.description]);
    const prompts: Json[] = (await rpc(ctx, 'prompts/list')).body.result.prompts;
    for (const p of prompts) {
      texts.push([`prompts/list ${p.name}`, JSON.stringify(p)]);
      const args = Object.fromEntries(p.arguments.map((a: Json) => [a.name, 'x1']));
      const got = await rpc(ctx, 'prompts/get', { name: p.name, arguments: args });
      texts.push([`prompts/get ${p.name}`, JSON.stringify(got.body.result)]);
    }
  }
  return { visible: tools.map((t) => t.name), texts };
}

describe('guidance names only the tools the caller can see', () => {
  it.each(CASES)('$name', async (c) => {
    const ctx = await contextFor(c);
    const { visible, texts } = await guidanceOf(ctx);
    const hidden = TOOL_NAMES.filter((n) => !visible.includes(n));
    const pattern = new RegExp(`(?<![A-Za-z0-9_])(?:${hidden.join('|')})(?![A-Za-z0-9_])`);
    const leaks = hidden.length
      ? texts
          .filter(([, text]) => pattern.test(text))
          .map(([where, text]) => `${where}: ${pattern.exec(text)?.[0]}`)
      : [];
    expect(leaks).toEqual([]);
    // Guidance is thinned, not emptied: the instructions still say what the server is and how to stay safe.
    expect(texts[0]?.[1]).toMatch(/^Flowgate .*MCP server for/);
    expect(texts[0]?.[1]).toContain('Ask the user before');
  });

  it('under X-MCP-Toolsets: run the instructions keep the docs pointer and drop the hidden tools', async () => {
    const ctx = await contextFor({ name: 'run', headers: { toolsets: 'run' } });
    const init = await rpc(ctx, 'initialize', { protocolVersion: '2025-11-25', capabilities: {} });
    expect(init.body.result.instructions).toBe(
      `Flowgate workspace MCP server for workspace ${workspaceId}. Read flowgate://mcp-docs/overview for discovery, ` +
        'narrowing headers, blockers, pagination and errors. Ask the user before calling tools that change state, ' +
        'and never put secrets in arguments.',
    );
  });

  it('on a per-flow endpoint get_run_status no longer points at call_flow_tool', async () => {
    const ctx = await contextFor({ name: 'flow', flowEndpoint: true });
    const tools: Json[] = (await rpc(ctx, 'tools/list')).body.result.tools;
    const status = tools.find((t) => t.name === 'get_run_status');
    expect(status.description).toContain('Poll it until the status is final.');
    expect(status.inputSchema.properties.run_id.description).toBe('Run id.');
  });

  it('with nothing hidden the descriptors are the catalog ones, unchanged', async () => {
    const ctx = await contextFor({ name: 'everything' });
    const tools: Json[] = (await rpc(ctx, 'tools/list')).body.result.tools;
    const status = tools.find((t) => t.name === 'get_run_status');
    expect(status.description).toContain('Poll it until the status is final (e.g. after call_flow_tool).');
  });
});
