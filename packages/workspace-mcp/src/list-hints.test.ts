import { seedWorkspace } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { listTtlMs } from './cache-hints.js';
import { CATALOG, getTool, iconsForTools, TOOL_NAMES, toolIcons } from './catalog.js';
import type { McpRequestContext } from './context.js';
import { handleMcpMessage } from './dispatch.js';
import { TOOLSET_ICON_SVGS, toolsetIcons } from './icons.js';
import { parseNarrowingHeaders } from './narrowing.js';
import { AVAILABLE_PROMPTS } from './prompts.js';
import type { ProtocolVersion } from './protocol.js';
import { DIRECT_RESOURCES, RESOURCE_TEMPLATES } from './resource-catalog.js';
import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO } from './revision.js';
import { surfaceOf, WORKSPACE_SURFACE } from './surface.js';
import { useTestDb } from './testing.js';

const env = useTestDb();
beforeAll(async () => {
  await seedWorkspace(env.db, 'ws-acme', 'Acme');
});

type Result = Record<string, unknown> & { [key: string]: unknown };

/** One request at `version` (2026-07-28 with its envelope and headers), answered through the dispatcher. */
async function ask(
  version: ProtocolVersion,
  method: string,
  params: Record<string, unknown> = {},
  over: Partial<McpRequestContext> = {},
): Promise<Result> {
  const modern = version === '2026-07-28';
  const ctx = env.ctx({
    protocolVersionHeader: version,
    ...(modern
      ? {
          mcpMethodHeader: method,
          mcpNameHeader: ((params.uri ?? params.name) as string | undefined) ?? null,
        }
      : {}),
    ...over,
  });
  const body = modern
    ? {
        ...params,
        _meta: { [META_PROTOCOL_VERSION]: version, [META_CLIENT_CAPABILITIES]: {} },
      }
    : params;
  const res = await handleMcpMessage({ jsonrpc: '2.0', id: 1, method, params: body }, ctx);
  if (res.body === null) throw new Error('no body');
  const parsed = JSON.parse(res.body);
  if (!parsed.result) throw new Error(`${method}: ${res.body}`);
  return parsed.result;
}

const names = (items: unknown, key = 'name') => (items as Record<string, string>[]).map((i) => i[key]);

