import { schema } from '@flowgate/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TEST_ADMIN_TOKEN } from '../testing.js';
import { createSignInCode } from './session.js';
import { Browser } from './test-browser.js';

let h: Harness;

/** 25 rows in ws-fa (one more than a page and then some), one in ws-fb; fixed times so order is exact. */
beforeAll(async () => {
  h = await createHarness();
  await h.createWorkspace('ws-fa');
  await h.createWorkspace('ws-fb');
  const row = (
    ws: string,
    n: number,
    area: string,
    extra: Partial<typeof schema.feedback.$inferInsert> = {},
  ) => ({
    id: `fb_${ws}_${String(n).padStart(2, '0')}`,
    workspaceId: ws,
    principalType: 'service_account',
    principalId: 'sa_agent',
    area,
    summary: `${ws} summary ${n}`,
    details: `line one ${n}\nline two`,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, n)),
    ...extra,
  });
  const rows = [];
  for (let n = 1; n <= 24; n++) rows.push(row('ws-fa', n, n % 2 === 0 ? 'docs' : 'setup'));
  rows.push(
    row('ws-fa', 25, 'mcp', {
      summary: '<script>alert(1)</script> tools/list is long',
      flowSlug: 'daily-report',
      runId: 'run_abc',
      context: { client: 'inspector' },
    }),
  );
  rows.push(row('ws-fb', 1, 'docs'));
  await h.db.db.insert(schema.feedback).values(rows);
});
afterAll(async () => h?.close());

const summaries = (html: string) => [...html.matchAll(/<strong>([^<]*)<\/strong>/g)].map((m) => m[1]);

describe('console Feedback page', () => {
  it('is in the workspace navigation and lists feedback newest first, escaped, under the strict CSP', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const keys = await b.page('/console/w/ws-fa/keys');
    expect(keys.html).toContain('<a href="/console/w/ws-fa/feedback">Feedback</a>');

    const { res, html } = await b.page('/console/w/ws-fa/feedback');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(html).toContain('<a href="/console/w/ws-fa/feedback" aria-current="page">Feedback</a>');
    expect(html).toContain('<title>Feedback · Flowgate console</title>');
    const shown = summaries(html);
    expect(shown).toHaveLength(20);
    expect(shown[0]).toBe('&lt;script&gt;alert(1)&lt;/script&gt; tools/list is long');
    expect(shown.slice(1, 3)).toEqual(['ws-fa summary 24', 'ws-fa summary 23']);
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('<p class="details">line one 24\nline two</p>');
    expect(html).toContain('<a href="/console/w/ws-fa/flows/daily-report">daily-report</a>');
    expect(html).toContain('<a href="/console/w/ws-fa/runs/run_abc">run</a>');
    expect(html).toContain('&quot;client&quot;: &quot;inspector&quot;');
    expect(html).not.toContain('ws-fb summary');

    // The pager carries the API's cursor; the next page holds the five oldest, and no further pager.
    const next = /<nav class="pager" aria-label="Pages"><a href="([^"]+)">/.exec(html)?.[1] ?? '';
    expect(next).toMatch(/^\/console\/w\/ws-fa\/feedback\?cursor=/);
    const second = await b.page(next.replaceAll('&amp;', '&'));
    expect(summaries(second.html)).toEqual([5, 4, 3, 2, 1].map((n) => `ws-fa summary ${n}`));
    expect(second.html).not.toContain('class="pager"');
  });

  it('filters by area and by a UTC start, and says when nothing matches', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const docs = await b.page('/console/w/ws-fa/feedback?area=docs&since=2026-01-01T00:20');
    expect(summaries(docs.html)).toEqual([24, 22, 20].map((n) => `ws-fa summary ${n}`));
    expect(docs.html).toContain('<option value="docs" selected="">docs</option>');
    const none = await b.page('/console/w/ws-fa/feedback?since=2999-01-01T00:00');
    expect(none.res.status).toBe(200);
    expect(none.html).toContain('No feedback matches these filters.');
    const empty = await b.page('/console/w/ws-fb/feedback?area=runtime');
    expect(empty.html).toContain('No feedback matches these filters.');
  });

  it("a workspace admin's session never opens another workspace's feedback", async () => {
    const b = new Browser(h);
    await b.signInWithCode(await createSignInCode(h.db.db, 'ws-fb'));
    const own = await b.page('/console/w/ws-fb/feedback');
    expect(own.res.status).toBe(200);
    expect(summaries(own.html)).toEqual(['ws-fb summary 1']);
    const other = await b.page('/console/w/ws-fa/feedback');
    expect(other.res.status).toBe(403);
    expect(other.html).not.toContain('ws-fa summary');
  });
});

describe('console sign-in link', () => {
  it('an expired or used link says how to get a new one and where the operator token is', async () => {
    const b = new Browser(h);
    const res = await b.signInWithCode('not-a-live-code');
    expect(res.status).toBe(401);
    const html = await res.text();
    expect(html).toContain('That sign-in link was already used or has expired');
    expect(html).toContain('Restart pnpm dev to print a new one');
    expect(html).toContain('FLOWGATE_ADMIN_TOKEN');
    expect(html).toContain('.flowgate/dev-secrets.json');
    // And the page offers the token form right there.
    expect(html).toContain('name="token"');
  });
});
