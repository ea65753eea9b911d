import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

/**
 * The MCP gate keeps one entry per cached principal. These hold it to the bounds the separate guards had: a change
 * made on this replica applies to the next request, one made on another replica once that replica hears of it and
 * within the authenticator's cache TTL (keys) or the workspace cache's (policy) at the latest. Each case warms the
 * entry first.
 */
const WS = 'ws-gate';
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  await h.createWorkspace(WS);
});
afterAll(async () => h?.close());
afterEach(() => {
  vi.restoreAllMocks();
});

function list(on: Harness, token: string, headers: Record<string, string> = {}, ws = WS): Promise<Response> {
  return on.request('POST', `/api/workspaces/${ws}/mcp`, {
    token,
    body: LIST,
    headers: { ...MCP_HEADERS, ...headers },
  });
}

async function toolNames(res: Response): Promise<string[]> {
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { tools: { name: string }[] } };
  return body.result.tools.map((t) => t.name);
}

async function warm(on: Harness, token: string, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await list(on, token, headers)).status).toBe(200);
}

describe('MCP gate cache', () => {
  it('refuses a revoked key at once on this replica, and within the auth cache TTL at the latest on another', async () => {
    let elapsed = 0;
    const start = Date.now();
    const replica = await createHarness({
      db: h.db,
      env: { FLOWGATE_AUTH_CACHE_TTL_SECONDS: '1' },
      now: () => start + elapsed,
    });
    try {
      const k = await h.createServiceAccount(WS, ['runs.read']);
      await warm(h, k.apiKey);
      await warm(replica, k.apiKey);
      const revoked = await h.request(
        'DELETE',
        `/api/workspaces/${WS}/service-accounts/${k.serviceAccountId}/keys/${k.keyId}`,
      );
      expect(revoked.status).toBe(204);
      const refused = await list(h, k.apiKey);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="flowgate", error="invalid_token"');
      // The other replica drops it when it hears the change (change-feed.ts), and by its cache TTL at the latest.
      elapsed = 1_100;
      expect((await list(replica, k.apiKey)).status).toBe(401);
    } finally {
      await replica.close();
    }
  });

  it('answers with changed capabilities on the next request', async () => {
    const k = await h.createServiceAccount(WS, ['runs.read']);
    await warm(h, k.apiKey);
    const before = await toolNames(await list(h, k.apiKey));
    expect(before).not.toContain('search_flow_tools');
    const patched = await h.request('PATCH', `/api/workspaces/${WS}/service-accounts/${k.serviceAccountId}`, {
      body: { capabilities: ['runs.read', 'flows.read'] },
    });
    expect(patched.status).toBe(200);
    const after = await toolNames(await list(h, k.apiKey));
    expect(after).toContain('search_flow_tools');
    expect(after.length).toBeGreaterThan(before.length);
  });

  it('refuses a disabled account on the next request (403), and lets it in again once enabled', async () => {
    const k = await h.createServiceAccount(WS, ['runs.read']);
    await warm(h, k.apiKey);
    const patch = (status: string) =>
      h.request('PATCH', `/api/workspaces/${WS}/service-accounts/${k.serviceAccountId}`, {
        body: { status },
      });
    expect((await patch('disabled')).status).toBe(200);
    const denied = await list(h, k.apiKey);
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { code: string }).code).toBe('forbidden');
    expect((await patch('active')).status).toBe(200);
    expect((await list(h, k.apiKey)).status).toBe(200);
  });

  it("applies this replica's policy changes on the next request: origins, IP allowlist, rate limit", async () => {
    const k = await h.createServiceAccount(WS, ['runs.read']);
    const origin = { origin: 'https://app.gate.test' };
    expect((await list(h, k.apiKey, origin)).status).toBe(403);
    const put = (body: Record<string, unknown>) =>
      h.request('PUT', `/api/workspaces/${WS}/mcp-policy`, { body });
    expect((await put({ allowedOrigins: ['https://app.gate.test'] })).status).toBe(200);
    await warm(h, k.apiKey, origin);
    expect((await put({ allowedOrigins: [] })).status).toBe(200);
    const refused = await list(h, k.apiKey, origin);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('origin_not_allowed');

    // In-process requests have no client address: any allowlist refuses them.
    await warm(h, k.apiKey);
    expect((await put({ allowedIps: ['10.0.0.0/8'] })).status).toBe(200);
    const outside = await list(h, k.apiKey);
    expect(outside.status).toBe(403);
    expect(((await outside.json()) as { code: string }).code).toBe('ip_not_allowed');
    expect((await put({ allowedIps: [] })).status).toBe(200);

    await warm(h, k.apiKey);
    expect((await put({ rateLimitPerMinute: 2 })).status).toBe(200);
    try {
      // The workspace's limit of 2 applies at once (the deployment's is 1,200): the bucket is capped at 2 tokens.
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await list(h, k.apiKey)).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      expect((await put({ rateLimitPerMinute: null })).status).toBe(200);
    }
  });

  it("sees another replica's policy change within the workspace cache TTL at the latest", async () => {
    const replica = await createHarness({ db: h.db });
    try {
      const k = await h.createServiceAccount(WS, ['runs.read']);
      await warm(replica, k.apiKey);
      expect(
        (
          await h.request('PUT', `/api/workspaces/${WS}/mcp-policy`, {
            body: { disabledTools: ['get_run_status'] },
          })
        ).status,
      ).toBe(200);
      try {
        expect(await toolNames(await list(h, k.apiKey))).not.toContain('get_run_status');
        // The other replica drops its entry when it hears the change, and once it expires at the latest.
        const later = Date.now() + replica.deps.workspaces.ttlMs + 1;
        vi.spyOn(Date, 'now').mockReturnValue(later);
        expect(await toolNames(await list(replica, k.apiKey))).not.toContain('get_run_status');
      } finally {
        vi.restoreAllMocks();
        await h.request('PUT', `/api/workspaces/${WS}/mcp-policy`, { body: { disabledTools: [] } });
      }
    } finally {
      await replica.close();
    }
  });

  it('keeps one entry per principal and workspace: a key is refused in another workspace after its own', async () => {
    await h.createWorkspace('ws-gate-other');
    const k = await h.createServiceAccount(WS, ['runs.read']);
    await warm(h, k.apiKey);
    const other = await list(h, k.apiKey, {}, 'ws-gate-other');
    expect(other.status).toBe(403);
    expect((await list(h, k.apiKey)).status).toBe(200);
  });
});
