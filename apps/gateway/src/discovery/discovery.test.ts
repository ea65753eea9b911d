import { readFileSync } from 'node:fs';
import { CATALOG, SERVER_CARD_DEFAULT_BASE_URL, SERVER_CARD_SCHEMA } from '@flowgate/workspace-mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';
import { REGISTRY_SCHEMA, renderRegistryManifest, renderServerCard } from './documents.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { FLOWGATE_PUBLIC_URL: 'https://gw.example.test' } });
});
afterAll(async () => h?.close());

describe('generated discovery documents', () => {
  it('the committed server card and server.json match what the build step writes (run `pnpm generate`)', () => {
    expect(readFileSync(new URL('./server-card.json', import.meta.url), 'utf8')).toBe(renderServerCard());
    expect(readFileSync(new URL('../../../../server.json', import.meta.url), 'utf8')).toBe(
      renderRegistryManifest(),
    );
  });

  it('server.json has the registry fields the MCP Registry requires', () => {
    const manifest = JSON.parse(renderRegistryManifest());
    expect(manifest.$schema).toBe(REGISTRY_SCHEMA);
    expect(manifest.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(manifest.description.length).toBeLessThanOrEqual(100);
    expect(manifest.remotes).toHaveLength(1);
    const remote = manifest.remotes[0];
    expect(remote.type).toBe('streamable-http');
    expect(remote.url).toMatch(/^https:\/\/.+\/api\/workspaces\/\{workspace_id\}\/mcp$/);
    expect(remote.variables.workspace_id.isRequired).toBe(true);
    const auth = remote.headers.find((x: { name: string }) => x.name === 'Authorization');
    expect(auth).toMatchObject({ isRequired: true, isSecret: true });
    expect(remote.headers.map((x: { name: string }) => x.name).sort()).toEqual(
      ['Authorization', 'X-MCP-Exclude-Tools', 'X-MCP-Readonly', 'X-MCP-Tools', 'X-MCP-Toolsets'].sort(),
    );
  });
});

describe('serving the card', () => {
  it('is public, CORS-enabled, cacheable, and lists exactly the catalog with this deployment URL', async () => {
    const res = await h.request('GET', '/.well-known/mcp/server-card.json', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    const card = await res.json();
    expect(card.$schema).toBe(SERVER_CARD_SCHEMA);
    expect(card.tools.map((t: { name: string }) => t.name)).toEqual(CATALOG.map((t) => t.name));
    expect(card.remotes[0].url).toBe('https://gw.example.test/api/workspaces/{workspace_id}/mcp');
    expect(card.authentication).toEqual({ required: true, schemes: ['bearer'] });
    const etag = res.headers.get('etag') as string;
    const again = await h.request('GET', '/.well-known/mcp/server-card.json', {
      token: null,
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('serves the committed file byte for byte, with only the base URL swapped (the card is imported as a module)', async () => {
    const committed = readFileSync(new URL('./server-card.json', import.meta.url), 'utf8');
    const res = await h.request('GET', '/.well-known/mcp/server-card.json', { token: null });
    expect(await res.text()).toBe(
      committed.split(SERVER_CARD_DEFAULT_BASE_URL).join('https://gw.example.test'),
    );
  });

  it('serves the SEP-2127 card (no tool lists) at the per-workspace location without auth, for any workspace id', async () => {
    const a = await h.request('GET', '/api/workspaces/ws-anything/mcp/server-card', { token: null });
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toBe('application/mcp-server-card+json');
    const card = await a.json();
    expect(card.tools).toBeUndefined();
    expect(card.name).toBe('io.flowgate/workspace-mcp');
  });

  it('revalidates with weak and * If-None-Match and answers CORS preflights without auth, at both locations', async () => {
    for (const path of ['/.well-known/mcp/server-card.json', '/api/workspaces/ws-anything/mcp/server-card']) {
      const etag = (await h.request('GET', path, { token: null })).headers.get('etag') as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      for (const match of [`W/${etag}`, '*', `"other", ${etag}`]) {
        const res = await h.request('GET', path, { token: null, headers: { 'if-none-match': match } });
        expect(res.status).toBe(304);
        expect(res.headers.get('etag')).toBe(etag);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
      }
      const stale = await h.request('GET', path, { token: null, headers: { 'if-none-match': '"other"' } });
      expect(stale.status).toBe(200);
      const preflight = await h.request('OPTIONS', path, {
        token: null,
        headers: { origin: 'https://scanner.example', 'access-control-request-method': 'GET' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
      expect(preflight.headers.get('access-control-allow-headers')).toBe('If-None-Match');
    }
  });

  it('probes for OAuth metadata get a fast 404', async () => {
    const res = await h.request('GET', '/.well-known/oauth-protected-resource', { token: null });
    expect(res.status).toBe(404);
  });
});
