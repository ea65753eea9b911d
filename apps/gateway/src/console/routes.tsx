/** @jsxImportSource hono/jsx */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { GatewayDeps, RouteInstaller } from '../app.js';
import type { AppEnv } from '../context.js';
import { ipRateLimit } from '../middleware/rate-limit.js';
import type { Refusal } from './api.js';
import { SCRIPT, STYLESHEET } from './assets.js';
import { type AdminClients, createAdminClients } from './inner.js';
import { type C, type Env, formText, frameOf, type PageKit, render } from './kit.js';
import { installAuditPage } from './pages/audit.js';
import { installConnectPage } from './pages/connect.js';
import { installConnectionsPages } from './pages/connections.js';
import { installFeedbackPage } from './pages/feedback.js';
import { installFlowsPages } from './pages/flows.js';
import { installKeysPages } from './pages/keys.js';
import { installPolicyPage } from './pages/policy.js';
import { installRunsPages } from './pages/runs.js';
import { installUsagePage } from './pages/usage.js';
import { installWorkspacesPage } from './pages/workspaces.js';
import {
  createSession,
  csrfToken,
  mayOpen,
  principalForToken,
  randomToken,
  readSession,
  redeemSignInCode,
  revokeSession,
  sameToken,
} from './session.js';
import { Notice, type PageFrame, SignInPage } from './views.js';

const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-src 'self'; " +
  "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'";

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const WS_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * A used or expired link strands a newcomer on this page, so it says how to get back in. No path of this host is
 * named: only the file name `flowgate dev` uses, relative to where it was started.
 */
const EXPIRED_LINK =
  'That sign-in link was already used or has expired (a link works once, within 10 minutes). ' +
  'Restart pnpm dev to print a new one, or sign in below with the operator token: the server’s ' +
  'FLOWGATE_ADMIN_TOKEN; under pnpm dev it is "adminToken" in .flowgate/dev-secrets.json ' +
  '(or in $FLOWGATE_DATA_DIR) in the directory it was started from.';

/** `Secure` everywhere but plain http on loopback (`flowgate dev`), where browsers would drop a Secure cookie. */
function secureCookies(c: Context): boolean {
  const url = new URL(c.req.url);
  return !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
}

const sessionCookie = (c: Context) => (secureCookies(c) ? '__Host-fg_console' : 'fg_console');

const formCookie = (c: Context) => (secureCookies(c) ? '__Host-fg_console_form' : 'fg_console_form');

function cookieOptions(c: Context, maxAge: number) {
  return {
    path: '/',
    httpOnly: true,
    secure: secureCookies(c),
    sameSite: 'Strict' as const,
    maxAge,
  };
}

function forbidden(c: C) {
  return render(
    c,
    frameOf(c, 'Not allowed', null, null),
    <>
      <h1>Not allowed</h1>
      <Notice kind="error">Your session does not grant access to this workspace.</Notice>
      <p>
        <a href="/console">Back to the console</a>
      </p>
    </>,
    403,
  );
}

