import { readFileSync } from 'node:fs';
import { CATALOG, SERVER_CARD_SCHEMA } from '@flowgate/workspace-mcp';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

// The published schemas, vendored as fixtures (each file's `$comment` names its source).
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
ajv.addSchema(fixture('server-card.schema.json'));
const validateCard = ajv.compile({
  $ref: 'https://flowgate.test/fixtures/server-card.schema.json#/$defs/ServerCard',
});
const validateCatalog = ajv.compile(fixture('ai-catalog.schema.json'));

const BASE = 'https://gw.example.test';
const WORKSPACE_CARD = '/api/workspaces/ws-acme/mcp/server-card';
const FLOW_CARD = '/api/workspaces/ws-acme/flows/triage-ticket/mcp/server-card';
const CATALOG_PATH = '/.well-known/ai-catalog.json';
const PUBLIC_PATHS = ['/.well-known/mcp/server-card.json', WORKSPACE_CARD, FLOW_CARD, CATALOG_PATH];
const VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'];

let h: Harness;
let apiKey: string;
beforeAll(async () => {
  h = await createHarness({ env: { FLOWGATE_PUBLIC_URL: BASE } });
  await h.createWorkspace('ws-acme');
  ({ apiKey } = await h.createServiceAccount('ws-acme', ['flows.read']));
});
afterAll(async () => h?.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  h.request('GET', path, { token: null, headers });

describe('SEP-2127 endpoint cards', () => {
  it('the workspace card: identity and transport only, valid against the published card schema', async () => {
    const res = await get(WORKSPACE_CARD, { accept: 'application/mcp-server-card+json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/mcp-server-card+json');
    const card = await res.json();
    expect(validateCard(card), JSON.stringify(validateCard.errors)).toBe(true);
    expect(Object.keys(card)).toEqual([
      '$schema',
      'name',
      'title',
      'version',
      'description',
      'icons',
      'remotes',
    ]);
    expect(card).toMatchObject({
      $schema: SERVER_CARD_SCHEMA,
      name: 'io.flowgate/workspace-mcp',
      title: 'Flowgate workspace MCP',
      version: h.deps.version,
    });
    expect(card.remotes).toHaveLength(1);
    expect(card.remotes[0].url).toBe(`${BASE}/api/workspaces/{workspace_id}/mcp`);
    expect(card.remotes[0].variables.workspace_id.isRequired).toBe(true);
    expect(card.remotes[0].supportedProtocolVersions).toEqual(VERSIONS);
    expect(card.remotes[0].headers[0]).toMatchObject({
      name: 'Authorization',
      isRequired: true,
      isSecret: true,
    });
  });

  it('the per-flow card names the per-flow endpoint template, valid against the same schema', async () => {
    const res = await get(FLOW_CARD);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/mcp-server-card+json');
    const card = await res.json();
    expect(validateCard(card), JSON.stringify(validateCard.errors)).toBe(true);
    expect(Object.keys(card)).toEqual([
      '$schema',
      'name',
      'title',
      'version',
      'description',
      'icons',
      'remotes',
    ]);
    expect(card.name).toBe('io.flowgate/flow-mcp');
    expect(card.remotes[0].url).toBe(`${BASE}/api/workspaces/{workspace_id}/flows/{flow_slug}/mcp`);
    expect(Object.keys(card.remotes[0].variables)).toEqual(['workspace_id', 'flow_slug']);
    expect(card.remotes[0].supportedProtocolVersions).toEqual(VERSIONS);
  });

  it('answers every workspace id and slug with the same bytes, without auth, a key changing nothing', async () => {
    const real = await (await get(WORKSPACE_CARD)).text();
    for (const path of [
      '/api/workspaces/ws-nobody-has-this/mcp/server-card',
      '/api/workspaces/NOT_A_VALID_ID/mcp/server-card',
      '/api/workspaces/%7Bworkspace_id%7D/mcp/server-card',
    ]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(real);
    }
    const withKey = await h.request('GET', WORKSPACE_CARD, { token: apiKey });
    expect(await withKey.text()).toBe(real);
    const flow = await (await get(FLOW_CARD)).text();
    for (const path of [
      '/api/workspaces/ws-nobody-has-this/flows/no-such-flow/mcp/server-card',
      '/api/workspaces/%7Bworkspace_id%7D/flows/%7Bflow_slug%7D/mcp/server-card',
    ]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(flow);
    }
  });

  it('never looks a workspace up: the workspace store is not touched by a card request', async () => {
    const store = h.deps.workspaces as unknown as Record<string, unknown>;
    const touched: string[] = [];
    const originals = new Map<string, unknown>();
    for (const key of Object.keys(store)) {
      const value = store[key];
      if (typeof value !== 'function') continue;
      originals.set(key, value);
      store[key] = (...args: unknown[]) => {
        touched.push(key);
        return (value as (...a: unknown[]) => unknown).apply(store, args);
      };
    }
    try {
      expect((await get('/api/workspaces/ws-unknown/mcp/server-card')).status).toBe(200);
      expect((await get('/api/workspaces/ws-unknown/flows/x-y/mcp/server-card')).status).toBe(200);
      expect((await get(CATALOG_PATH)).status).toBe(200);
      expect(originals.size).toBeGreaterThan(0);
      expect(touched).toEqual([]);
    } finally {
      for (const [key, value] of originals) store[key] = value;
    }
  });

  it('the scanners card keeps its lists and stays valid against the published card schema', async () => {
    const card = await (await get('/.well-known/mcp/server-card.json')).json();
    expect(validateCard(card), JSON.stringify(validateCard.errors)).toBe(true);
    expect(card.tools.map((t: { name: string }) => t.name)).toEqual(CATALOG.map((t) => t.name));
    // The endpoint card carries the same remote the scanners read.
    const endpoint = await (await get(WORKSPACE_CARD)).json();
    expect(endpoint.remotes).toEqual(card.remotes);
  });

  it('a card missing a required field or with a bad name fails the vendored schema (the check can fail)', async () => {
    const card = await (await get(WORKSPACE_CARD)).json();
    expect(validateCard({ ...card, name: 'no-slash' })).toBe(false);
    const { description: _, ...withoutDescription } = card;
    expect(validateCard(withoutDescription)).toBe(false);
    expect(validateCard({ ...card, $schema: 'https://example.com/x.json' })).toBe(false);
  });
});

describe('AI Catalog at /.well-known/ai-catalog.json', () => {
  it('names both cards, valid against the AI Catalog member lists', async () => {
    const res = await get(CATALOG_PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/ai-catalog+json');
    const catalog = await res.json();
    expect(validateCatalog(catalog), JSON.stringify(validateCatalog.errors)).toBe(true);
    expect(catalog).toEqual({
      specVersion: '1.0',
      entries: [
        {
          identifier: 'urn:air:gw.example.test:mcp:workspace-mcp',
          type: 'application/mcp-server-card+json',
          url: `${BASE}/api/workspaces/%7Bworkspace_id%7D/mcp/server-card`,
        },
        {
          identifier: 'urn:air:gw.example.test:mcp:flow-mcp',
          type: 'application/mcp-server-card+json',
          url: `${BASE}/api/workspaces/%7Bworkspace_id%7D/flows/%7Bflow_slug%7D/mcp/server-card`,
        },
      ],
    });
    expect(validateCatalog({ specVersion: 'draft', entries: [] })).toBe(false);
    expect(validateCatalog({ ...catalog, entries: [{ identifier: 'x', type: 'y' }] })).toBe(false);
  });

  it('each entry URL, fetched as written, answers the card it names', async () => {
    const catalog = await (await get(CATALOG_PATH)).json();
    const names = [];
    for (const entry of catalog.entries) {
      const res = await get(new URL(entry.url).pathname, { accept: entry.type });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(entry.type);
      const card = await res.json();
      expect(validateCard(card)).toBe(true);
      names.push(card.name);
    }
    expect(names).toEqual(['io.flowgate/workspace-mcp', 'io.flowgate/flow-mcp']);
  });
});

describe('serving', () => {
  it('every document: public, CORS *, cacheable, ETag with 304, preflight without auth, no console CSP', async () => {
    for (const path of PUBLIC_PATHS) {
      const res = await get(path, { origin: 'https://scanner.example' });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
      expect(res.headers.get('content-security-policy')).toBeNull();
      const etag = res.headers.get('etag') as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      const again = await get(path, { 'if-none-match': etag, origin: 'https://scanner.example' });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('access-control-allow-origin')).toBe('*');
      expect(again.headers.get('cache-control')).toBe('public, max-age=3600');
      const preflight = await h.request('OPTIONS', path, {
        token: null,
        headers: { origin: 'https://scanner.example', 'access-control-request-method': 'GET' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    }
    const tags = await Promise.all(PUBLIC_PATHS.map(async (p) => (await get(p)).headers.get('etag')));
    expect(new Set(tags).size).toBe(PUBLIC_PATHS.length);
  });

  it('the MCP endpoints next to the cards are unchanged: GET is 405, POST still asks for a token', async () => {
    for (const path of ['/api/workspaces/ws-acme/mcp', '/api/workspaces/ws-acme/flows/triage-ticket/mcp']) {
      expect((await h.request('GET', path, { token: apiKey })).status).toBe(405);
      const post = await h.request('POST', path, {
        token: null,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
      });
      expect(post.status).toBe(401);
    }
  });
});
