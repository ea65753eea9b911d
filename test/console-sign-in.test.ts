import { createConsoleSignInCode } from '@flowgate/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from './support/gateway.js';

/**
 * Console sign-in over real HTTP against the gateway on each runtime (FLOWGATE_E2E_RUNTIME): the operator token and
 * a one-time code each become a session cookie, the pages and their hashed assets are served from the bundle, and
 * sign-out revokes the session in the database. The form-level details are covered in-process by console.test.ts.
 */

const WS_A = 'ws-console-a';
const WS_B = 'ws-console-b';
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS_A);
  await gw.createWorkspace(WS_B);
}, 120_000);

afterAll(async () => {
  await gw?.close();
});

/** A cookie jar and the last CSRF token, over fetch without following redirects. */
class Browser {
  cookies = new Map<string, string>();
  csrf = '';

  async fetch(method: string, path: string, form?: Record<string, string>): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const body = form ? new URLSearchParams(form).toString() : undefined;
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers,
      redirect: 'manual',
      ...(body ? { body } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      if (eq <= 0) continue;
      const name = (pair ?? '').slice(0, eq);
      const value = (pair ?? '').slice(eq + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  async page(path: string): Promise<{ res: Response; html: string }> {
    const res = await this.fetch('GET', path);
    const html = await res.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (csrf) this.csrf = csrf;
    return { res, html };
  }

  async signIn(field: 'token' | 'code', value: string): Promise<Response> {
    const query = field === 'code' ? `?code=${encodeURIComponent(value)}` : '';
    const { html } = await this.page(`/console/sign-in${query}`);
    const form = /name="_form" value="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(form).not.toBe('');
    return this.fetch('POST', '/console/sign-in', { _form: form, [field]: value });
  }
}

describe('console sign-in over HTTP', () => {
  it('sends a page request without a session to sign-in', async () => {
    const res = await new Browser().fetch('GET', `/console/w/${WS_A}/keys`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in');
  });

  it('signs in with the operator token: an HttpOnly strict cookie, pages and their stylesheet served', async () => {
    const b = new Browser();
    const res = await b.signIn('token', ADMIN_TOKEN);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console');
    const cookie = res.headers.getSetCookie().find((l) => l.startsWith('fg_console='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Max-Age=28800/);
    // Plain http on loopback: no Secure, or the browser would drop it.
    expect(cookie).not.toMatch(/Secure/);
    const sessionId = b.cookies.get('fg_console') ?? '';
    expect(sessionId.length).toBeGreaterThan(30);

    const { res: page, html } = await b.page('/console/workspaces');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(html).toContain(WS_A);
    expect(html).toContain(WS_B);
    expect(html).not.toContain(ADMIN_TOKEN);
    expect(html).not.toContain(sessionId);

    const href = /<link rel="stylesheet" href="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(href).toMatch(/^\/console\/assets\/console\.[0-9a-f]+\.css$/);
    const css = await b.fetch('GET', href);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await css.text()).length).toBeGreaterThan(100);
  });

  it('refuses a bad token and a service-account key without a session', async () => {
    const key = await gw.mintKey(WS_A, ['workspace.full'], 'not-an-operator');
    for (const token of ['not-a-token', key.apiKey]) {
      const b = new Browser();
      const res = await b.signIn('token', token);
      expect(res.status).toBe(401);
      expect(b.cookies.has('fg_console')).toBe(false);
      expect(await res.text()).not.toContain(token);
    }
  });

  it('trades a one-time code for a session of that workspace only, once', async () => {
    // The code is minted in the database the gateway runs on, as `flowgate dev` does for its banner link.
    const code = await createConsoleSignInCode(gw.db.db, WS_A);
    const b = new Browser();
    const res = await b.signIn('code', code);
    expect(res.status).toBe(303);
    expect((await b.page(`/console/w/${WS_A}/keys`)).res.status).toBe(200);
    expect((await b.page(`/console/w/${WS_B}/keys`)).res.status).toBe(403);
    const again = await new Browser().signIn('code', code);
    expect(again.status).toBe(401);
  });

  it('signs out by revoking the session server-side', async () => {
    const b = new Browser();
    await b.signIn('token', ADMIN_TOKEN);
    const id = b.cookies.get('fg_console') ?? '';
    await b.page(`/console/w/${WS_A}/keys`);
    expect(b.csrf).not.toBe('');
    const out = await b.fetch('POST', '/console/sign-out', { _csrf: b.csrf });
    expect(out.status).toBe(303);
    const replay = new Browser();
    replay.cookies.set('fg_console', id);
    const res = await replay.fetch('GET', `/console/w/${WS_A}/keys`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in');
  });
});
