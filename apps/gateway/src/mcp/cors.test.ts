import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

const DEPLOYMENT_ORIGIN = 'https://console.example.com';
const WORKSPACE_ORIGIN = 'https://app.example.com';
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };
const ENDPOINTS = ['/api/workspaces/ws-cors/mcp', '/api/workspaces/ws-cors/flows/some-flow/mcp'];

let h: Harness;

beforeAll(async () => {
  h = await createHarness({ env: { FLOWGATE_ALLOWED_ORIGINS: DEPLOYMENT_ORIGIN } });
  await h.createWorkspace('ws-cors');
  const put = await h.request('PUT', '/api/workspaces/ws-cors/mcp-policy', {
    body: { allowedOrigins: [WORKSPACE_ORIGIN] },
  });
  expect(put.status).toBe(200);
});
afterAll(async () => h?.close());

const preflight = (path: string, origin: string) =>
  h.request('OPTIONS', path, {
    token: null,
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, x-mcp-tools',
    },
  });

describe('CORS on the MCP endpoints', () => {
  it.each(
    ENDPOINTS.flatMap((path) => [
      [path, DEPLOYMENT_ORIGIN],
      [path, WORKSPACE_ORIGIN],
    ]),
  )('answers the preflight for %s from %s without a token', async (path, origin) => {
    const res = await preflight(path, origin);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('access-control-allow-methods')).toBe('POST');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    for (const header of [
      'authorization',
      'content-type',
      'accept',
      'mcp-protocol-version',
      'mcp-session-id',
      'mcp-method',
      'mcp-name',
      'x-mcp-toolsets',
      'x-mcp-tools',
      'x-mcp-exclude-tools',
      'x-mcp-readonly',
    ])
      expect(allowed).toContain(header);
    expect(res.headers.get('vary')?.toLowerCase()).toContain('origin');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('refuses the preflight from another origin, the same way whether or not the workspace exists', async () => {
    const other = await preflight(ENDPOINTS[0] as string, 'https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const missing = await preflight('/api/workspaces/ws-none-such/mcp', WORKSPACE_ORIGIN);
    expect(missing.status).toBe(403);
    expect(missing.headers.get('access-control-allow-origin')).toBeNull();
    expect(await missing.json()).toEqual(await other.json());
  });

  it('puts Access-Control-Allow-Origin on answers to allowed origins, 401 challenges included', async () => {
    for (const origin of [DEPLOYMENT_ORIGIN, WORKSPACE_ORIGIN]) {
      const res = await h.request('POST', ENDPOINTS[0] as string, {
        body: PING,
        headers: { ...MCP_HEADERS, origin },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase();
      expect(exposed).toContain('www-authenticate');
      expect(exposed).toContain('mcp-session-id');
    }
    const anonymous = await h.request('POST', ENDPOINTS[0] as string, {
      token: null,
      body: PING,
      headers: { ...MCP_HEADERS, origin: WORKSPACE_ORIGIN },
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('access-control-allow-origin')).toBe(WORKSPACE_ORIGIN);
    expect(anonymous.headers.get('www-authenticate')).not.toBeNull();
  });

  it('still refuses other origins with 403 and no CORS headers', async () => {
    const res = await h.request('POST', ENDPOINTS[0] as string, {
      body: PING,
      headers: { ...MCP_HEADERS, origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('origin_not_allowed');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('methods other than POST on the MCP endpoints', () => {
  it.each(ENDPOINTS.flatMap((path) => ['PUT', 'PATCH', 'OPTIONS', 'GET', 'DELETE'].map((m) => [m, path])))(
    '%s %s is 405 with Allow: POST',
    async (method, path) => {
      const res = await h.request(method, path, { headers: MCP_HEADERS });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    },
  );
});