export function consoleRoutes(
  app: Hono<AppEnv>,
  deps: GatewayDeps,
  clients: AdminClients = createAdminClients(deps),
) {
  const db = deps.db.db;
  const now = () => new Date();
  const console_ = app as unknown as Hono<Env>;

  const headers: MiddlewareHandler<Env> = async (c, next) => {
    await next();
    if (!c.res.headers.has('content-security-policy')) c.header('Content-Security-Policy', PAGE_CSP);
    if (!c.res.headers.has('x-frame-options')) c.header('X-Frame-Options', 'DENY');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    if (!c.res.headers.has('cache-control')) c.header('Cache-Control', 'no-store');
  };
  console_.use('/console', headers);
  console_.use('/console/*', headers);
  console_.use(
    '/console/*',
    bodyLimit({
      maxSize: 64 * 1024,
      onError: (c) => c.text('request body too large', 413),
    }),
  );

  // Every console request counts against the caller's address like /api does (sign-in tries tokens).
  const perIp = ipRateLimit({
    limiter: deps.rateLimiter,
    perMinute: deps.config.rateLimits.ipPerMinute,
    trustProxy: deps.config.trustProxy,
  });
  console_.use('/console', perIp);
  console_.use('/console/*', perIp);

  // --- assets -----------------------------------------------------------------------------------------------------
  for (const [asset, type] of [
    [STYLESHEET, 'text/css; charset=utf-8'],
    [SCRIPT, 'text/javascript; charset=utf-8'],
  ] as const) {
    console_.get(asset.path, (c) =>
      c.body(asset.body, 200, {
        'Content-Type': type,
        'Cache-Control': 'public, max-age=31536000, immutable',
      }),
    );
  }

  // --- sign-in ----------------------------------------------------------------------------------------------------
  const signInPage = (c: Context, code: string | null, error: string | null, status = 200) => {
    // Login CSRF: the form carries a random value that must match a SameSite=Strict cookie set with it.
    const formToken = randomToken();
    setCookie(c, formCookie(c), formToken, cookieOptions(c, 600));
    const frame: PageFrame = { title: 'Sign in', workspaceId: null, nav: null, csrf: null, operator: false };
    return render(c, frame, <SignInPage formToken={formToken} code={code} error={error} />, status);
  };

  console_.get('/console/sign-in', (c) => {
    const code = c.req.query('code');
    return signInPage(c, code && code.length <= 128 ? code : null, null);
  });

  console_.post('/console/sign-in', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const expected = getCookie(c, formCookie(c)) ?? '';
    if (!expected || !sameToken(formText(form, '_form'), expected)) {
      return signInPage(c, null, 'The sign-in form expired; please try again.', 403);
    }
    const code = formText(form, 'code');
    const at = now();
    let session: { id: string; expiresAt: Date } | null = null;
    if (code) {
      session = await redeemSignInCode(db, code, at);
      if (!session) return signInPage(c, null, EXPIRED_LINK, 401);
    } else {
      const token = formText(form, 'token');
      const result = token ? await principalForToken(deps.authenticator, token) : null;
      if (!result?.ok) return signInPage(c, null, result?.message ?? 'Enter a token.', 401);
      session = await createSession(db, result, at);
    }
    const maxAge = Math.max(1, Math.floor((session.expiresAt.getTime() - at.getTime()) / 1000));
    setCookie(c, sessionCookie(c), session.id, cookieOptions(c, maxAge));
    deleteCookie(c, formCookie(c), { path: '/', secure: secureCookies(c) });
    return c.redirect('/console', 303);
  });

  // --- session guard ------------------------------------------------------------------------------------------------
  const requireSession: MiddlewareHandler<Env> = async (c, next) => {
    const id = getCookie(c, sessionCookie(c));
    const session = id ? await readSession(db, id, now()) : null;
    if (!session) {
      if (c.req.method === 'GET' || c.req.method === 'HEAD') return c.redirect('/console/sign-in', 303);
      return c.text('sign in first', 401);
    }
    c.set('consoleSession', session);
    c.set('csrf', csrfToken(deps.cursorKey, session));
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody({ all: true });
      if (!sameToken(formText(form, '_csrf'), c.get('csrf'))) {
        return c.text('missing or wrong CSRF token; reload the page and try again', 403);
      }
    }
    await next();
  };
  const requireWorkspace: MiddlewareHandler<Env> = async (c, next) => {
    const ws = c.req.param('ws') ?? '';
    if (!WS_PATTERN.test(ws) || !mayOpen(c.get('consoleSession'), ws)) return forbidden(c);
    await next();
  };
  console_.use('/console', requireSession);
  console_.use('/console/sign-out', requireSession);
  console_.use('/console/workspaces', requireSession);
  console_.use('/console/w/:ws/*', requireSession, requireWorkspace);
  console_.use('/console/w/:ws', requireSession, requireWorkspace);

  console_.post('/console/sign-out', async (c) => {
    const id = getCookie(c, sessionCookie(c));
    if (id) await revokeSession(db, id, now());
    deleteCookie(c, sessionCookie(c), { path: '/', secure: secureCookies(c) });
    return c.redirect('/console/sign-in', 303);
  });

  console_.get('/console', (c) => {
    const session = c.get('consoleSession');
    if (session.principal.kind === 'operator') return c.redirect('/console/workspaces', 303);
    return c.redirect(`/console/w/${session.workspaces[0]}/keys`, 303);
  });
  console_.get('/console/w/:ws', (c) => c.redirect(`/console/w/${c.req.param('ws')}/keys`, 303));

  const api = (c: C) => clients(c as unknown as Context<AppEnv>, c.get('consoleSession'));
  const wsParam = (c: C) => ({ ws: c.req.param('ws') ?? '' });
  const failed = (c: C, title: string, nav: PageFrame['nav'], refused: Refusal) =>
    render(
      c,
      frameOf(c, title, c.req.param('ws') ?? null, nav),
      <>
        <h1>{title}</h1>
        <Notice kind="error">{refused.message}</Notice>
      </>,
      refused.status >= 400 ? refused.status : 500,
    );

  const kit: PageKit = { app: console_, deps, api, wsParam, failed };
  installWorkspacesPage(kit);
  installKeysPages(kit);
  installRunsPages(kit);
  installUsagePage(kit);
  installAuditPage(kit);
  installFeedbackPage(kit);
  installConnectionsPages(kit);
  installFlowsPages(kit);
  installConnectPage(kit);
  installPolicyPage(kit);
}

/** Mounts the admin console at /console (docs in README, "Admin console"). */
export const installConsole: RouteInstaller = (app, deps) => consoleRoutes(app, deps);
