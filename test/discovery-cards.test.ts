import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_FLAVOURS, connectClient } from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { asRpc, initializeParams, mcpPost, rpc } from './support/mcp.js';

/**
 * A scanner that knows only the gateway's origin, over real HTTP: the AI Catalog at the well-known path, each entry's
 * card fetched as the catalog gives it, the card's endpoint template filled in, and both SDK generations connecting
 * with the header the card asks for (docs/mcp-surface.md, "Discovery documents").
 */

const WS = 'ws-scanned';
let gw: TestGateway;
let key: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS, 'Scanned Inc');
  key = await gw.mintKey(WS, ['flows.read'], 'scanned-agent');
});
afterAll(async () => gw?.close());

interface Card {
  name: string;
  remotes: Array<{
    type: string;
    url: string;
    variables: Record<string, { isRequired: boolean }>;
    headers: Array<{ name: string; isRequired: boolean; isSecret: boolean }>;
    supportedProtocolVersions: string[];
  }>;
  icons: unknown[];
  tools?: unknown;
}

async function readCatalog(): Promise<{
  specVersion: string;
  entries: Array<{ type: string; url: string }>;
}> {
  const res = await fetch(`${gw.url}/.well-known/ai-catalog.json`, {
    headers: { origin: 'https://scanner.example' },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/ai-catalog+json');
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  return res.json() as Promise<{ specVersion: string; entries: Array<{ type: string; url: string }> }>;
}

async function readCard(url: string, type: string): Promise<Card> {
  const res = await fetch(url, { headers: { accept: type } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe(type);
  expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
  return res.json() as Promise<Card>;
}

describe('discovery from the origin alone', () => {
  it('the catalog names both endpoint cards on this gateway, and each answers over HTTP without a key', async () => {
    const catalog = await readCatalog();
    expect(catalog.specVersion).toBe('1.0');
    expect(catalog.entries.map((e) => e.type)).toEqual([
      'application/mcp-server-card+json',
      'application/mcp-server-card+json',
    ]);
    const cards = await Promise.all(catalog.entries.map((e) => readCard(e.url, e.type)));
    expect(cards.map((c) => c.name)).toEqual(['io.flowgate/workspace-mcp', 'io.flowgate/flow-mcp']);
    for (const card of cards) expect(card.tools).toBeUndefined();
    expect(cards[1]?.remotes[0]?.url).toBe(`${gw.url}/api/workspaces/{workspace_id}/flows/{flow_slug}/mcp`);
  });

  for (const flavour of CLIENT_FLAVOURS) {
    it(`${flavour}: fills the workspace card's template, sends the header it asks for, and lists tools`, async () => {
      const catalog = await readCatalog();
      const entry = catalog.entries[0];
      if (!entry) throw new Error('no catalog entry');
      const remote = (await readCard(entry.url, entry.type)).remotes[0];
      if (!remote) throw new Error('no remote');
      expect(remote.type).toBe('streamable-http');
      expect(
        Object.entries(remote.variables)
          .filter(([, v]) => v.isRequired)
          .map(([k]) => k),
      ).toEqual(['workspace_id']);
      expect(remote.headers.filter((h) => h.isRequired).map((h) => h.name)).toEqual(['Authorization']);
      const url = remote.url.replace('{workspace_id}', WS);
      expect(url).toBe(gw.mcpUrl(WS));
      const session = await connectClient(flavour, url, { token: key.apiKey });
      try {
        expect(remote.supportedProtocolVersions).toContain(session.protocolVersion());
        expect((await session.listTools()).map((t) => t.name)).toContain('search_flows');
      } finally {
        await session.close();
      }
    });
  }

  it('the card and the serverInfo a 2025-11-25 client gets agree on title, version and icons', async () => {
    const catalog = await readCatalog();
    const entry = catalog.entries[0];
    if (!entry) throw new Error('no catalog entry');
    const card = (await readCard(entry.url, entry.type)) as Card & { title: string; version: string };
    const init = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: key.apiKey,
        body: rpc('initialize', initializeParams('2025-11-25')),
      }),
    );
    const serverInfo = init.result?.serverInfo as { title: string; version: string; icons: unknown[] };
    expect(serverInfo.title).toBe(card.title);
    expect(serverInfo.version).toBe(card.version);
    expect(serverInfo.icons).toEqual(card.icons);
    expect(card.icons).toHaveLength(1);
  });
});