describe('toolset icons', () => {
  it('gives each toolset its own small, plain SVG', () => {
    const svgs = Object.values(TOOLSET_ICON_SVGS);
    expect(new Set(svgs).size).toBe(svgs.length);
    for (const svg of svgs) {
      expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">')).toBe(true);
      expect(svg).not.toMatch(/script|href|<text|on[a-z]+=|url\(/i);
      expect(svg.length).toBeLessThan(400);
    }
    expect(toolsetIcons('run')).toEqual([
      {
        src: `data:image/svg+xml;base64,${btoa(TOOLSET_ICON_SVGS.run)}`,
        mimeType: 'image/svg+xml',
        sizes: ['any'],
      },
    ]);
  });

  it('derives every icon from the catalog: a tool has its first toolset icon, content that of its first tool', () => {
    const callFlowTool = getTool('call_flow_tool');
    expect(callFlowTool?.toolsets[0]).toBe('run');
    expect(callFlowTool && toolIcons(callFlowTool)).toEqual(toolsetIcons('run'));
    expect(iconsForTools(['nope', 'release_flow', 'get_run_status'])).toEqual(
      toolsetIcons(getTool('release_flow')?.toolsets[0] ?? 'context'),
    );
    expect(iconsForTools([])).toEqual(toolsetIcons('context'));
  });
});

describe('icons on the lists', () => {
  for (const version of ['2025-11-25', '2026-07-28'] as const) {
    it(`are on prompts, resources and resource templates under ${version}, from the catalog`, async () => {
      const prompts = (await ask(version, 'prompts/list')).prompts as { name: string; icons: unknown }[];
      expect(prompts.length).toBeGreaterThan(0);
      for (const p of prompts) {
        const def = AVAILABLE_PROMPTS.find((d) => d.name === p.name);
        expect(p.icons).toEqual(iconsForTools(def?.usesTools ?? []));
      }
      const resources = (await ask(version, 'resources/list')).resources as {
        name: string;
        icons: unknown;
      }[];
      expect(resources.length).toBe(DIRECT_RESOURCES.length);
      for (const r of resources) {
        const meta = DIRECT_RESOURCES.find((d) => d.name === r.name);
        expect(r.icons).toEqual(iconsForTools(meta?.exposesTools ?? []));
      }
      const templates = (await ask(version, 'resources/templates/list')).resourceTemplates as {
        name: string;
        icons: unknown;
      }[];
      expect(templates.length).toBe(RESOURCE_TEMPLATES.length);
      for (const t of templates) {
        const meta = RESOURCE_TEMPLATES.find((d) => d.name === t.name);
        expect(t.icons).toEqual(iconsForTools(meta?.exposesTools ?? []));
      }
      // The run templates show the run toolset's icon, the docs the context one.
      expect(templates.find((t) => t.name === 'mcp-doc')?.icons).toEqual(toolsetIcons('context'));
    });
  }

  for (const version of ['2025-06-18', '2025-03-26'] as const) {
    it(`are absent under ${version}, whose schema has no such field`, async () => {
      for (const [method, key] of [
        ['prompts/list', 'prompts'],
        ['resources/list', 'resources'],
        ['resources/templates/list', 'resourceTemplates'],
        ['tools/list', 'tools'],
      ] as const) {
        const items = (await ask(version, method))[key] as Record<string, unknown>[];
        expect(items.length).toBeGreaterThan(0);
        for (const item of items) expect(item).not.toHaveProperty('icons');
      }
    });
  }

  it('gives every tool its toolset icon as a gateway URL in tools/list (the shortest Icon), on both generations', async () => {
    for (const version of ['2025-11-25', '2026-07-28'] as const) {
      const tools = (await ask(version, 'tools/list')).tools as { name: string; icons?: unknown }[];
      expect(tools).toHaveLength(CATALOG.length);
      for (const t of tools) {
        const toolset = getTool(t.name)?.toolsets[0];
        expect(t.icons).toEqual([{ src: `https://flowgate.test/icons/${toolset}.svg` }]);
      }
      // The same list, paged with a cursor-less request under narrowing, carries them too.
      expect(tools.find((t) => t.name === 'call_flow_tool')?.icons).toEqual([
        { src: 'https://flowgate.test/icons/run.svg' },
      ]);
    }
  });

  it("lists the icons under each deployment's own public URL (the cached list is per base)", async () => {
    const a = (await ask('2026-07-28', 'tools/list', {}, { publicBaseUrl: 'https://a.example' })).tools;
    const b = (await ask('2026-07-28', 'tools/list', {}, { publicBaseUrl: 'https://b.example/' })).tools;
    expect((a as { icons: unknown }[])[0]?.icons).toEqual([{ src: 'https://a.example/icons/context.svg' }]);
    expect((b as { icons: unknown }[])[0]?.icons).toEqual([{ src: 'https://b.example/icons/context.svg' }]);
  });
});

describe('list order', () => {
  it('is catalog order on every list, whatever order the narrowing names tools in', async () => {
    const a = parseNarrowingHeaders({ tools: 'release_flow,get_workspace_context,search_flows' });
    const b = parseNarrowingHeaders({ tools: 'search_flows,release_flow,get_workspace_context' });
    if (!a.ok || !b.ok) throw new Error('narrowing');
    const listA = (await ask('2026-07-28', 'tools/list', {}, { narrowing: a.narrowing })).tools;
    const listB = (await ask('2026-07-28', 'tools/list', {}, { narrowing: b.narrowing })).tools;
    expect(names(listA)).toEqual(['get_workspace_context', 'search_flows', 'release_flow']);
    expect(listB).toEqual(listA);
    expect(names((await ask('2025-11-25', 'tools/list')).tools)).toEqual([...TOOL_NAMES]);
    expect(names((await ask('2025-11-25', 'prompts/list')).prompts)).toEqual(
      AVAILABLE_PROMPTS.map((p) => p.name),
    );
    expect(names((await ask('2025-11-25', 'resources/list')).resources)).toEqual(
      DIRECT_RESOURCES.map((r) => r.name),
    );
    expect(names((await ask('2025-11-25', 'resources/templates/list')).resourceTemplates)).toEqual(
      RESOURCE_TEMPLATES.map((t) => t.name),
    );
  });

  it('answers the same list, byte for byte, to the same request twice', async () => {
    for (const method of ['tools/list', 'prompts/list', 'resources/templates/list']) {
      expect(JSON.stringify(await ask('2026-07-28', method))).toBe(
        JSON.stringify(await ask('2026-07-28', method)),
      );
    }
  });
});

describe('cache hints (2026-07-28)', () => {
  it("give the lists the gateway's cache bound for this key, private; reads and discover stay at 0", async () => {
    const over = { listCacheTtlMs: 5_000 };
    for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) {
      const result = await ask('2026-07-28', method, {}, over);
      expect([method, result.ttlMs, result.cacheScope]).toEqual([method, 5_000, 'private']);
    }
    const discover = await ask('2026-07-28', 'server/discover', {}, over);
    expect([discover.ttlMs, discover.cacheScope]).toEqual([0, 'private']);
    const read = await ask('2026-07-28', 'resources/read', { uri: 'flowgate://mcp-docs/overview' }, over);
    expect([read.ttlMs, read.cacheScope]).toEqual([0, 'private']);
    const call = await ask(
      '2026-07-28',
      'tools/call',
      { name: 'get_workspace_context', arguments: {} },
      over,
    );
    expect(call).not.toHaveProperty('ttlMs');
    expect(call._meta).toHaveProperty([META_SERVER_INFO]);
  });

  it('say 0 when the gateway gave no bound', async () => {
    expect((await ask('2026-07-28', 'tools/list')).ttlMs).toBe(0);
  });

  it('are absent from 2025 answers', async () => {
    const result = await ask('2025-11-25', 'tools/list', {}, { listCacheTtlMs: 5_000 });
    expect(result).not.toHaveProperty('ttlMs');
    expect(result).not.toHaveProperty('cacheScope');
  });

  it('say 0 on a per-flow endpoint, whose tools change with each release of its flow', () => {
    const ctx = env.ctx({ listCacheTtlMs: 5_000 });
    expect(listTtlMs(WORKSPACE_SURFACE, ctx)).toBe(5_000);
    const perFlow = surfaceOf([], {
      resources: false,
      prompts: false,
      cacheLists: false,
      instructions: () => '',
      flowSlug: 'enrich-company',
    });
    expect(listTtlMs(perFlow, ctx)).toBe(0);
    expect(listTtlMs(WORKSPACE_SURFACE, env.ctx({ listCacheTtlMs: -1 }))).toBe(0);
    expect(listTtlMs(WORKSPACE_SURFACE, env.ctx({ listCacheTtlMs: 2_500.7 }))).toBe(2_500);
  });
});
