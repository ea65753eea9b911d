import { NO_FLAGS, PROVIDERS, renderConfig } from '@flowgate/client-config';
import { repos } from '@flowgate/db';
import { EXAMPLE_FLOWS } from '@flowgate/flows';
import { hashConsoleSecret } from '@flowgate/workspace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TEST_ADMIN_TOKEN } from '../testing.js';
import { STYLESHEET } from './assets.js';
import { createSession, createSignInCode } from './session.js';
import { BASE, Browser } from './test-browser.js';

describe('admin console', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
    await h.createWorkspace('ws-a');
    await h.createWorkspace('ws-b');
  });
  afterAll(async () => {
    await h.close();
  });

  const accountsOf = async (ws: string) => {
    const res = await h.request('GET', `/api/workspaces/${ws}/service-accounts`);
    return ((await res.json()) as { items: { name: string; status: string }[] }).items;
  };

  it('redirects a page request without a session to sign-in', async () => {
    const b = new Browser(h);
    for (const path of ['/console', '/console/w/ws-a/keys', '/console/w/ws-a/runs', '/console/workspaces']) {
      const res = await b.fetch('GET', path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get('location')).toBe('/console/sign-in');
    }
    const post = await b.fetch('POST', '/console/w/ws-a/service-accounts', {
      name: 'x',
      capabilities: 'flows.read',
    });
    expect(post.status).toBe(401);
    expect(await accountsOf('ws-a')).toEqual([]);
  });

  it('signs in with the operator token, sets a strict HttpOnly cookie, and never renders the token', async () => {
    const b = new Browser(h);
    const res = await b.signInWithToken(TEST_ADMIN_TOKEN);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console');
    const cookie = res.headers.getSetCookie().find((l) => l.startsWith('fg_console='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Max-Age=28800/);
    // Plain http on loopback: no Secure (the browser would drop it); everywhere else Secure, see below.
    expect(cookie).not.toMatch(/Secure/);
    const sessionId = b.cookies.get('fg_console') ?? '';
    expect(sessionId.length).toBeGreaterThan(30);
    for (const path of [
      '/console/workspaces',
      '/console/w/ws-a/keys',
      '/console/w/ws-a/runs',
      '/console/w/ws-a/audit',
      '/console/w/ws-a/policy',
      '/console/w/ws-a/connect',
      '/console/w/ws-a/connections',
      '/console/w/ws-a/flows',
    ]) {
      const { res: page, html } = await b.page(path);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(html).not.toContain(TEST_ADMIN_TOKEN);
      expect(html).not.toContain(sessionId);
    }
    const { html } = await b.page('/console/workspaces');
    expect(html).toContain('ws-a');
    expect(html).toContain('ws-b');
  });

  it('marks the session cookie Secure outside loopback', async () => {
    const sign = await h.app.request('https://console.example.com/console/sign-in');
    const form = sign.headers.getSetCookie().find((l) => l.startsWith('__Host-fg_console_form='));
    expect(form).toMatch(/Secure/);
  });

  it('refuses a bad token without a session', async () => {
    const b = new Browser(h);
    const res = await b.signInWithToken('not-a-token');
    expect(res.status).toBe(401);
    expect(b.cookies.has('fg_console')).toBe(false);
    expect(await res.text()).not.toContain('not-a-token');
  });

  it('refuses a service-account key: keys never manage a workspace', async () => {
    const key = await h.createServiceAccount('ws-b', ['workspace.full'], 'full');
    const b = new Browser(h);
    const res = await b.signInWithToken(key.apiKey);
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain(key.apiKey);
    expect(b.cookies.has('fg_console')).toBe(false);
  });

  it('refuses a form post without the CSRF token and changes nothing', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const before = await accountsOf('ws-a');
    const res = await b.fetch('POST', '/console/w/ws-a/service-accounts', {
      name: 'csrf',
      capabilities: 'flows.read',
    });
    expect(res.status).toBe(403);
    const wrong = await b.fetch('POST', '/console/w/ws-a/service-accounts', {
      _csrf: 'x'.repeat(43),
      name: 'csrf',
      capabilities: 'flows.read',
    });
    expect(wrong.status).toBe(403);
    expect(await accountsOf('ws-a')).toEqual(before);
  });

  it('creates an account and a key shown once, revokes it, and the MCP endpoint refuses it', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    await b.page('/console/w/ws-a/keys');
    const created = await b.fetch('POST', '/console/w/ws-a/service-accounts', {
      _csrf: b.csrf,
      name: 'console-agent',
      capabilities: ['flows.read', 'runs.read'],
    });
    expect(created.status).toBe(303);
    const sa = (await accountsOf('ws-a')).find((a) => a.name === 'console-agent') as unknown as {
      serviceAccountId: string;
      capabilities: string[];
    };
    expect(sa.capabilities).toEqual(['flows.read', 'runs.read']);
    const keyRes = await b.fetch('POST', `/console/w/ws-a/service-accounts/${sa.serviceAccountId}/keys`, {
      _csrf: b.csrf,
      name: 'laptop',
      expiresOn: '2999-01-01',
    });
    expect(keyRes.status).toBe(200);
    expect(keyRes.headers.get('cache-control')).toBe('no-store');
    const html = await keyRes.text();
    const apiKey = /id="new-key-value" readonly="" value="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(apiKey).toMatch(/^fgk_/);
    const mcp = (token: string) =>
      h.request('POST', '/api/workspaces/ws-a/mcp', {
        token,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      });
    expect((await mcp(apiKey)).status).toBe(200);
    // Shown once: the list page never carries it again.
    const again = await b.page('/console/w/ws-a/keys');
    expect(again.html).not.toContain(apiKey);
    expect(again.html).toContain('<td>2999-01-01 00:00:00Z</td>');
    const keyId = /Revoke key (fgk_[A-Za-z0-9]+|[A-Za-z0-9_]+)/.exec(again.html)?.[1] ?? '';
    expect(keyId).not.toBe('');
    const revoke = await b.fetch(
      'POST',
      `/console/w/ws-a/service-accounts/${sa.serviceAccountId}/keys/${keyId}/revoke`,
      {
        _csrf: b.csrf,
      },
    );
    expect(revoke.status).toBe(303);
    expect((await mcp(apiKey)).status).toBe(401);
  });

  it('keeps a workspace-A admin out of workspace B (403, nothing changed)', async () => {
    const code = await createSignInCode(h.db.db, 'ws-a');
    const b = new Browser(h);
    const res = await b.signInWithCode(code);
    expect(res.status).toBe(303);
    expect((await b.page('/console/w/ws-a/keys')).res.status).toBe(200);
    const before = await accountsOf('ws-b');
    for (const path of [
      '/console/w/ws-b/keys',
      '/console/w/ws-b/runs',
      '/console/w/ws-b/audit',
      '/console/w/ws-b/policy',
      '/console/w/ws-b/connect',
      '/console/w/ws-b/connections',
      '/console/w/ws-b/flows',
      '/console/workspaces',
    ]) {
      const page = await b.page(path);
      expect(page.res.status, path).toBe(403);
      expect(page.html, path).not.toContain('full');
    }
    const post = await b.fetch('POST', '/console/w/ws-b/service-accounts', {
      _csrf: b.csrf,
      name: 'intruder',
      capabilities: 'flows.read',
    });
    expect(post.status).toBe(403);
    expect(await accountsOf('ws-b')).toEqual(before);
    // The code was one-time.
    const reuse = await new Browser(h).signInWithCode(code);
    expect(reuse.status).toBe(401);
  });

  it('creates a workspace from the operator form; bad input and a missing CSRF token change nothing', async () => {
    const ids = async () => (await repos.listWorkspaces(h.db.db, { limit: 200 })).map((w) => w.id).sort();
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const { html } = await b.page('/console/workspaces');
    expect(html).toContain('action="/console/workspaces"');
    const before = await ids();
    const noCsrf = await b.fetch('POST', '/console/workspaces', { id: 'ws-new', name: 'New' });
    expect(noCsrf.status).toBe(403);
    expect(await ids()).toEqual(before);
    const bad = await b.fetch('POST', '/console/workspaces', { _csrf: b.csrf, id: 'Bad Id!', name: 'New' });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(badHtml).toContain('request body is invalid: id:');
    // What was typed stays in the form.
    expect(badHtml).toContain('value="Bad Id!"');
    expect(await ids()).toEqual(before);
    const taken = await b.fetch('POST', '/console/workspaces', { _csrf: b.csrf, id: 'ws-a', name: 'Again' });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain('workspace ws-a already exists');
    expect(await ids()).toEqual(before);
    const created = await b.fetch('POST', '/console/workspaces', {
      _csrf: b.csrf,
      id: 'ws-new',
      name: 'New one',
    });
    expect(created.status, await created.clone().text()).toBe(303);
    expect(created.headers.get('location')).toBe('/console/workspaces?done=ws-created');
    expect(await ids()).toEqual([...before, 'ws-new'].sort());
    // The admin API sees it: an operator can open it, and it is empty.
    expect(await accountsOf('ws-new')).toEqual([]);
    const listed = await b.page('/console/workspaces?done=ws-created');
    expect(listed.html).toContain('Workspace created.');
    expect(listed.html).toContain('New one');
  });

  it('refuses workspace creation to a workspace admin (403, nothing created)', async () => {
    const ids = async () => (await repos.listWorkspaces(h.db.db, { limit: 200 })).map((w) => w.id).sort();
    const b = new Browser(h);
    await b.signInWithCode(await createSignInCode(h.db.db, 'ws-a'));
    await b.page('/console/w/ws-a/keys');
    expect(b.csrf).not.toBe('');
    const before = await ids();
    const res = await b.fetch('POST', '/console/workspaces', { _csrf: b.csrf, id: 'ws-admin', name: 'Mine' });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('this action needs the operator token');
    expect(await ids()).toEqual(before);
  });

  it('signs out by revoking the session server-side', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const id = b.cookies.get('fg_console') ?? '';
    await b.page('/console/w/ws-a/keys');
    const out = await b.fetch('POST', '/console/sign-out', { _csrf: b.csrf });
    expect(out.status).toBe(303);
    // Replaying the old cookie no longer works.
    const replay = new Browser(h);
    replay.cookies.set('fg_console', id);
    const res = await replay.fetch('GET', '/console/w/ws-a/keys');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in');
  });

  it('previews exactly the tools/list a key of the account gets with those headers, policy included', async () => {
    const key = await h.createServiceAccount('ws-a', ['flows.read', 'runs.read'], 'previewed');
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const listed = async (headers: Record<string, string>) => {
      const res = await h.request('POST', '/api/workspaces/ws-a/mcp', {
        token: key.apiKey,
        headers: { accept: 'application/json, text/event-stream', ...headers },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      });
      const body = (await res.json()) as { result: { tools: { name: string }[] } };
      return body.result.tools.map((t) => t.name);
    };
    const previewed = async (headers: Record<string, string>) => {
      const query = new URLSearchParams({ sa: key.serviceAccountId, ...headers }).toString();
      const { res, html } = await b.page(`/console/w/ws-a/policy?${query}`);
      expect(res.status).toBe(200);
      const list = /<ul class="mono" id="visible-tools">(.*?)<\/ul>/s.exec(html)?.[1] ?? '';
      return [...list.matchAll(/<li>([^<]+)<\/li>/g)].map((m) => m[1]);
    };
    const narrowed = { 'x-mcp-exclude-tools': 'search_flows' };
    const before = await listed(narrowed);
    expect(before.length).toBeGreaterThan(1);
    expect(before).not.toContain('search_flows');
    expect(await previewed(narrowed)).toEqual(before);
    const disabled = before[0] as string;
    const put = await h.request('PUT', '/api/workspaces/ws-a/mcp-policy', {
      body: { disabledTools: [disabled] },
    });
    expect(put.status).toBe(200);
    const after = await listed(narrowed);
    expect(after).toEqual(before.filter((t) => t !== disabled));
    expect(await previewed(narrowed)).toEqual(after);
    const { html } = await b.page(`/console/w/ws-a/policy?sa=${key.serviceAccountId}`);
    expect(html).toContain('workspace_disabled_tool');
    await h.request('PUT', '/api/workspaces/ws-a/mcp-policy', { body: { disabledTools: [] } });
  });

  const policyOf = async (ws: string) => {
    const res = await h.request('GET', `/api/workspaces/${ws}/mcp-policy`);
    expect(res.status).toBe(200);
    const { updatedAt: _, ...rest } = (await res.json()) as Record<string, unknown>;
    return rest;
  };

  it('sets the workspace MCP policy from the form, and the preview follows it', async () => {
    const key = await h.createServiceAccount('ws-a', ['workspace.full'], 'policy-form');
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const visible = async () => {
      const { html } = await b.page(`/console/w/ws-a/policy?sa=${key.serviceAccountId}`);
      const list = /<ul class="mono" id="visible-tools">(.*?)<\/ul>/s.exec(html)?.[1] ?? '';
      return [...list.matchAll(/<li>([^<]+)<\/li>/g)].map((m) => m[1] as string);
    };
    const before = await visible();
    expect(before).toContain('search_flows');
    expect(before).toContain('release_flow');
    const res = await b.fetch('POST', '/console/w/ws-a/policy', {
      _csrf: b.csrf,
      readOnly: 'true',
      disabledTools: 'search_flows',
      allowedOrigins: 'https://app.example.com\nhttp://localhost:3000',
      allowedIps: '',
      rateLimitPerMinute: '120',
      runsPerMonth: '500',
      llmTokensPerMonth: ' 2000000 ',
      toolCallsPerDay: '',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/w/ws-a/policy?done=policy-saved');
    expect(await policyOf('ws-a')).toEqual({
      readOnly: true,
      disabledTools: ['search_flows'],
      allowedOrigins: ['https://app.example.com', 'http://localhost:3000'],
      allowedIps: [],
      rateLimitPerMinute: 120,
      quotas: { runsPerMonth: 500, llmTokensPerMonth: 2_000_000, toolCallsPerDay: null },
    });
    const { html } = await b.page('/console/w/ws-a/policy?done=policy-saved');
    expect(html).toContain('Policy saved.');
    expect(html).toMatch(
      /<th scope="row">LLM tokens per month<\/th><td>2,000,000; 0 used, resets \d{4}-\d\d-01T00:00:00\.000Z<\/td>/,
    );
    expect(html).toContain('<th scope="row">MCP tool calls per day</th><td>no quota</td>');
    expect(html).toMatch(/name="runsPerMonth" inputmode="numeric" value="500"/);
    expect(html).toMatch(/name="readOnly" value="true" checked/);
    expect(html).toMatch(/name="disabledTools" value="search_flows" checked/);
    const after = await visible();
    expect(after.length).toBeLessThan(before.length);
    expect(after).not.toContain('search_flows');
    expect(after).not.toContain('release_flow');
    // Back to the defaults through the same form: nothing checked, fields empty.
    const reset = await b.fetch('POST', '/console/w/ws-a/policy', {
      _csrf: b.csrf,
      allowedOrigins: '',
      allowedIps: '',
      rateLimitPerMinute: '',
    });
    expect(reset.status).toBe(303);
    expect(await policyOf('ws-a')).toEqual({
      readOnly: false,
      disabledTools: [],
      allowedOrigins: [],
      allowedIps: [],
      rateLimitPerMinute: null,
      quotas: { runsPerMonth: null, llmTokensPerMonth: null, toolCallsPerDay: null },
    });
    expect(await visible()).toEqual(before);
  });

  it('refuses a policy post without the CSRF token, and shows the API error for bad input; nothing changes', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    await b.page('/console/w/ws-a/policy');
    const before = await policyOf('ws-a');
    const noCsrf = await b.fetch('POST', '/console/w/ws-a/policy', {
      readOnly: 'true',
      disabledTools: 'search_flows',
    });
    expect(noCsrf.status).toBe(403);
    expect(await policyOf('ws-a')).toEqual(before);
    const badCidr = await b.fetch('POST', '/console/w/ws-a/policy', {
      _csrf: b.csrf,
      readOnly: 'true',
      allowedIps: '10.0.0.0/99',
      rateLimitPerMinute: '60',
    });
    expect(badCidr.status).toBe(400);
    const page = await badCidr.text();
    expect(page).toContain('request body is invalid: allowedIps.0: must be an IP address or CIDR range');
    // The form keeps what was typed so it can be corrected.
    expect(page).toContain('10.0.0.0/99</textarea>');
    expect(await policyOf('ws-a')).toEqual(before);
    const badRate = await b.fetch('POST', '/console/w/ws-a/policy', {
      _csrf: b.csrf,
      rateLimitPerMinute: 'lots',
    });
    expect(badRate.status).toBe(400);
    expect(await badRate.text()).toMatch(/request body is invalid: rateLimitPerMinute: [^<]+/);
    expect(await policyOf('ws-a')).toEqual(before);
    for (const typed of ['0', '-1', '1.5', 'lots']) {
      const badQuota = await b.fetch('POST', '/console/w/ws-a/policy', {
        _csrf: b.csrf,
        runsPerMonth: typed,
      });
      expect(badQuota.status, typed).toBe(400);
      expect(await badQuota.text()).toContain(
        'request body is invalid: quotas.runsPerMonth: must be a positive integer or null (no quota)',
      );
      expect(await policyOf('ws-a')).toEqual(before);
    }
  });

  it('renders every client config for the chosen variable, exactly as `flowgate mcp config` does', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const decodeHtml = (t: string) =>
      t
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&quot;', '"')
        .replaceAll('&#39;', "'")
        .replaceAll('&amp;', '&');
    const { res, html } = await b.page('/console/w/ws-a/connect?var=ACME_MCP_KEY');
    expect(res.status).toBe(200);
    const areas = [...html.matchAll(/<textarea id="config-(\d+)"[^>]*>([^<]*)<\/textarea>/g)];
    expect(areas).toHaveLength(PROVIDERS.length);
    PROVIDERS.forEach((provider, i) => {
      const expected = renderConfig({
        provider,
        transport: 'http',
        workspaceId: 'ws-a',
        apiUrl: 'http://127.0.0.1:8787',
        tokenEnvVar: 'ACME_MCP_KEY',
        narrowing: NO_FLAGS,
      });
      expect(decodeHtml(areas[i]?.[2] ?? '').trim(), provider).toBe(expected.content.trim());
    });
    const bad = await b.page('/console/w/ws-a/connect?var=$(rm%20-rf)');
    expect(bad.html).toContain('Not a variable name; showing FLOWGATE_TOKEN.');
    expect(bad.html).not.toContain('rm -rf');
  });

  it('creates, rotates, checks and disables a connection without ever rendering its secret', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    await b.page('/console/w/ws-a/connections');
    const created = await b.fetch('POST', '/console/w/ws-a/connections', {
      _csrf: b.csrf,
      name: 'crm',
      type: 'http-api',
      baseUrl: 'http://127.0.0.1:9/crm',
      authType: 'bearer',
      secret: 'first-secret-value-123',
    });
    expect(created.status).toBe(303);
    const list = await h.request('GET', '/api/workspaces/ws-a/connections');
    const conn = (
      (await list.json()) as { items: { connectionId: string; name: string; auth: { type: string } }[] }
    ).items[0];
    expect(conn?.name).toBe('crm');
    expect(conn?.auth.type).toBe('bearer');
    const id = conn?.connectionId ?? '';
    const rotated = await b.fetch('POST', `/console/w/ws-a/connections/${id}/rotate`, {
      _csrf: b.csrf,
      secret: 'second-secret-value-456',
    });
    expect(rotated.status).toBe(303);
    const checked = await b.fetch('POST', `/console/w/ws-a/connections/${id}/check`, { _csrf: b.csrf });
    expect(checked.status).toBe(200);
    const checkedHtml = await checked.text();
    expect(checkedHtml).toContain('crm: unhealthy');
    const disabled = await b.fetch('POST', `/console/w/ws-a/connections/${id}/disable`, { _csrf: b.csrf });
    expect(disabled.status).toBe(303);
    const { html } = await b.page('/console/w/ws-a/connections');
    expect(html).toContain('Enable crm');
    for (const page of [html, checkedHtml]) {
      expect(page).not.toContain('first-secret-value-123');
      expect(page).not.toContain('second-secret-value-456');
    }
  });

  it('creates an mcp-server with fixed headers and shows what its check found', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    await b.page('/console/w/ws-a/connections');
    const refused = await b.fetch('POST', '/console/w/ws-a/connections', {
      _csrf: b.csrf,
      name: 'remote-tools',
      type: 'mcp-server',
      baseUrl: 'https://mcp.example.test/mcp',
      authType: 'none',
      headers: 'X-Session-Token: abc',
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('X-Session-Token looks like a credential');
    const created = await b.fetch('POST', '/console/w/ws-a/connections', {
      _csrf: b.csrf,
      name: 'remote-tools',
      type: 'mcp-server',
      baseUrl: 'https://mcp.example.test/mcp',
      authType: 'none',
      headers: 'X-Tenant: acme-console\r\n\r\nX-Region: eu',
    });
    expect(created.status).toBe(303);
    const list = (await (await h.request('GET', '/api/workspaces/ws-a/connections?limit=200')).json()) as {
      items: { connectionId: string; name: string }[];
    };
    const id = list.items.find((c) => c.name === 'remote-tools')?.connectionId ?? '';
    h.deps.workspaceDeps.mcpCheck = async () => ({
      protocolVersion: '2025-06-18',
      serverName: 'remote',
      serverVersion: '1.2',
      tools: ['a', 'b', 'c'],
    });
    try {
      const checked = await b.fetch('POST', `/console/w/ws-a/connections/${id}/check`, { _csrf: b.csrf });
      const html = await checked.text();
      expect(html).toContain('remote-tools: healthy');
      expect(html).toContain('MCP 2025-06-18, remote, 3 tools');
      expect(html).toContain('headers: X-Region, X-Tenant');
      expect(html).toContain('MCP 2025-06-18 · remote 1.2 · 3 tools');
      expect(html).not.toContain('acme-console');
    } finally {
      delete h.deps.workspaceDeps.mcpCheck;
    }
  });

  it('releases flow versions and rolls back, with flow-authored text escaped', async () => {
    const hostile = '<script>alert(1)</script>';
    const edn = (EXAMPLE_FLOWS['daily-report'] as string).replace(
      /:description "Fetches a day's sales figures and renders them as an HTML report\."/,
      `:description "${hostile} report"`,
    );
    expect(edn).toContain(hostile);
    const save = (text: string) =>
      h.request('PUT', '/api/workspaces/ws-a/flows/report/draft', {
        body: text.replace(':slug :daily-report', ':slug :report'),
        headers: { 'content-type': 'application/edn' },
      });
    expect((await save(edn)).status).toBe(200);
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const first = await b.page('/console/w/ws-a/flows/report');
    expect(first.res.status).toBe(200);
    expect(first.html).not.toContain(hostile);
    expect(first.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; report');
    const list = await b.page('/console/w/ws-a/flows');
    expect(list.html).not.toContain(hostile);
    expect(list.html).toContain('/console/w/ws-a/flows/report');
    expect(list.html).toContain('No installations.');
    const release = (form: Record<string, string>) =>
      b.fetch('POST', '/console/w/ws-a/flows/report/release', { _csrf: b.csrf, ...form });
    expect((await release({ releaseNote: 'first' })).status).toBe(303);
    expect((await save(edn.replace('"Daily sales report"', '"Daily sales report, v2"'))).status).toBe(200);
    await b.page('/console/w/ws-a/flows/report');
    expect((await release({})).status).toBe(303);
    const live = async () => {
      const res = await h.request('GET', '/api/workspaces/ws-a/flows/report');
      return ((await res.json()) as { liveVersion: number }).liveVersion;
    };
    expect(await live()).toBe(2);
    const { html } = await b.page('/console/w/ws-a/flows/report');
    expect(html).toContain('Roll back to v1');
    const diff = await b.page('/console/w/ws-a/flows/report?from=1&to=2');
    expect(diff.html).toContain('\n- :name &quot;Daily sales report&quot;\n');
    expect(diff.html).toContain('\n+ :name &quot;Daily sales report, v2&quot;\n');
    expect(diff.html).not.toContain(hostile);
    expect((await b.page('/console/w/ws-a/flows/report?from=1&to=9')).html).toContain('no such version');
    expect((await release({ version: '1' })).status).toBe(303);
    expect(await live()).toBe(1);
    // Trust covers exactly the live text, shown in full (escaped) before the opt-in.
    const before = await b.page('/console/w/ws-a/flows/report');
    expect(before.html).toContain('Trust this text (v1)');
    expect(before.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; report');
    const trust = await b.fetch('POST', '/console/w/ws-a/flows/report/trust', {
      _csrf: b.csrf,
      trust: 'true',
    });
    expect(trust.status).toBe(303);
    const flowRow = await h.request('GET', '/api/workspaces/ws-a/flows/report');
    expect(((await flowRow.json()) as { trustMetadata: boolean }).trustMetadata).toBe(true);
    expect((await b.page('/console/w/ws-a/flows/report')).html).toContain('Stop trusting this text');
    // Releasing v2 again leaves the opt-in pinned to v1's text: the page says untrusted.
    expect((await release({ version: '2' })).status).toBe(303);
    expect((await b.page('/console/w/ws-a/flows/report')).html).toContain('Trust this text (v2)');
    expect((await release({ version: '1' })).status).toBe(303);
    expect((await b.fetch('POST', '/console/w/ws-a/flows/report/release', { version: '2' })).status).toBe(
      403,
    );
    expect(await live()).toBe(1);
  });

  it('refuses expired sessions, and each new session deletes those expired over a day ago', async () => {
    const operator = { principal: { kind: 'operator' as const, id: 'operator' as const }, workspaces: ['*'] };
    const day = 24 * 60 * 60 * 1000;
    const stale = await createSession(h.db.db, operator, new Date(Date.now() - 3 * day));
    const recent = await createSession(h.db.db, operator, new Date(Date.now() - 9 * 60 * 60 * 1000));
    for (const id of [stale.id, recent.id]) {
      const b = new Browser(h);
      b.cookies.set('fg_console', id);
      const res = await b.fetch('GET', '/console/w/ws-a/keys');
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/console/sign-in');
    }
    await new Browser(h).signInWithToken(TEST_ADMIN_TOKEN);
    const row = (id: string) =>
      repos.getConsoleSession(h.db.db, hashConsoleSecret(id), 'session', new Date(0));
    expect(await row(stale.id)).toBeNull();
    expect(await row(recent.id)).not.toBeNull();
  });

  it('filters the audit log by action, outcome and time', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const rows = async (query: string) => {
      const { res, html } = await b.page(`/console/w/ws-a/audit?${query}`);
      expect(res.status).toBe(200);
      return [...html.matchAll(/<td class="mono">([a-z_.]+)/g)].map((m) => m[1]);
    };
    await expect.poll(() => rows('tool=service_accounts.create'), { timeout: 5_000 }).not.toEqual([]);
    const created = await rows('tool=service_accounts.create&since=2000-01-01T00:00&until=2999-01-01T00:00');
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created)).toEqual(new Set(['service_accounts.create']));
    expect(await rows('tool=service_accounts.create&since=2999-01-01T00:00')).toEqual([]);
    expect(await rows('tool=service_accounts.create&until=2000-01-01T00:00')).toEqual([]);
    expect(await rows('tool=service_accounts.create&outcome=blocked')).toEqual([]);
    const { html } = await b.page('/console/w/ws-a/audit?since=2999-01-01T00:00');
    expect(html).toContain('No audit entries match these filters');
  });

  it('shows a blocked call with its blockers on the audit page', async () => {
    const key = await h.createServiceAccount('ws-a', ['flows.read'], 'reader');
    const call = await h.request('POST', '/api/workspaces/ws-a/mcp', {
      token: key.apiKey,
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'call_flow_tool', arguments: { flow_slug: 'x', tool_name: 'y', input: {} } },
      },
    });
    expect(call.status).toBe(200);
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const page = async () => (await b.page(`/console/w/ws-a/audit?key=${key.keyId}&outcome=blocked`)).html;
    await expect.poll(page, { timeout: 5_000 }).toContain('call_flow_tool');
    const html = await page();
    expect(html).toContain('missing_service_account_capabilities');
    expect(html).toContain('flows.run');
  });

  it('serves the stylesheet under a content hash with long caching', async () => {
    const res = await h.app.request(`${BASE}${STYLESHEET.path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-type')).toContain('text/css');
    expect(STYLESHEET.path).toMatch(/^\/console\/assets\/console\.[0-9a-f]{12}\.css$/);
  });
});

describe('admin console runs without a worker', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({
      env: { FLOWGATE_WORKER: 'false', FLOWGATE_TRUST_PROXY: '1', FLOWGATE_RATE_LIMIT_IP_PER_MIN: '5' },
    });
    await h.createWorkspace('ws-runs');
    const saved = await h.request('PUT', '/api/workspaces/ws-runs/flows/report/draft', {
      body: (EXAMPLE_FLOWS['daily-report'] as string).replace(':slug :daily-report', ':slug :report'),
      headers: { 'content-type': 'application/edn' },
    });
    expect(saved.status).toBe(200);
    expect(
      (await h.request('POST', '/api/workspaces/ws-runs/flows/report/release', { body: {} })).status,
    ).toBe(200);
    const conn = await h.request('POST', '/api/workspaces/ws-runs/connections', {
      body: { name: 'sales', type: 'http-api', baseUrl: 'http://127.0.0.1:9/sales', auth: { type: 'none' } },
    });
    const { connectionId } = (await conn.json()) as { connectionId: string };
    const bound = await h.request('PUT', '/api/workspaces/ws-runs/flows/report/bindings', {
      body: { slots: { sales: connectionId } },
    });
    expect(bound.status).toBe(200);
  });
  afterAll(async () => {
    await h.close();
  });

  it('starts a run from the form, lists it by status and flow, and cancels it', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    await b.page('/console/w/ws-runs/runs');
    const bad = await b.fetch('POST', '/console/w/ws-runs/runs', {
      _csrf: b.csrf,
      flow: 'report',
      input: '[1',
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Input must be a JSON object.');
    const started = await b.fetch('POST', '/console/w/ws-runs/runs', {
      _csrf: b.csrf,
      flow: 'report',
      input: '{}',
    });
    expect(started.status, await started.clone().text()).toBe(303);
    const runId = /\/runs\/(run_[A-Za-z0-9]+)\?done=run-started$/.exec(
      started.headers.get('location') ?? '',
    )?.[1];
    expect(runId).toBeDefined();
    const queued = await b.page('/console/w/ws-runs/runs?status=queued&flow=report');
    expect(queued.html).toContain(`/console/w/ws-runs/runs/${runId}`);
    // Still running: the page refreshes itself.
    expect(queued.html).toContain('http-equiv="refresh"');
    const detail = await b.page(`/console/w/ws-runs/runs/${runId}`);
    expect(detail.html).toContain('Cancel run');
    const cancel = await b.fetch('POST', `/console/w/ws-runs/runs/${runId}/cancel`, { _csrf: b.csrf });
    expect(cancel.status).toBe(303);
    const run = await h.request('GET', `/api/workspaces/ws-runs/runs/${runId}`);
    expect(((await run.json()) as { status: string }).status).toBe('cancelled');
    expect((await b.page('/console/w/ws-runs/runs?status=queued')).html).not.toContain(runId as string);
  });

  it('a start past the runsPerMonth quota shows the quota, its limit and when it resets', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const countRuns = async () =>
      ((await (await h.request('GET', '/api/workspaces/ws-runs/runs')).json()) as { items: unknown[] }).items
        .length;
    // A quota counts from when it is set: the run above is not counted.
    const put = await h.request('PUT', '/api/workspaces/ws-runs/mcp-policy', {
      body: { quotas: { runsPerMonth: 1 } },
    });
    expect(put.status).toBe(200);
    await b.page('/console/w/ws-runs/runs');
    const form = { _csrf: b.csrf, flow: 'report', input: '{}' };
    expect((await b.fetch('POST', '/console/w/ws-runs/runs', form)).status).toBe(303);
    const before = await countRuns();
    const refused = await b.fetch('POST', '/console/w/ws-runs/runs', form);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(
      /This workspace used its quota of 1 run starts per month \(runsPerMonth\); it resets at \d{4}-\d\d-01T00:00:00\.000Z/,
    );
    expect(await countRuns()).toBe(before);
    await h.request('PUT', '/api/workspaces/ws-runs/mcp-policy', {
      body: { quotas: { runsPerMonth: null } },
    });
  });

  it('binds a flow slot to a connection through the flow page', async () => {
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    const conns = await h.request('GET', '/api/workspaces/ws-runs/connections');
    const sales =
      ((await conns.json()) as { items: { connectionId: string }[] }).items[0]?.connectionId ?? '';
    const { html } = await b.page('/console/w/ws-runs/flows/report');
    expect(html).toContain(`<option value="${sales}">sales</option>`);
    const bound = await b.fetch('POST', '/console/w/ws-runs/flows/report/bindings', {
      _csrf: b.csrf,
      slot: 'sales',
      connectionId: sales,
      target: 'draft',
    });
    expect(bound.status, await bound.clone().text()).toBe(303);
    const flow = await h.request('GET', '/api/workspaces/ws-runs/flows/report');
    const bindings = ((await flow.json()) as { bindings: { draft: Record<string, unknown> } }).bindings;
    expect(JSON.stringify(bindings.draft)).toContain(sales);
  });

  it('counts console requests against the client address, like /api', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await h.app.request(`${BASE}/console/sign-in`, {
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const other = await h.app.request(`${BASE}/console/sign-in`, {
      headers: { 'x-forwarded-for': '203.0.113.10' },
    });
    expect(other.status).toBe(200);
  });

  it('installs a public flow of another workspace and enables it', async () => {
    await h.createWorkspace('ws-src');
    const edn = [
      '{:slug :shared',
      ' :name "Shared"',
      ' :invocations {:default {:inputs [{:name :domain :type :string :required true}]}}',
      ' :interfaces {:mcp [{:tool-name "shared_tool" :invocation :default}]}',
      ' :discover {:public true}',
      ' :flow (flow/input)}',
    ].join('\n');
    const saved = await h.request('PUT', '/api/workspaces/ws-src/flows/shared/draft', {
      body: edn,
      headers: { 'content-type': 'application/edn' },
    });
    expect(saved.status).toBe(200);
    expect(
      (await h.request('POST', '/api/workspaces/ws-src/flows/shared/release', { body: {} })).status,
    ).toBe(200);
    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    await b.page('/console/w/ws-runs/flows');
    const missing = await b.fetch('POST', '/console/w/ws-runs/installations', {
      _csrf: b.csrf,
      sourceWorkspaceId: 'ws-src',
      flowSlug: 'nope',
      pinnedVersion: '',
    });
    expect(missing.status).toBe(404);
    const installed = await b.fetch('POST', '/console/w/ws-runs/installations', {
      _csrf: b.csrf,
      sourceWorkspaceId: 'ws-src',
      flowSlug: 'shared',
      pinnedVersion: '1',
    });
    expect(installed.status, await installed.clone().text()).toBe(303);
    const list = async () => {
      const res = await h.request('GET', '/api/workspaces/ws-runs/installations');
      return (
        (await res.json()) as { items: { installationId: string; enabled: boolean; pinnedVersion: number }[] }
      ).items;
    };
    const [inst] = await list();
    expect(inst?.pinnedVersion).toBe(1);
    // Nothing to bind, so it is enabled at once.
    expect(inst?.enabled).toBe(true);
    const { html } = await b.page('/console/w/ws-runs/flows');
    expect(html).toContain(`Disable installation ${inst?.installationId}`);
    const disabled = await b.fetch('POST', `/console/w/ws-runs/installations/${inst?.installationId}`, {
      _csrf: b.csrf,
      enabled: 'false',
    });
    expect(disabled.status, await disabled.clone().text()).toBe(303);
    expect((await list())[0]?.enabled).toBe(false);
    expect((await b.page('/console/w/ws-runs/flows')).html).toContain(
      `Enable installation ${inst?.installationId}`,
    );
  });

  it('binds an installation slot, pins its version and opts in to its metadata trust from its page', async () => {
    await h.createWorkspace('ws-pub');
    const saved = await h.request('PUT', '/api/workspaces/ws-pub/flows/enrich-company/draft', {
      body: EXAMPLE_FLOWS['enrich-company'] as string,
      headers: { 'content-type': 'application/edn' },
    });
    expect(saved.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      // Two versions to pin between (the second release of an unchanged draft reuses v1, so change a note).
      if (i === 1) {
        const again = await h.request('PUT', '/api/workspaces/ws-pub/flows/enrich-company/draft', {
          body: (EXAMPLE_FLOWS['enrich-company'] as string).replace('"Enrich company"', '"Enrich a company"'),
          headers: { 'content-type': 'application/edn' },
        });
        expect(again.status).toBe(200);
      }
      const released = await h.request('POST', '/api/workspaces/ws-pub/flows/enrich-company/release', {
        body: {},
      });
      expect(released.status).toBe(200);
    }
    const conn = await h.request('POST', '/api/workspaces/ws-runs/connections', {
      body: {
        name: 'crm-api',
        type: 'http-api',
        baseUrl: 'http://127.0.0.1:9/crm',
        auth: { type: 'bearer', secret: 'crm-secret-value' },
      },
    });
    expect(conn.status).toBe(201);
    const { connectionId } = (await conn.json()) as { connectionId: string };
    const install = await h.request('POST', '/api/workspaces/ws-runs/installations', {
      body: { sourceWorkspaceId: 'ws-pub', flowSlug: 'enrich-company', versionPolicy: 'track-latest' },
    });
    expect(install.status).toBe(201);
    const { installationId } = (await install.json()) as { installationId: string };
    const read = async () => {
      const res = await h.request('GET', '/api/workspaces/ws-runs/installations?limit=200');
      const items = ((await res.json()) as { items: Record<string, unknown>[] }).items;
      const {
        createdAt: _c,
        updatedAt: _u,
        ...rest
      } = items.find((x) => x.installationId === installationId) ?? {};
      return rest;
    };
    const initial = await read();
    expect(initial).toMatchObject({
      versionPolicy: 'track-latest',
      pinnedVersion: null,
      enabled: false,
      trustMetadata: false,
      slotBindings: {},
    });

    const b = new Browser(h);
    await b.signInWithToken(TEST_ADMIN_TOKEN);
    expect((await b.page('/console/w/ws-runs/flows')).html).toContain(
      `href="/console/w/ws-runs/installations/${installationId}"`,
    );
    const page = await b.page(`/console/w/ws-runs/installations/${installationId}`);
    expect(page.res.status).toBe(200);
    expect(page.html).toContain(`<option value="${connectionId}">crm-api</option>`);
    expect(page.html).not.toContain('crm-secret-value');
    // The opt-in covers exactly the text of the version it runs (track-latest: v2), shown in full before opting in.
    expect(page.html).toContain('Trust this text (v2)');
    expect(page.html).toContain(':name &quot;Enrich a company&quot;');
    expect(page.html).not.toContain(':name &quot;Enrich company&quot;');
    const base = `/console/w/ws-runs/installations/${installationId}`;

    // Without the CSRF token: refused, nothing changed.
    for (const [path, form] of [
      [`${base}/bindings`, { slot: 'crm', connectionId }],
      [`${base}/trust`, { trust: 'true' }],
      [`${base}/version`, { pinnedVersion: '1' }],
    ] as const) {
      expect((await b.fetch('POST', path, form)).status, path).toBe(403);
    }
    expect(await read()).toEqual(initial);

    // Bad values: the API's error on the installation's page, nothing changed.
    const badSlot = await b.fetch('POST', `${base}/bindings`, { _csrf: b.csrf, slot: 'nope', connectionId });
    expect(badSlot.status).toBe(400);
    const badSlotHtml = await badSlot.text();
    expect(badSlotHtml).toContain('slot bindings are invalid: slotBindings');
    expect(badSlotHtml).toContain('<h2>Slot bindings</h2>');
    const badConn = await b.fetch('POST', `${base}/bindings`, {
      _csrf: b.csrf,
      slot: 'crm',
      connectionId: 'conn_doesnotexist00',
    });
    expect(badConn.status).toBe(400);
    expect(await badConn.text()).toContain('slot bindings are invalid');
    const badPin = await b.fetch('POST', `${base}/version`, { _csrf: b.csrf, pinnedVersion: '99' });
    expect(badPin.status).toBe(404);
    expect(await badPin.text()).toContain('flow enrich-company has no public version 99');
    const notNumber = await b.fetch('POST', `${base}/version`, { _csrf: b.csrf, pinnedVersion: 'x' });
    expect(notNumber.status).toBe(400);
    expect(await notNumber.text()).toContain('request body is invalid: pinnedVersion');
    expect(await read()).toEqual(initial);

    // Each form changes exactly its own fields.
    const bound = await b.fetch('POST', `${base}/bindings`, { _csrf: b.csrf, slot: 'crm', connectionId });
    expect(bound.status, await bound.clone().text()).toBe(303);
    expect(bound.headers.get('location')).toBe(`${base}?done=inst-bound`);
    const afterBind = await read();
    expect(afterBind).toEqual({ ...initial, slotBindings: { crm: connectionId } });
    expect((await b.page(`${base}?done=inst-bound`)).html).toContain('<td>crm-api</td>');

    const pinned = await b.fetch('POST', `${base}/version`, { _csrf: b.csrf, pinnedVersion: '1' });
    expect(pinned.status, await pinned.clone().text()).toBe(303);
    const afterPin = await read();
    expect(afterPin).toEqual({ ...afterBind, versionPolicy: 'pinned', pinnedVersion: 1 });

    const trusted = await b.fetch('POST', `${base}/trust`, { _csrf: b.csrf, trust: 'true' });
    expect(trusted.status, await trusted.clone().text()).toBe(303);
    const afterTrust = await read();
    expect(afterTrust).toEqual({ ...afterPin, trustMetadata: true });
    const trustedRow = await repos.getInstallation(h.db.db, 'ws-runs', installationId);
    expect(trustedRow?.trustedMetadataSha256).toMatch(/^[0-9a-f]{64}$/);
    const trustedPage = (await b.page(`${base}?done=inst-trusted`)).html;
    expect(trustedPage).toContain('Stop trusting this text');
    expect(trustedPage).toContain('Trusted: models see the text below (v1)');
    expect(trustedPage).toContain(':name &quot;Enrich company&quot;');

    const latest = await b.fetch('POST', `${base}/version`, { _csrf: b.csrf, pinnedVersion: '' });
    expect(latest.status).toBe(303);
    expect(await read()).toEqual({ ...afterTrust, versionPolicy: 'track-latest', pinnedVersion: null });
    // It now runs v2, which nobody reviewed: untrusted although the flag is on, and the button re-pins.
    const movedOn = (await b.page(base)).html;
    expect(movedOn).toContain('Untrusted for now');
    expect(movedOn).toContain('Trust this text (v2)');
    expect(movedOn).toContain(':name &quot;Enrich a company&quot;');
    const untrusted = await b.fetch('POST', `${base}/trust`, { _csrf: b.csrf, trust: 'false' });
    expect(untrusted.status).toBe(303);
    expect(await read()).toEqual({
      ...afterTrust,
      versionPolicy: 'track-latest',
      pinnedVersion: null,
      trustMetadata: false,
    });
  });

  it("keeps a workspace admin from editing another workspace's installation (403, nothing changed)", async () => {
    const list = await h.request('GET', '/api/workspaces/ws-runs/installations?limit=200');
    const items = ((await list.json()) as { items: { installationId: string }[] }).items;
    const target = items[0]?.installationId ?? '';
    expect(target).not.toBe('');
    await h.createWorkspace('ws-other');
    const b = new Browser(h);
    await b.signInWithCode(await createSignInCode(h.db.db, 'ws-other'));
    await b.page('/console/w/ws-other/flows');
    expect((await b.page(`/console/w/ws-runs/installations/${target}`)).res.status).toBe(403);
    const post = await b.fetch('POST', `/console/w/ws-runs/installations/${target}/trust`, {
      _csrf: b.csrf,
      trust: 'true',
    });
    expect(post.status).toBe(403);
    const again = await h.request('GET', '/api/workspaces/ws-runs/installations?limit=200');
    expect(((await again.json()) as { items: unknown[] }).items).toEqual(items as unknown[]);
  });
});
