import {
  AVAILABLE_PROMPTS,
  CATALOG,
  DIRECT_RESOURCES,
  iconsForTools,
  RESOURCE_TEMPLATES,
  TOOL_NAMES,
} from '@flowgate/workspace-mcp';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO } from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';

/**
 * Icons and cache hints on the lists with real clients: SDK v2 pinned to 2026-07-28 (icons and `ttlMs`/`cacheScope`),
 * SDK v1 at 2025-11-25 (icons, no hints) and SDK v1 talked down to 2025-03-26 (neither; its schemas parse the lists).
 */

const WS = 'ws-list-hints';
let gw: TestGateway;
let key: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS);
  key = await gw.mintKey(WS, ['workspace.full'], 'list-hints');
}, 120_000);

afterAll(async () => {
  await gw?.close();
});

const headers = () => ({ Authorization: `Bearer ${key.apiKey}` });

async function v2(): Promise<V2Client> {
  const client = new V2Client(CLIENT_INFO, {
    capabilities: {},
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  });
  await client.connect(new V2Transport(new URL(gw.mcpUrl(WS)), { requestInit: { headers: headers() } }));
  return client;
}

/** The v1 client asks for its latest revision; `version` rewrites that request, as an older client would send it. */
async function v1(version: '2025-11-25' | '2025-03-26'): Promise<V1Client> {
  const asking: typeof fetch = async (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"initialize"')) {
      const body = JSON.parse(init.body) as { params: { protocolVersion: string } };
      body.params.protocolVersion = version;
      return fetch(input, { ...init, body: JSON.stringify(body) });
    }
    return fetch(input, init);
  };
  const client = new V1Client(CLIENT_INFO, { capabilities: {} });
  const transport = new V1Transport(new URL(gw.mcpUrl(WS)), {
    requestInit: { headers: headers() },
    fetch: asking,
  });
  await client.connect(transport);
  expect(transport.protocolVersion).toBe(version);
  return client;
}

const byName = <T extends { name: string }>(items: readonly T[], name: string) =>
  items.find((i) => i.name === name);

/** A tool's icon in tools/list: its first toolset's SVG, by URL on this gateway. */
function expectedToolIcons(name: string): { src: string }[] {
  const toolset = CATALOG.find((t) => t.name === name)?.toolsets[0];
  return [{ src: `${gw.url}/icons/${toolset}.svg` }];
}

describe('tool icon URLs', () => {
  it('answer 200 image/svg+xml, public and cacheable, with no authentication, for every toolset', async () => {
    const urls = new Set(TOOL_NAMES.map((n) => expectedToolIcons(n)[0]?.src as string));
    expect(urls.size).toBeGreaterThan(1);
    for (const url of urls) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/svg+xml');
      expect(res.headers.get('cache-control')).toBe('public, max-age=604800');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const body = await res.text();
      expect(body.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
      expect(body).not.toMatch(/<script|href=|url\(/i);
      // Revalidation is cheap: the ETag answers 304.
      const again = await fetch(url, { headers: { 'if-none-match': res.headers.get('etag') ?? '' } });
      expect(again.status).toBe(304);
    }
    // Only the toolsets' icons exist there.
    expect((await fetch(`${gw.url}/icons/nope.svg`)).status).toBe(404);
  });
});

describe('SDK v2 at 2026-07-28', () => {
  it('lists prompts, resources and templates with their catalog icons, in catalog order, with the cache hints', async () => {
    const client = await v2();
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const prompts = await client.listPrompts();
      expect(prompts.prompts.map((p) => p.name)).toEqual(AVAILABLE_PROMPTS.map((p) => p.name));
      for (const p of prompts.prompts)
        expect(p.icons).toEqual(iconsForTools(byName(AVAILABLE_PROMPTS, p.name)?.usesTools ?? []));
      const resources = await client.listResources();
      expect(resources.resources.map((r) => r.name)).toEqual(DIRECT_RESOURCES.map((r) => r.name));
      for (const r of resources.resources)
        expect(r.icons).toEqual(iconsForTools(byName(DIRECT_RESOURCES, r.name)?.exposesTools ?? []));
      const templates = await client.listResourceTemplates();
      expect(templates.resourceTemplates.map((t) => t.name)).toEqual(RESOURCE_TEMPLATES.map((t) => t.name));
      for (const t of templates.resourceTemplates)
        expect(t.icons).toEqual(iconsForTools(byName(RESOURCE_TEMPLATES, t.name)?.exposesTools ?? []));
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
      for (const t of tools.tools) expect(t.icons).toEqual(expectedToolIcons(t.name));
      // The policy cache (5 s) is shorter than the auth cache (30 s by default): the lists are valid that long.
      for (const result of [prompts, resources, templates, tools] as Record<string, unknown>[])
        expect([result.ttlMs, result.cacheScope]).toEqual([5_000, 'private']);
    } finally {
      await client.close();
    }
  });
});

describe('SDK v1', () => {
  it('at 2025-11-25 gets the icons and no cache hints', async () => {
    const client = await v1('2025-11-25');
    try {
      const prompts = await client.listPrompts();
      expect(prompts.prompts.length).toBe(AVAILABLE_PROMPTS.length);
      for (const p of prompts.prompts)
        expect(p.icons).toEqual(iconsForTools(byName(AVAILABLE_PROMPTS, p.name)?.usesTools ?? []));
      const templates = await client.listResourceTemplates();
      expect(templates.resourceTemplates[0]?.icons).toEqual(iconsForTools([]));
      expect(prompts).not.toHaveProperty('ttlMs');
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
      for (const t of tools.tools) expect(t.icons).toEqual(expectedToolIcons(t.name));
    } finally {
      await client.close();
    }
  });

  it('at 2025-03-26 parses every list, none carrying icons', async () => {
    const client = await v1('2025-03-26');
    try {
      const lists: Record<string, unknown>[][] = [
        (await client.listTools()).tools,
        (await client.listPrompts()).prompts,
        (await client.listResources()).resources,
        (await client.listResourceTemplates()).resourceTemplates,
      ];
      expect(lists.map((l) => l.length)).toEqual([
        TOOL_NAMES.length,
        AVAILABLE_PROMPTS.length,
        DIRECT_RESOURCES.length,
        RESOURCE_TEMPLATES.length,
      ]);
      for (const item of lists.flat()) expect(item).not.toHaveProperty('icons');
    } finally {
      await client.close();
    }
  });
});
