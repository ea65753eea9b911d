import { createConsoleSignInCode } from '@flowgate/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from './support/console-http.js';
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

const browser = () => new ConsoleClient(gw.url);

describe('console sign-in over HTTP', () => {
  it('sends a page request without a session to sign-in', async () => {
    const res = await browser().fetch('GET', `/console/w/${WS_A}/keys`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in');
  });

  it('signs in with the operator token: an HttpOnly strict cookie, pages and their stylesheet served', async () => {
    const b = browser();
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
      const b = browser();
      const res = await b.signIn('token', token);
      expect(res.status).toBe(401);
      expect(b.cookies.has('fg_console')).toBe(false);
      expect(await res.text()).not.toContain(token);
    }
  });

  it('trades a one-time code for a session of that workspace only, once', async () => {
    // The code is minted in the database the gateway runs on, as `flowgate dev` does for its banner link.
    const code = await createConsoleSignInCode(gw.db.db, WS_A);
    const b = browser();
    const res = await b.signIn('code', code);
    expect(res.status).toBe(303);
    expect((await b.page(`/console/w/${WS_A}/keys`)).res.status).toBe(200);
    expect((await b.page(`/console/w/${WS_B}/keys`)).res.status).toBe(403);
    const again = await browser().signIn('code', code);
    expect(again.status).toBe(401);
  });

  it('signs out by revoking the session server-side', async () => {
    const b = browser();
    await b.signIn('token', ADMIN_TOKEN);
    const id = b.cookies.get('fg_console') ?? '';
    await b.page(`/console/w/${WS_A}/keys`);
    expect(b.csrf).not.toBe('');
    const out = await b.fetch('POST', '/console/sign-out', { _csrf: b.csrf });
    expect(out.status).toBe(303);
    const replay = browser();
    replay.cookies.set('fg_console', id);
    const res = await replay.fetch('GET', `/console/w/${WS_A}/keys`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in');
  });
});
