import { schema } from '@flowgate/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

let h: Harness;

interface Page {
  items: { feedbackId: string; area: string; summary: string; createdAt: string }[];
  nextCursor: string | null;
}

/** Feedback rows with fixed times, so order and `since` are exact. */
async function seed(ws: string, rows: { id: string; area: string; at: string }[]) {
  await h.db.db.insert(schema.feedback).values(
    rows.map((r) => ({
      id: r.id,
      workspaceId: ws,
      principalType: 'service_account',
      principalId: 'sa_seed',
      area: r.area,
      summary: `summary ${r.id}`,
      details: 'details',
      createdAt: new Date(r.at),
    })),
  );
}

const list = async (ws: string, q = '', token?: string) => {
  const res = await h.request('GET', `/api/workspaces/${ws}/feedback${q}`, token ? { token } : {});
  return { status: res.status, body: (await res.json()) as Page & { code?: string; message?: string } };
};
const ids = (p: Page) => p.items.map((i) => i.feedbackId);

beforeAll(async () => {
  h = await createHarness();
  await h.createWorkspace('ws-fb-a');
  await h.createWorkspace('ws-fb-b');
  await seed('ws-fb-a', [
    { id: 'fb_a1', area: 'docs', at: '2026-01-01T00:00:00Z' },
    { id: 'fb_a2', area: 'setup', at: '2026-01-02T00:00:00Z' },
    { id: 'fb_a3', area: 'docs', at: '2026-01-03T00:00:00Z' },
    // Same instant as a3: the id breaks the tie, so paging neither repeats nor skips it.
    { id: 'fb_a4', area: 'docs', at: '2026-01-03T00:00:00Z' },
    { id: 'fb_a5', area: 'mcp', at: '2026-01-04T00:00:00Z' },
  ]);
  await seed('ws-fb-b', [{ id: 'fb_b1', area: 'docs', at: '2026-01-05T00:00:00Z' }]);
});
afterAll(async () => h?.close());

describe('GET /api/workspaces/{ws}/feedback', () => {
  it('lists newest first and pages with a cursor until every row was seen once', async () => {
    const first = await list('ws-fb-a', '?limit=2');
    expect(first.status).toBe(200);
    expect(ids(first.body)).toEqual(['fb_a5', 'fb_a4']);
    expect(first.body.items[0]).toEqual({
      feedbackId: 'fb_a5',
      area: 'mcp',
      summary: 'summary fb_a5',
      details: 'details',
      principalType: 'service_account',
      principalId: 'sa_seed',
      resourceUri: null,
      runId: null,
      flowSlug: null,
      context: null,
      createdAt: '2026-01-04T00:00:00.000Z',
    });
    const second = await list('ws-fb-a', `?limit=2&cursor=${first.body.nextCursor}`);
    expect(ids(second.body)).toEqual(['fb_a3', 'fb_a2']);
    const third = await list('ws-fb-a', `?limit=2&cursor=${second.body.nextCursor}`);
    expect(ids(third.body)).toEqual(['fb_a1']);
    expect(third.body.nextCursor).toBeNull();
  });

  it('filters by area and since, and pages within the filter', async () => {
    expect(ids((await list('ws-fb-a', '?area=docs')).body)).toEqual(['fb_a4', 'fb_a3', 'fb_a1']);
    expect(ids((await list('ws-fb-a', '?since=2026-01-03T00:00:00Z')).body)).toEqual([
      'fb_a5',
      'fb_a4',
      'fb_a3',
    ]);
    const page = await list('ws-fb-a', '?area=docs&since=2026-01-02T00:00:00%2B00:00&limit=1');
    expect(ids(page.body)).toEqual(['fb_a4']);
    const rest = await list(
      'ws-fb-a',
      `?area=docs&since=2026-01-02T00:00:00Z&cursor=${page.body.nextCursor}`,
    );
    expect(ids(rest.body)).toEqual(['fb_a3']);
    expect(rest.body.nextCursor).toBeNull();
  });

  it('refuses a bad filter with 400 invalid_request and a bad cursor with invalid_cursor', async () => {
    for (const q of [
      '?area=bogus',
      '?since=yesterday',
      '?since=2026-01-01T00:00:00',
      '?limit=0',
      '?limit=201',
    ]) {
      const r = await list('ws-fb-a', q);
      expect(r.status, q).toBe(400);
      expect(r.body.code, q).toBe('invalid_request');
    }
    expect((await list('ws-fb-a', '?cursor=abc.def')).body.code).toBe('invalid_cursor');
  });

  it("never shows another workspace's feedback, nor opens its cursors", async () => {
    expect(ids((await list('ws-fb-b')).body)).toEqual(['fb_b1']);
    expect(ids((await list('ws-fb-a')).body)).not.toContain('fb_b1');
    const a = await list('ws-fb-a', '?limit=1');
    const crossed = await list('ws-fb-b', `?cursor=${a.body.nextCursor}`);
    expect(crossed.status).toBe(400);
    expect(crossed.body.code).toBe('invalid_cursor');
    // A key of B, even with every capability, reads nothing of A.
    const bKey = await h.createServiceAccount('ws-fb-b', ['workspace.full'], 'b-full');
    const foreign = await list('ws-fb-a', '', bKey.apiKey);
    expect(foreign.status).toBe(403);
    expect(foreign.body.items).toBeUndefined();
  });

  it('is for workspace admins: a key without admin rights is refused', async () => {
    const viewer = await h.createServiceAccount('ws-fb-a', ['flows.read', 'feedback.send'], 'viewer');
    const r = await list('ws-fb-a', '', viewer.apiKey);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('insufficient_role');
  });

  it('shows what send_feedback stored, redacted, with the sender', async () => {
    const agent = await h.createServiceAccount('ws-fb-b', ['feedback.send'], 'agent');
    const call = await h.request('POST', '/api/workspaces/ws-fb-b/mcp', {
      token: agent.apiKey,
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'send_feedback',
          arguments: {
            summary: 'setup was confusing',
            details: 'the key sk-live-0123456789abcdef0123456789 did not work',
            area: 'setup',
            flow_slug: 'daily-report',
          },
        },
      },
    });
    expect(call.status).toBe(200);
    const page = await list('ws-fb-b', '?area=setup');
    expect(page.body.items).toHaveLength(1);
    const item = page.body.items[0] as Record<string, unknown>;
    expect(item).toMatchObject({
      area: 'setup',
      summary: 'setup was confusing',
      principalType: 'service_account',
      principalId: agent.serviceAccountId,
      flowSlug: 'daily-report',
    });
    expect(JSON.stringify(item)).not.toContain('sk-live-0123456789abcdef0123456789');
  });
});
