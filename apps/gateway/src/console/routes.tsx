/** @jsxImportSource hono/jsx */
import { CAPABILITIES } from '@flowgate/auth';
import {
  DEFAULT_TOKEN_ENV_VAR,
  isEnvVarName,
  NO_FLAGS,
  PROVIDERS,
  renderConfig,
  TRANSPORTS,
  type Transport,
} from '@flowgate/client-config';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { GatewayDeps, RouteInstaller } from '../app.js';
import type { AppEnv } from '../context.js';
import { ipRateLimit } from '../middleware/rate-limit.js';
import { SCRIPT, STYLESHEET } from './assets.js';
import { type AdminCaller, type ApiAnswer, createAdminCaller } from './inner.js';
import {
  type ConsoleSession,
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
import {
  Badge,
  Csrf,
  Empty,
  Json,
  Layout,
  Notice,
  type PageFrame,
  Pager,
  SignInPage,
  Table,
  when,
} from './views.js';

type Env = AppEnv & { Variables: { consoleSession: ConsoleSession; csrf: string } };
type C = Context<Env>;

const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-src 'self'; " +
  "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'";
/** A run's HTML result: no script, no network, its own origin (sandbox), framed only by the console. */
const RESULT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; sandbox";
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const WS_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const PAGE_SIZE = 20;

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

async function render(c: Context, frame: PageFrame, body: Child, status = 200) {
  const page = <Layout {...frame}>{body}</Layout>;
  return c.html(html`<!DOCTYPE html>${page}`, status as 200);
}

function frameOf(c: C, title: string, ws: string | null, nav: PageFrame['nav']): PageFrame {
  const session = c.get('consoleSession');
  return {
    title,
    workspaceId: ws,
    nav,
    csrf: c.get('csrf'),
    operator: session.principal.kind === 'operator',
  };
}

/** The API's error message, with its validation issues (`path: message`) so a form says which field was wrong. */
function message(answer: ApiAnswer): string {
  const b = answer.body as { message?: unknown; issues?: unknown } | null;
  if (typeof b?.message !== 'string') return `request failed (${answer.status})`;
  const issues = Array.isArray(b.issues)
    ? b.issues.flatMap((i: { path?: unknown; message?: unknown }) =>
        typeof i?.path === 'string' && typeof i.message === 'string' ? [`${i.path}: ${i.message}`] : [],
      )
    : [];
  return issues.length > 0 ? `${b.message}: ${issues.join('; ')}` : b.message;
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

function formText(form: Record<string, unknown>, name: string): string {
  const raw = form[name];
  const v = Array.isArray(raw) ? raw[0] : raw;
  return typeof v === 'string' ? v.trim() : '';
}

function qs(params: Record<string, string | number | null | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Splits a textarea of one entry per line (commas also accepted) into its non-empty entries. */
function entries(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** The policy form's fields as typed, so a refused save can show them again. */
interface PolicyDraft {
  readOnly: boolean;
  disabledTools: string[];
  allowedOrigins: string;
  allowedIps: string;
  rateLimitPerMinute: string;
}

interface ServiceAccount {
  serviceAccountId: string;
  name: string;
  capabilities: string[];
  status: string;
  createdAt: string;
}
interface ApiKey {
  keyId: string;
  name: string | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}
interface Run {
  runId: string;
  flowSlug: string;
  version: number | null;
  status: string;
  error: { code?: string; message?: string } | null;
  resultMimeType: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  cancelRequested: boolean;
  input: unknown;
}
interface RunDetail extends Run {
  result: { mimeType: string; value: unknown } | null;
  steps: {
    stepId: string;
    type: string;
    status: string;
    attempts: number;
    startedAt: string | null;
    finishedAt: string | null;
    error: { code: string; message: string } | null;
  }[];
  events: {
    id: number;
    type: string;
    stepId: string | null;
    status: string | null;
    at: string;
    detail: unknown;
  }[];
}
interface FlowSummary {
  flowSlug: string;
  name: string;
  description: string | null;
  tags: string[];
  hasDraft: boolean;
  latestVersion: number | null;
  liveVersion: number | null;
}
interface FlowDetail extends FlowSummary {
  versions: { version: number; releaseNote: string | null; createdAt: string }[];
  bindings: { live: Record<string, unknown>; draft: Record<string, unknown> };
}
interface Installation {
  installationId: string;
  sourceWorkspaceId: string;
  flowSlug: string;
  versionPolicy: 'pinned' | 'track-latest';
  pinnedVersion: number | null;
  enabled: boolean;
  trustMetadata: boolean;
  slotBindings: Record<string, string>;
}

interface Connection {
  connectionId: string;
  name: string;
  type: string;
  baseUrl: string | null;
  auth: { type: string; hasSecret: boolean; headerName?: string };
  model: string | null;
  status: string;
  health: { ok: boolean; checkedAt: string; status?: number; message?: string } | null;
  createdAt: string;
}
interface ConnectionCheck {
  status: string;
  httpStatus: number | null;
  latencyMs: number | null;
  message: string | null;
}
interface AuditRow {
  id: number;
  at: string;
  principalType: string;
  principalId: string;
  keyId: string | null;
  kind: string;
  action: string;
  outcome: string;
  errorCode: string | null;
  blockers: unknown;
  runId: string | null;
  count: number;
}

const NOTICES: Record<string, string> = {
  'sa-created': 'Service account created. Create a key for it below.',
  'key-revoked': 'Key revoked. It stops working at once on this gateway (other replicas within 30 s).',
  'sa-disabled': 'Service account disabled: none of its keys work until it is enabled again.',
  'sa-enabled': 'Service account enabled.',
  'run-started': 'Run started.',
  'run-cancelled': 'Cancellation requested.',
  released: 'Released: the live version changed. Agents see it on their next tools/list.',
  trusted:
    'Trusted: models now see this text of the live version; any later release is untrusted until reviewed.',
  untrusted: 'Untrusted: models see this flow’s authored text only as untrusted data again.',
  'conn-created': 'Connection created. Check it to see whether it answers.',
  'conn-rotated': 'Secret replaced; the next run uses the new one. The old one is gone.',
  'conn-disabled': 'Connection disabled: steps that use it fail with connection_disabled.',
  'conn-enabled': 'Connection enabled.',
  'ws-created': 'Workspace created. Open it to add service accounts, keys and connections.',
  'inst-bound': 'Slot binding saved.',
  'inst-trusted':
    'Trusted: models now see the text of the version this installation runs as reviewed by you.',
  'inst-untrusted': 'Untrusted: models see this installed flow’s authored text only as untrusted data again.',
  'inst-version': 'Version policy saved.',
  'policy-saved': 'Policy saved. Agents see it on their next request; the preview below already does.',
};

function noticeOf(c: C): Child {
  const key = c.req.query('done');
  const text = key ? NOTICES[key] : undefined;
  return text ? <Notice>{text}</Notice> : null;
}

export function consoleRoutes(
  app: Hono<AppEnv>,
  deps: GatewayDeps,
  call: AdminCaller = createAdminCaller(deps),
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
      if (!session) return signInPage(c, null, 'That sign-in link was already used or has expired.', 401);
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

  const api = (c: C, method: string, path: string, body?: unknown) =>
    call(c as unknown as Context<AppEnv>, c.get('consoleSession'), method, path, body);
  const wsPath = (c: C, rest: string) => `/api/workspaces/${c.req.param('ws')}${rest}`;
  /** An admin API refusal as a page: a 403 stays a 403, whatever the page. */
  const failed = (c: C, title: string, nav: PageFrame['nav'], answer: ApiAnswer) =>
    render(
      c,
      frameOf(c, title, c.req.param('ws') ?? null, nav),
      <>
        <h1>{title}</h1>
        <Notice kind="error">{message(answer)}</Notice>
      </>,
      answer.status >= 400 ? answer.status : 500,
    );

  // --- workspaces (operator) ----------------------------------------------------------------------------------------
  const workspacesPage = async (c: C, error?: ApiAnswer, form?: { id: string; name: string }) => {
    const after = c.req.query('after');
    const answer = await api(c, 'GET', `/api/console/workspaces${qs({ limit: PAGE_SIZE, after })}`);
    if (answer.status !== 200) return failed(c, 'Workspaces', 'workspaces', answer);
    const { items, next } = answer.body as {
      items: { id: string; name: string; createdAt: string }[];
      next: string | null;
    };
    return render(
      c,
      frameOf(c, 'Workspaces', null, 'workspaces'),
      <>
        <h1>Workspaces</h1>
        {noticeOf(c)}
        {error ? <Notice kind="error">{message(error)}</Notice> : null}
        <form method="post" action="/console/workspaces" class="filters">
          <Csrf token={c.get('csrf')} />
          <label>
            Id (lowercase letters, digits, dashes)
            <input name="id" required maxlength={63} value={form?.id ?? ''} />
          </label>
          <label>
            Name
            <input name="name" required maxlength={200} value={form?.name ?? ''} />
          </label>
          <button type="submit" class="secondary">
            Create workspace
          </button>
        </form>
        {items.length === 0 ? (
          <Empty>No workspaces yet. Create the first one with the form above.</Empty>
        ) : (
          <Table columns={['Id', 'Name', 'Created']}>
            {items.map((w) => (
              <tr>
                <td>
                  <a href={`/console/w/${w.id}/keys`}>{w.id}</a>
                </td>
                <td>{w.name}</td>
                <td>{when(w.createdAt)}</td>
              </tr>
            ))}
          </Table>
        )}
        <Pager next={next ? `/console/workspaces${qs({ after: next })}` : null} />
      </>,
      error ? (error.status >= 400 ? error.status : 500) : 200,
    );
  };
  console_.get('/console/workspaces', (c) => workspacesPage(c));
  console_.post('/console/workspaces', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const body = { id: formText(form, 'id'), name: formText(form, 'name') };
    const answer = await api(c, 'POST', '/api/admin/workspaces', body);
    if (answer.status === 403) return failed(c, 'Workspaces', 'workspaces', answer);
    if (answer.status !== 201) return workspacesPage(c, answer, body);
    return c.redirect('/console/workspaces?done=ws-created', 303);
  });

  // --- service accounts & keys ------------------------------------------------------------------------------------
  const keysPage = async (
    c: C,
    extra: { created?: { name: string; apiKey: string; keyId: string }; error?: string },
  ) => {
    const cursor = c.req.query('cursor');
    const answer = await api(c, 'GET', wsPath(c, `/service-accounts${qs({ limit: PAGE_SIZE, cursor })}`));
    if (answer.status !== 200) return failed(c, 'Service accounts & keys', 'keys', answer);
    const page = answer.body as { items: ServiceAccount[]; nextCursor: string | null };
    const keys = await Promise.all(
      page.items.map(async (sa) => {
        const k = await api(c, 'GET', wsPath(c, `/service-accounts/${sa.serviceAccountId}/keys`));
        return k.status === 200 ? (k.body as { items: ApiKey[] }).items : [];
      }),
    );
    const ws = c.req.param('ws') as string;
    const csrf = c.get('csrf');
    return render(
      c,
      frameOf(c, 'Service accounts & keys', ws, 'keys'),
      <>
        <h1>Service accounts &amp; keys</h1>
        {noticeOf(c)}
        {extra.error ? <Notice kind="error">{extra.error}</Notice> : null}
        {extra.created ? (
          <section class="notice" aria-labelledby="new-key">
            <h2 id="new-key">New key for {extra.created.name}</h2>
            <p>
              Copy it now: it is shown this once and never again (only its hash is stored). Agents send it as{' '}
              <code>Authorization: Bearer …</code>.
            </p>
            <div class="secret">
              <label for="new-key-value" class="muted">
                API key {extra.created.keyId}
              </label>
              <input id="new-key-value" readonly value={extra.created.apiKey} />
              <button type="button" data-copy="new-key-value">
                Copy
              </button>
            </div>
          </section>
        ) : null}
        <h2>Create a service account</h2>
        <form method="post" action={`/console/w/${ws}/service-accounts`} class="stack">
          <Csrf token={csrf} />
          <label>
            Name
            <input name="name" required maxlength={100} />
          </label>
          <fieldset>
            <legend>Capabilities</legend>
            {CAPABILITIES.map((cap) => (
              <label class="check">
                <input type="checkbox" name="capabilities" value={cap} checked={cap === 'flows.read'} /> {cap}
              </label>
            ))}
          </fieldset>
          <button type="submit">Create service account</button>
        </form>
        <h2>Service accounts</h2>
        {page.items.length === 0 ? (
          <Empty>No service accounts yet. Create one above, then a key for each agent that connects.</Empty>
        ) : (
          page.items.map((sa, i) => (
            <section aria-labelledby={`sa-${sa.serviceAccountId}`}>
              <h3 id={`sa-${sa.serviceAccountId}`}>
                {sa.name} <Badge value={sa.status} /> <span class="muted mono">{sa.serviceAccountId}</span>
              </h3>
              <p class="muted">Capabilities: {sa.capabilities.join(', ') || 'none'}</p>
              <form
                method="post"
                action={`/console/w/${ws}/service-accounts/${sa.serviceAccountId}/keys`}
                class="inline"
              >
                <Csrf token={csrf} />
                <label class="stacked">
                  Key name
                  <input name="name" maxlength={100} placeholder="optional" />
                </label>{' '}
                <label class="stacked">
                  Expires (UTC, optional)
                  <input name="expiresOn" type="date" />
                </label>{' '}
                <button type="submit">Create key</button>
              </form>{' '}
              <form
                method="post"
                action={`/console/w/${ws}/service-accounts/${sa.serviceAccountId}/${sa.status === 'active' ? 'disable' : 'enable'}`}
                class="inline"
              >
                <Csrf token={csrf} />
                <button type="submit" class={sa.status === 'active' ? 'danger' : 'secondary'}>
                  {sa.status === 'active' ? `Disable ${sa.name}` : `Enable ${sa.name}`}
                </button>
              </form>
              {(keys[i] ?? []).length === 0 ? (
                <Empty>No keys. Create one to let an agent connect as {sa.name}.</Empty>
              ) : (
                <div class="scroll" tabindex={0}>
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Key</th>
                        <th scope="col">Name</th>
                        <th scope="col">Created</th>
                        <th scope="col">Last used</th>
                        <th scope="col">Expires</th>
                        <th scope="col">Status</th>
                        <th scope="col">
                          <span class="muted">Action</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {(keys[i] ?? []).map((k) => (
                        <tr>
                          <td class="mono">{k.keyId}</td>
                          <td>{k.name ?? '—'}</td>
                          <td>{when(k.createdAt)}</td>
                          <td>{when(k.lastUsedAt)}</td>
                          <td>{k.expiresAt ? when(k.expiresAt) : 'never'}</td>
                          <td>
                            <Badge value={k.revokedAt ? 'revoked' : 'active'} />
                          </td>
                          <td>
                            {k.revokedAt ? null : (
                              <form
                                method="post"
                                action={`/console/w/${ws}/service-accounts/${sa.serviceAccountId}/keys/${k.keyId}/revoke`}
                                class="inline"
                              >
                                <Csrf token={csrf} />
                                <button type="submit" class="danger" aria-label={`Revoke key ${k.keyId}`}>
                                  Revoke
                                </button>
                              </form>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
          ))
        )}
        <Pager next={page.nextCursor ? `/console/w/${ws}/keys${qs({ cursor: page.nextCursor })}` : null} />
      </>,
      extra.error ? 400 : 200,
    );
  };

  console_.get('/console/w/:ws/keys', (c) => keysPage(c, {}));
  console_.post('/console/w/:ws/service-accounts', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const caps = form.capabilities;
    const capabilities = (Array.isArray(caps) ? caps : caps ? [caps] : []).filter(
      (x) => typeof x === 'string',
    );
    const answer = await api(c, 'POST', wsPath(c, '/service-accounts'), {
      name: formText(form, 'name'),
      capabilities,
    });
    if (answer.status === 403) return failed(c, 'Service accounts & keys', 'keys', answer);
    if (answer.status !== 201) return keysPage(c, { error: message(answer) });
    return c.redirect(`/console/w/${c.req.param('ws')}/keys?done=sa-created`, 303);
  });
  console_.post('/console/w/:ws/service-accounts/:sa/keys', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const name = formText(form, 'name');
    const expiresOn = formText(form, 'expiresOn');
    const sa = c.req.param('sa');
    const answer = await api(c, 'POST', wsPath(c, `/service-accounts/${encodeURIComponent(sa)}/keys`), {
      ...(name ? { name } : {}),
      ...(/^\d{4}-\d{2}-\d{2}$/.test(expiresOn) ? { expiresAt: `${expiresOn}T00:00:00Z` } : {}),
    });
    if (answer.status === 403) return failed(c, 'Service accounts & keys', 'keys', answer);
    if (answer.status !== 201) return keysPage(c, { error: message(answer) });
    const created = answer.body as { key: { keyId: string; apiKey: string } };
    return keysPage(c, {
      created: { name: name || sa, apiKey: created.key.apiKey, keyId: created.key.keyId },
    });
  });
  console_.post('/console/w/:ws/service-accounts/:sa/keys/:keyId/revoke', async (c) => {
    const path = `/service-accounts/${encodeURIComponent(c.req.param('sa'))}/keys/${encodeURIComponent(c.req.param('keyId'))}`;
    const answer = await api(c, 'DELETE', wsPath(c, path));
    if (answer.status === 403) return failed(c, 'Service accounts & keys', 'keys', answer);
    if (answer.status !== 204) return keysPage(c, { error: message(answer) });
    return c.redirect(`/console/w/${c.req.param('ws')}/keys?done=key-revoked`, 303);
  });
  for (const action of ['disable', 'enable'] as const) {
    console_.post(`/console/w/:ws/service-accounts/:sa/${action}`, async (c) => {
      const answer = await api(
        c,
        'PATCH',
        wsPath(c, `/service-accounts/${encodeURIComponent(c.req.param('sa') ?? '')}`),
        {
          status: action === 'disable' ? 'disabled' : 'active',
        },
      );
      if (answer.status === 403) return failed(c, 'Service accounts & keys', 'keys', answer);
      if (answer.status !== 200) return keysPage(c, { error: message(answer) });
      return c.redirect(`/console/w/${c.req.param('ws')}/keys?done=sa-${action}d`, 303);
    });
  }

  // --- runs -------------------------------------------------------------------------------------------------------
  const RUN_STATUSES = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'timed-out'];
  const runsPage = async (c: C, error?: string) => {
    const ws = c.req.param('ws') as string;
    const status = c.req.query('status') || undefined;
    const flow = c.req.query('flow') || undefined;
    const cursor = c.req.query('cursor') || undefined;
    const [answer, flows] = await Promise.all([
      api(c, 'GET', wsPath(c, `/runs${qs({ limit: PAGE_SIZE, status, flow, cursor })}`)),
      api(c, 'GET', wsPath(c, '/flows?limit=200')),
    ]);
    if (answer.status === 403) return failed(c, 'Runs', 'runs', answer);
    const page = answer.status === 200 ? (answer.body as { items: Run[]; nextCursor: string | null }) : null;
    const slugs =
      flows.status === 200
        ? (flows.body as { items: { flowSlug: string }[] }).items.map((f) => f.flowSlug)
        : [];
    const active = page?.items.some((r) => ['queued', 'running', 'waiting'].includes(r.status)) ?? false;
    const csrf = c.get('csrf');
    return render(
      c,
      { ...frameOf(c, 'Runs', ws, 'runs'), ...(active ? { refresh: 2 } : {}) },
      <>
        <h1>Runs</h1>
        {noticeOf(c)}
        {error ? <Notice kind="error">{error}</Notice> : null}
        {answer.status !== 200 ? <Notice kind="error">{message(answer)}</Notice> : null}
        <form method="get" action={`/console/w/${ws}/runs`} class="filters">
          <label>
            Status
            <select name="status">
              <option value="">any</option>
              {RUN_STATUSES.map((s) => (
                <option value={s} selected={s === status}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <label>
            Flow
            <select name="flow">
              <option value="">any</option>
              {slugs.map((s) => (
                <option value={s} selected={s === flow}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        {page && page.items.length === 0 ? (
          <Empty>
            No runs{status || flow ? ' match these filters' : ' yet'}. Start one below, or let an agent call a
            flow tool.
          </Empty>
        ) : null}
        {page && page.items.length > 0 ? (
          <Table columns={['Run', 'Flow', 'Status', 'Created', 'Finished']}>
            {page.items.map((r) => (
              <tr>
                <td class="mono">
                  <a href={`/console/w/${ws}/runs/${r.runId}`}>{r.runId}</a>
                </td>
                <td>{r.flowSlug}</td>
                <td>
                  <Badge value={r.status} />
                </td>
                <td>{when(r.createdAt)}</td>
                <td>{when(r.finishedAt)}</td>
              </tr>
            ))}
          </Table>
        ) : null}
        <Pager
          next={
            page?.nextCursor ? `/console/w/${ws}/runs${qs({ status, flow, cursor: page.nextCursor })}` : null
          }
        />
        <h2>Start a run</h2>
        {slugs.length === 0 ? (
          <Empty>
            No flows in this workspace yet. Publish one with <code>flowgate flows push</code>.
          </Empty>
        ) : (
          <form method="post" action={`/console/w/${ws}/runs`} class="stack">
            <Csrf token={csrf} />
            <label>
              Flow
              <select name="flow" required>
                {slugs.map((s) => (
                  <option value={s}>{s}</option>
                ))}
              </select>
            </label>
            <label>
              Input (JSON object)
              <textarea name="input" spellcheck={false}>
                {'{}'}
              </textarea>
            </label>
            <button type="submit">Start run</button>
          </form>
        )}
      </>,
      error ? 400 : 200,
    );
  };
  console_.get('/console/w/:ws/runs', (c) => runsPage(c));
  console_.post('/console/w/:ws/runs', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const flow = formText(form, 'flow');
    let input: unknown;
    try {
      input = JSON.parse(formText(form, 'input') || '{}');
    } catch {
      return runsPage(c, 'Input must be a JSON object.');
    }
    const answer = await api(c, 'POST', wsPath(c, `/flows/${encodeURIComponent(flow)}/runs`), { input });
    if (answer.status === 403) return failed(c, 'Runs', 'runs', answer);
    if (answer.status !== 202) return runsPage(c, message(answer));
    const { runId } = answer.body as { runId: string };
    return c.redirect(`/console/w/${c.req.param('ws')}/runs/${runId}?done=run-started`, 303);
  });

  const runDetail = (c: C, runId: string) => api(c, 'GET', wsPath(c, `/runs/${encodeURIComponent(runId)}`));
  console_.get('/console/w/:ws/runs/:runId', async (c) => {
    const ws = c.req.param('ws');
    const answer = await runDetail(c, c.req.param('runId'));
    if (answer.status !== 200) return failed(c, 'Run', 'runs', answer);
    const run = answer.body as RunDetail;
    const active = ['queued', 'running', 'waiting'].includes(run.status);
    const mime = run.result?.mimeType ?? null;
    return render(
      c,
      { ...frameOf(c, `Run ${run.runId}`, ws, 'runs'), ...(active ? { refresh: 2 } : {}) },
      <>
        <h1>
          Run <span class="mono">{run.runId}</span> <Badge value={run.status} />
        </h1>
        {noticeOf(c)}
        <p>
          Flow <strong>{run.flowSlug}</strong>
          {run.version !== null ? ` v${run.version}` : ''} · created {when(run.createdAt)} · finished{' '}
          {when(run.finishedAt)}
        </p>
        {active ? (
          <form method="post" action={`/console/w/${ws}/runs/${run.runId}/cancel`}>
            <Csrf token={c.get('csrf')} />
            <button type="submit" class="danger">
              Cancel run
            </button>
          </form>
        ) : null}
        {run.error ? (
          <Notice kind="error">
            {run.error.code ?? 'error'}: {run.error.message ?? ''}
          </Notice>
        ) : null}
        <h2>Result</h2>
        {run.result === null ? (
          <Empty>
            {active ? 'No result yet; this page refreshes until the run ends.' : 'This run has no result.'}
          </Empty>
        ) : mime?.startsWith('text/html') ? (
          <iframe
            class="result"
            title={`Result of run ${run.runId}`}
            sandbox=""
            src={`/console/w/${ws}/runs/${run.runId}/result`}
          />
        ) : (
          <>
            <p class="muted">{mime}</p>
            {typeof run.result.value === 'string' ? (
              <pre tabindex={0}>{run.result.value}</pre>
            ) : (
              <Json value={run.result.value} />
            )}
          </>
        )}
        <h2>Steps</h2>
        {run.steps.length === 0 ? (
          <Empty>No steps recorded yet.</Empty>
        ) : (
          <ol class="timeline">
            {run.steps.map((s) => (
              <li>
                <strong class="mono">{s.stepId}</strong> <span class="muted">{s.type}</span>{' '}
                <Badge value={s.status} />{' '}
                <span class="muted">
                  {when(s.startedAt)} → {when(s.finishedAt)}
                  {s.attempts > 1 ? ` · ${s.attempts} attempts` : ''}
                </span>
                {s.error ? (
                  <div>
                    {s.error.code}: {s.error.message}
                  </div>
                ) : null}
              </li>
            ))}
          </ol>
        )}
        <h2>Events</h2>
        {run.events.length === 0 ? (
          <Empty>No events yet.</Empty>
        ) : (
          <Table columns={['At', 'Event', 'Step', 'Status']}>
            {run.events.map((e) => (
              <tr>
                <td>{when(e.at)}</td>
                <td>{e.type}</td>
                <td class="mono">{e.stepId ?? '—'}</td>
                <td>{e.status ?? '—'}</td>
              </tr>
            ))}
          </Table>
        )}
        <h2>Input</h2>
        <Json value={run.input} />
      </>,
    );
  });
  console_.get('/console/w/:ws/runs/:runId/result', async (c) => {
    const answer = await runDetail(c, c.req.param('runId'));
    if (answer.status !== 200) return c.text(message(answer), answer.status as 404);
    const run = answer.body as RunDetail;
    const value = run.result?.value;
    const body = typeof value === 'string' ? value : JSON.stringify(value ?? null);
    const type = run.result?.mimeType?.startsWith('text/html')
      ? 'text/html; charset=utf-8'
      : 'text/plain; charset=utf-8';
    return c.body(body, 200, {
      'Content-Type': type,
      'Content-Security-Policy': RESULT_CSP,
      'X-Frame-Options': 'SAMEORIGIN',
    });
  });
  console_.post('/console/w/:ws/runs/:runId/cancel', async (c) => {
    const runId = c.req.param('runId');
    const answer = await api(c, 'POST', wsPath(c, `/runs/${encodeURIComponent(runId)}/cancel`));
    if (answer.status !== 200) return failed(c, 'Run', 'runs', answer);
    return c.redirect(
      `/console/w/${c.req.param('ws')}/runs/${encodeURIComponent(runId)}?done=run-cancelled`,
      303,
    );
  });

  // --- audit ------------------------------------------------------------------------------------------------------
  console_.get('/console/w/:ws/audit', async (c) => {
    const ws = c.req.param('ws');
    const key = c.req.query('key') || undefined;
    const tool = c.req.query('tool') || undefined;
    const outcome = c.req.query('outcome') || undefined;
    const before = c.req.query('before') || undefined;
    // <input type="datetime-local"> sends minutes without a zone; the form says they are UTC.
    const instant = (name: string) => {
      const v = c.req.query(name) ?? '';
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(v) ? v : undefined;
    };
    const since = instant('since');
    const until = instant('until');
    const answer = await api(
      c,
      'GET',
      wsPath(
        c,
        `/console/audit${qs({ limit: PAGE_SIZE, key, tool, outcome, before, since: since && `${since}:00Z`, until: until && `${until}:00Z` })}`,
      ),
    );
    if (answer.status === 403) return failed(c, 'Audit', 'audit', answer);
    const page = answer.status === 200 ? (answer.body as { items: AuditRow[]; next: number | null }) : null;
    return render(
      c,
      frameOf(c, 'Audit', ws, 'audit'),
      <>
        <h1>Audit</h1>
        {answer.status !== 200 ? <Notice kind="error">{message(answer)}</Notice> : null}
        <form method="get" action={`/console/w/${ws}/audit`} class="filters">
          <label>
            Key id
            <input name="key" value={key ?? ''} maxlength={64} />
          </label>
          <label>
            Tool or action
            <input name="tool" value={tool ?? ''} maxlength={200} />
          </label>
          <label>
            Outcome
            <select name="outcome">
              <option value="">any</option>
              {['ok', 'error', 'blocked', 'denied'].map((o) => (
                <option value={o} selected={o === outcome}>
                  {o}
                </option>
              ))}
            </select>
          </label>
          <label>
            From (UTC)
            <input type="datetime-local" name="since" value={since ?? ''} />
          </label>
          <label>
            Until (UTC)
            <input type="datetime-local" name="until" value={until ?? ''} />
          </label>
          <button type="submit" class="secondary">
            Filter
          </button>
        </form>
        {page && page.items.length === 0 ? (
          <Empty>
            No audit entries{key || tool || outcome || since || until ? ' match these filters' : ' yet'}.
            Every MCP tool call and admin action is recorded here.
          </Empty>
        ) : null}
        {page && page.items.length > 0 ? (
          <Table columns={['At', 'Who', 'Kind', 'Tool / action', 'Outcome', 'Blockers']}>
            {page.items.map((e) => (
              <tr>
                <td>{when(e.at)}</td>
                <td>
                  {e.principalType} <span class="mono">{e.keyId ?? e.principalId}</span>
                </td>
                <td>{e.kind}</td>
                <td class="mono">
                  {e.action}
                  {e.count > 1 ? ` ×${e.count}` : ''}
                  {e.runId ? (
                    <>
                      {' '}
                      <a href={`/console/w/${ws}/runs/${e.runId}`}>run</a>
                    </>
                  ) : null}
                </td>
                <td>
                  <Badge value={e.outcome} /> {e.errorCode ? <span class="mono">{e.errorCode}</span> : null}
                </td>
                <td>{e.blockers ? <Json value={e.blockers} /> : '—'}</td>
              </tr>
            ))}
          </Table>
        ) : null}
        <Pager
          next={
            page?.next
              ? `/console/w/${ws}/audit${qs({ key, tool, outcome, since, until, before: page.next })}`
              : null
          }
        />
      </>,
    );
  });
  // --- connections ------------------------------------------------------------------------------------------------
  const connectionsPage = async (
    c: C,
    extra: { error?: string; check?: ConnectionCheck & { name: string } },
  ) => {
    const ws = c.req.param('ws') as string;
    const cursor = c.req.query('cursor') || undefined;
    const answer = await api(c, 'GET', wsPath(c, `/connections${qs({ limit: PAGE_SIZE, cursor })}`));
    if (answer.status !== 200) return failed(c, 'Connections', 'connections', answer);
    const page = answer.body as { items: Connection[]; nextCursor: string | null };
    const csrf = c.get('csrf');
    const health = (x: Connection) => {
      if (x.status === 'disabled') return <Badge value="disabled" />;
      if (!x.health) return <span class="muted">not checked</span>;
      return (
        <>
          <Badge value={x.health.ok ? 'healthy' : 'unhealthy'} />{' '}
          <span class="muted">
            {x.health.status ? `HTTP ${x.health.status} · ` : ''}
            {when(x.health.checkedAt)}
          </span>
        </>
      );
    };
    return render(
      c,
      frameOf(c, 'Connections', ws, 'connections'),
      <>
        <h1>Connections</h1>
        {noticeOf(c)}
        {extra.error ? <Notice kind="error">{extra.error}</Notice> : null}
        {extra.check ? (
          <Notice kind={extra.check.status === 'healthy' ? 'info' : 'error'}>
            {extra.check.name}: {extra.check.status}
            {extra.check.httpStatus !== null ? ` (HTTP ${extra.check.httpStatus})` : ''}
            {extra.check.latencyMs !== null ? ` in ${extra.check.latencyMs} ms` : ''}
            {extra.check.message ? ` — ${extra.check.message}` : ''}
          </Notice>
        ) : null}
        {page.items.length === 0 ? (
          <Empty>
            No connections yet. Create one below for each API your flows call; flows bind to them by slot.
          </Empty>
        ) : (
          <Table columns={['Name', 'Type', 'Base URL', 'Auth', 'Health', 'Actions']}>
            {page.items.map((x) => (
              <tr>
                <td>
                  {x.name}
                  <div class="muted mono">{x.connectionId}</div>
                </td>
                <td>
                  {x.type}
                  {x.model ? <div class="muted">{x.model}</div> : null}
                </td>
                <td class="mono">{x.baseUrl ?? '—'}</td>
                <td>
                  {x.auth.type}
                  {x.auth.headerName ? ` (${x.auth.headerName})` : ''}
                </td>
                <td>{health(x)}</td>
                <td>
                  <form
                    method="post"
                    action={`/console/w/${ws}/connections/${x.connectionId}/check`}
                    class="inline"
                  >
                    <Csrf token={csrf} />
                    <button type="submit" class="secondary" aria-label={`Check ${x.name}`}>
                      Check
                    </button>
                  </form>{' '}
                  <form
                    method="post"
                    action={`/console/w/${ws}/connections/${x.connectionId}/${x.status === 'active' ? 'disable' : 'enable'}`}
                    class="inline"
                  >
                    <Csrf token={csrf} />
                    <button
                      type="submit"
                      class={x.status === 'active' ? 'danger' : 'secondary'}
                      aria-label={`${x.status === 'active' ? 'Disable' : 'Enable'} ${x.name}`}
                    >
                      {x.status === 'active' ? 'Disable' : 'Enable'}
                    </button>
                  </form>
                  {x.auth.type !== 'none' ? (
                    <form
                      method="post"
                      action={`/console/w/${ws}/connections/${x.connectionId}/rotate`}
                      class="stack"
                    >
                      <Csrf token={csrf} />
                      <label>
                        New secret for {x.name}
                        <input type="password" name="secret" autocomplete="off" required />
                      </label>
                      <button type="submit" class="secondary">
                        Rotate
                      </button>
                    </form>
                  ) : null}
                </td>
              </tr>
            ))}
          </Table>
        )}
        <Pager
          next={page.nextCursor ? `/console/w/${ws}/connections${qs({ cursor: page.nextCursor })}` : null}
        />
        <h2>Create a connection</h2>
        <form method="post" action={`/console/w/${ws}/connections`} class="stack">
          <Csrf token={csrf} />
          <label>
            Name
            <input name="name" required maxlength={100} />
          </label>
          <label>
            Type
            <select name="type">
              <option value="http-api">http-api</option>
              <option value="llm-provider">llm-provider</option>
              <option value="secret">secret</option>
            </select>
          </label>
          <label>
            Base URL (no credentials in it)
            <input name="baseUrl" type="url" maxlength={2048} />
          </label>
          <label>
            Model (llm-provider only)
            <input name="model" maxlength={200} />
          </label>
          <label>
            Authentication
            <select name="authType">
              <option value="none">none</option>
              <option value="bearer">bearer</option>
              <option value="api-key">api-key</option>
              <option value="basic">basic (user:password)</option>
            </select>
          </label>
          <label>
            Header name (api-key only)
            <input name="headerName" placeholder="X-API-Key" maxlength={64} />
          </label>
          <label>
            Secret (stored encrypted, never shown again)
            <input name="secret" type="password" autocomplete="off" />
          </label>
          <button type="submit">Create connection</button>
        </form>
      </>,
      extra.error ? 400 : 200,
    );
  };
  console_.get('/console/w/:ws/connections', (c) => connectionsPage(c, {}));
  console_.post('/console/w/:ws/connections', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const authType = formText(form, 'authType');
    const secret = formText(form, 'secret');
    const headerName = formText(form, 'headerName');
    const auth =
      authType === 'none' || authType === ''
        ? { type: 'none' }
        : { type: authType, secret, ...(authType === 'api-key' && headerName ? { headerName } : {}) };
    const baseUrl = formText(form, 'baseUrl');
    const model = formText(form, 'model');
    const answer = await api(c, 'POST', wsPath(c, '/connections'), {
      name: formText(form, 'name'),
      type: formText(form, 'type'),
      ...(baseUrl ? { baseUrl } : {}),
      ...(model ? { model } : {}),
      auth,
    });
    if (answer.status === 403) return failed(c, 'Connections', 'connections', answer);
    if (answer.status !== 201) return connectionsPage(c, { error: message(answer) });
    return c.redirect(`/console/w/${c.req.param('ws')}/connections?done=conn-created`, 303);
  });
  console_.post('/console/w/:ws/connections/:id/:action', async (c) => {
    const id = encodeURIComponent(c.req.param('id'));
    const action = c.req.param('action');
    if (action === 'rotate') {
      const form = await c.req.parseBody({ all: true });
      const answer = await api(c, 'POST', wsPath(c, `/connections/${id}/rotate`), {
        secret: formText(form, 'secret'),
      });
      if (answer.status === 403) return failed(c, 'Connections', 'connections', answer);
      if (answer.status !== 200) return connectionsPage(c, { error: message(answer) });
      return c.redirect(`/console/w/${c.req.param('ws')}/connections?done=conn-rotated`, 303);
    }
    if (action === 'disable' || action === 'enable') {
      const answer = await api(c, 'POST', wsPath(c, `/connections/${id}/${action}`));
      if (answer.status === 403) return failed(c, 'Connections', 'connections', answer);
      if (answer.status !== 200) return connectionsPage(c, { error: message(answer) });
      return c.redirect(`/console/w/${c.req.param('ws')}/connections?done=conn-${action}d`, 303);
    }
    if (action === 'check') {
      const answer = await api(c, 'POST', wsPath(c, `/connections/${id}/check`));
      if (answer.status === 403) return failed(c, 'Connections', 'connections', answer);
      if (answer.status !== 200) return connectionsPage(c, { error: message(answer) });
      return connectionsPage(c, { check: answer.body as ConnectionCheck & { name: string } });
    }
    return c.text('not found', 404);
  });

  // --- flows ------------------------------------------------------------------------------------------------------
  console_.get('/console/w/:ws/flows', async (c) => {
    const ws = c.req.param('ws') as string;
    const cursor = c.req.query('cursor') || undefined;
    const [answer, installed] = await Promise.all([
      api(c, 'GET', wsPath(c, `/flows${qs({ limit: PAGE_SIZE, cursor })}`)),
      api(c, 'GET', wsPath(c, `/installations${qs({ limit: PAGE_SIZE })}`)),
    ]);
    if (answer.status !== 200) return failed(c, 'Flows', 'flows', answer);
    const page = answer.body as { items: FlowSummary[]; nextCursor: string | null };
    const installations =
      installed.status === 200
        ? (
            installed.body as {
              items: {
                installationId: string;
                sourceWorkspaceId: string;
                flowSlug: string;
                versionPolicy: string;
                pinnedVersion: number | null;
                enabled: boolean;
              }[];
            }
          ).items
        : [];
    return render(
      c,
      frameOf(c, 'Flows', ws, 'flows'),
      <>
        <h1>Flows</h1>
        {page.items.length === 0 ? (
          <Empty>
            No flows yet. Save one with <code>flowgate flows push</code> (or PUT …/flows/&lt;slug&gt;/draft),
            then release it here.
          </Empty>
        ) : (
          <Table columns={['Flow', 'Description', 'Live', 'Latest', 'Draft']}>
            {page.items.map((f) => (
              <tr>
                <td>
                  <a href={`/console/w/${ws}/flows/${f.flowSlug}`}>{f.flowSlug}</a>
                  <div class="muted">{f.name}</div>
                </td>
                <td>{f.description ?? '—'}</td>
                <td>{f.liveVersion === null ? 'not released' : `v${f.liveVersion}`}</td>
                <td>{f.latestVersion === null ? '—' : `v${f.latestVersion}`}</td>
                <td>{f.hasDraft ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </Table>
        )}
        <Pager next={page.nextCursor ? `/console/w/${ws}/flows${qs({ cursor: page.nextCursor })}` : null} />
        <h2>Installed from other workspaces</h2>
        {noticeOf(c)}
        <form method="post" action={`/console/w/${ws}/installations`} class="filters">
          <Csrf token={c.get('csrf')} />
          <label>
            Source workspace
            <input name="sourceWorkspaceId" required maxlength={63} />
          </label>
          <label>
            Public flow
            <input name="flowSlug" required maxlength={128} />
          </label>
          <label>
            Pin version (empty: track the latest)
            <input name="pinnedVersion" inputmode="numeric" pattern="[0-9]*" maxlength={10} />
          </label>
          <button type="submit" class="secondary">
            Install
          </button>
        </form>
        {installations.length === 0 ? (
          <Empty>
            No installations. Install a public flow of another workspace with POST …/installations.
          </Empty>
        ) : (
          <Table columns={['Installation', 'Flow', 'Version', 'Enabled', 'Action']}>
            {installations.map((i) => (
              <tr>
                <td class="mono">
                  <a href={`/console/w/${ws}/installations/${i.installationId}`}>{i.installationId}</a>
                </td>
                <td>
                  {i.sourceWorkspaceId}/{i.flowSlug}
                </td>
                <td>{i.pinnedVersion !== null ? `pinned v${i.pinnedVersion}` : i.versionPolicy}</td>
                <td>{i.enabled ? 'yes' : 'no'}</td>
                <td>
                  <form
                    method="post"
                    action={`/console/w/${ws}/installations/${i.installationId}`}
                    class="inline"
                  >
                    <Csrf token={c.get('csrf')} />
                    <input type="hidden" name="enabled" value={i.enabled ? 'false' : 'true'} />
                    <button
                      type="submit"
                      class={i.enabled ? 'danger' : 'secondary'}
                      aria-label={`${i.enabled ? 'Disable' : 'Enable'} installation ${i.installationId}`}
                    >
                      {i.enabled ? 'Disable' : 'Enable'}
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </>,
    );
  });
  const installationFailed = (c: C, answer: ApiAnswer) =>
    render(
      c,
      frameOf(c, 'Flows', c.req.param('ws') ?? null, 'flows'),
      <>
        <h1>Flows</h1>
        <Notice kind="error">{message(answer)}</Notice>
        <p>
          <a href={`/console/w/${c.req.param('ws')}/flows`}>Back to flows</a>
        </p>
      </>,
      answer.status >= 400 ? answer.status : 500,
    );
  console_.post('/console/w/:ws/installations', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const pinned = formText(form, 'pinnedVersion');
    const answer = await api(c, 'POST', wsPath(c, '/installations'), {
      sourceWorkspaceId: formText(form, 'sourceWorkspaceId'),
      flowSlug: formText(form, 'flowSlug'),
      ...(pinned
        ? { versionPolicy: 'pinned', pinnedVersion: Number(pinned) }
        : { versionPolicy: 'track-latest' }),
    });
    if (answer.status !== 201) return installationFailed(c, answer);
    return c.redirect(`/console/w/${c.req.param('ws')}/flows?done=installed`, 303);
  });
  console_.post('/console/w/:ws/installations/:id', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const enabled = formText(form, 'enabled') === 'true';
    const id = encodeURIComponent(c.req.param('id'));
    const answer = await api(c, 'PATCH', wsPath(c, `/installations/${id}`), { enabled });
    if (answer.status !== 200) return installationFailed(c, answer);
    return c.redirect(
      `/console/w/${c.req.param('ws')}/flows?done=inst-${enabled ? 'enabled' : 'disabled'}`,
      303,
    );
  });
  /** One installation, found by walking the admin API's list (it has no single-installation read). */
  const findInstallation = async (c: C, id: string): Promise<Installation | ApiAnswer | null> => {
    let cursor: string | undefined;
    for (let i = 0; i < 50; i++) {
      const answer = await api(c, 'GET', wsPath(c, `/installations${qs({ limit: 200, cursor })}`));
      if (answer.status !== 200) return answer;
      const page = answer.body as { items: Installation[]; nextCursor: string | null };
      const found = page.items.find((x) => x.installationId === id);
      if (found) return found;
      if (!page.nextCursor) return null;
      cursor = page.nextCursor;
    }
    return null;
  };
  const installationPage = async (c: C, error?: ApiAnswer) => {
    const ws = c.req.param('ws') as string;
    const id = c.req.param('id') as string;
    const [found, connectionsAnswer, textAnswer] = await Promise.all([
      findInstallation(c, id),
      api(c, 'GET', wsPath(c, '/connections?limit=200')),
      api(c, 'GET', wsPath(c, `/console/installations/${encodeURIComponent(id)}/text`)),
    ]);
    const runsText =
      textAnswer.status === 200
        ? (textAnswer.body as { version: number | null; literal: string | null; trusted: boolean })
        : null;
    if (found === null)
      return failed(c, 'Installation', 'flows', { status: 404, body: { message: 'installation not found' } });
    if ('status' in found) return failed(c, 'Installation', 'flows', found);
    const inst = found;
    // Offer to stop when the text it runs is trusted, or when it cannot run (nothing to re-pin) with the flag on.
    const trustShown = runsText?.trusted === true || (runsText?.literal == null && inst.trustMetadata);
    const connections =
      connectionsAnswer.status === 200 ? (connectionsAnswer.body as { items: Connection[] }).items : [];
    const nameOf = (connectionId: string) =>
      connections.find((x) => x.connectionId === connectionId)?.name ?? connectionId;
    const csrf = c.get('csrf');
    const base = `/console/w/${ws}/installations/${inst.installationId}`;
    const bound = Object.entries(inst.slotBindings);
    return render(
      c,
      frameOf(c, `Installation ${inst.installationId}`, ws, 'flows'),
      <>
        <h1>
          {inst.sourceWorkspaceId}/{inst.flowSlug} <span class="muted mono">{inst.installationId}</span>
        </h1>
        {noticeOf(c)}
        {error ? <Notice kind="error">{message(error)}</Notice> : null}
        <p>
          Version:{' '}
          <strong>
            {inst.versionPolicy === 'pinned' ? `pinned v${inst.pinnedVersion}` : 'tracks the latest'}
          </strong>{' '}
          · Enabled: <strong>{inst.enabled ? 'yes' : 'no'}</strong>
        </p>
        <h2>Version</h2>
        <form method="post" action={`${base}/version`} class="filters">
          <Csrf token={csrf} />
          <label>
            Pin version (empty: track the latest)
            <input
              name="pinnedVersion"
              inputmode="numeric"
              pattern="[0-9]*"
              maxlength={10}
              value={inst.pinnedVersion === null ? '' : String(inst.pinnedVersion)}
            />
          </label>
          <button type="submit" class="secondary">
            Save version policy
          </button>
        </form>
        <h2>Slot bindings</h2>
        <p class="muted">
          Which of this workspace's connections fills each slot the installed flow requires.
        </p>
        {bound.length === 0 ? (
          <Empty>No slot is bound yet.</Empty>
        ) : (
          <Table columns={['Slot', 'Connection']}>
            {bound.map(([slot, connectionId]) => (
              <tr>
                <td class="mono">{slot}</td>
                <td>{nameOf(connectionId)}</td>
              </tr>
            ))}
          </Table>
        )}
        {connections.length === 0 ? (
          <Empty>
            No connections to bind yet. <a href={`/console/w/${ws}/connections`}>Create one</a> first.
          </Empty>
        ) : (
          <form method="post" action={`${base}/bindings`} class="filters">
            <Csrf token={csrf} />
            <label>
              Slot
              <input name="slot" required maxlength={64} />
            </label>
            <label>
              Connection
              <select name="connectionId">
                {connections.map((x) => (
                  <option value={x.connectionId}>{x.name}</option>
                ))}
              </select>
            </label>
            <button type="submit" class="secondary">
              Bind slot
            </button>
          </form>
        )}
        <h2>Metadata trust</h2>
        {runsText?.literal == null ? (
          <p>
            {inst.trustMetadata
              ? 'Trusted, but this installation cannot run now (its source is no longer public or released): nothing for models to see.'
              : 'Nothing to review: this installation cannot run now (its source is no longer public or released).'}
          </p>
        ) : (
          <>
            <p>
              {runsText.trusted
                ? `Trusted: models see the text below (v${runsText.version}) as reviewed by you; another version is untrusted until you opt in again.`
                : inst.trustMetadata
                  ? `Untrusted for now: you opted in for another version; models see the text below (v${runsText.version}, the version this installation runs) only as untrusted data until you review it.`
                  : `Untrusted: models see this installed flow’s authored text only as untrusted data. Opting in trusts exactly the text below (v${runsText.version}, the version this installation runs).`}
            </p>
            <pre tabindex={0}>{runsText.literal}</pre>
          </>
        )}
        {runsText?.literal != null || inst.trustMetadata ? (
          // Opting in pins the version it runs now; with the flag on but another version reviewed, it re-pins.
          <form method="post" action={`${base}/trust`}>
            <Csrf token={csrf} />
            <input type="hidden" name="trust" value={trustShown ? 'false' : 'true'} />
            <button type="submit" class={trustShown ? 'danger' : 'secondary'}>
              {trustShown ? 'Stop trusting this text' : `Trust this text (v${runsText?.version})`}
            </button>
          </form>
        ) : null}
        <p>
          <a href={`/console/w/${ws}/flows`}>Back to flows</a>
        </p>
      </>,
      error ? (error.status >= 400 ? error.status : 500) : 200,
    );
  };
  console_.get('/console/w/:ws/installations/:id', (c) => installationPage(c));
  /** A PATCH of the installation through the admin API; its refusal is shown on the installation's page. */
  const patchInstallation = async (c: C, body: Record<string, unknown>, done: string) => {
    const id = encodeURIComponent(c.req.param('id') ?? '');
    const answer = await api(c, 'PATCH', wsPath(c, `/installations/${id}`), body);
    if (answer.status === 403) return failed(c, 'Installation', 'flows', answer);
    if (answer.status !== 200) return installationPage(c, answer);
    return c.redirect(`/console/w/${c.req.param('ws')}/installations/${id}?done=${done}`, 303);
  };
  console_.post('/console/w/:ws/installations/:id/bindings', async (c) => {
    const form = await c.req.parseBody({ all: true });
    return patchInstallation(
      c,
      { slotBindings: { [formText(form, 'slot')]: formText(form, 'connectionId') } },
      'inst-bound',
    );
  });
  console_.post('/console/w/:ws/installations/:id/trust', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const trusted = formText(form, 'trust') === 'true';
    return patchInstallation(c, { trustMetadata: trusted }, trusted ? 'inst-trusted' : 'inst-untrusted');
  });
  console_.post('/console/w/:ws/installations/:id/version', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const pinned = formText(form, 'pinnedVersion');
    return patchInstallation(
      c,
      pinned ? { versionPolicy: 'pinned', pinnedVersion: Number(pinned) } : { versionPolicy: 'track-latest' },
      'inst-version',
    );
  });
  const flowPage = async (c: C, error?: string) => {
    const ws = c.req.param('ws') as string;
    const slug = c.req.param('slug') as string;
    const answer = await api(c, 'GET', wsPath(c, `/flows/${encodeURIComponent(slug)}`));
    if (answer.status !== 200) return failed(c, 'Flow', 'flows', answer);
    const flow = answer.body as FlowDetail;
    const csrf = c.get('csrf');
    const from = c.req.query('from');
    const to = c.req.query('to');
    const [liveText, connectionsAnswer] = await Promise.all([
      api(c, 'GET', wsPath(c, `/console/flows/${encodeURIComponent(slug)}/live-text`)),
      api(c, 'GET', wsPath(c, '/connections?limit=200')),
    ]);
    const connections =
      connectionsAnswer.status === 200 ? (connectionsAnswer.body as { items: Connection[] }).items : [];
    const trust =
      liveText.status === 200
        ? (liveText.body as { version: number | null; literal: string | null; trusted: boolean })
        : null;
    const diff =
      from && to
        ? await api(c, 'GET', wsPath(c, `/console/flows/${encodeURIComponent(slug)}/diff${qs({ from, to })}`))
        : null;
    const releaseForm = (version: number | null, label: string, danger = false) => (
      <form method="post" action={`/console/w/${ws}/flows/${flow.flowSlug}/release`} class="inline">
        <Csrf token={csrf} />
        {version !== null ? <input type="hidden" name="version" value={String(version)} /> : null}
        <button type="submit" class={danger ? 'danger' : 'secondary'}>
          {label}
        </button>
      </form>
    );
    return render(
      c,
      frameOf(c, `Flow ${flow.flowSlug}`, ws, 'flows'),
      <>
        <h1>
          {flow.name} <span class="muted mono">{flow.flowSlug}</span>
        </h1>
        {noticeOf(c)}
        {error ? <Notice kind="error">{error}</Notice> : null}
        <p>{flow.description ?? ''}</p>
        <p>
          Live: <strong>{flow.liveVersion === null ? 'not released' : `v${flow.liveVersion}`}</strong>
          {flow.tags.length > 0 ? <span class="muted"> · tags {flow.tags.join(', ')}</span> : null}
        </p>
        {flow.hasDraft ? (
          <form method="post" action={`/console/w/${ws}/flows/${flow.flowSlug}/release`} class="stack">
            <Csrf token={csrf} />
            <label>
              Release note
              <input name="releaseNote" maxlength={2000} />
            </label>
            <button type="submit">Release the draft</button>
          </form>
        ) : null}
        <h2>Versions</h2>
        {flow.versions.length === 0 ? (
          <Empty>No released versions yet; release the draft to make the flow live.</Empty>
        ) : (
          <Table columns={['Version', 'Released', 'Note', 'Action']}>
            {flow.versions.map((v) => (
              <tr>
                <td>
                  v{v.version} {v.version === flow.liveVersion ? <Badge value="live" /> : null}
                </td>
                <td>{when(v.createdAt)}</td>
                <td>{v.releaseNote ?? '—'}</td>
                <td>
                  {v.version === flow.liveVersion
                    ? null
                    : releaseForm(
                        v.version,
                        flow.liveVersion !== null && v.version < flow.liveVersion
                          ? `Roll back to v${v.version}`
                          : `Make v${v.version} live`,
                        flow.liveVersion !== null && v.version < flow.liveVersion,
                      )}
                </td>
              </tr>
            ))}
          </Table>
        )}
        {flow.versions.length > 1 ? (
          <>
            <h2>Compare versions</h2>
            <form method="get" action={`/console/w/${ws}/flows/${flow.flowSlug}`} class="filters">
              {(['from', 'to'] as const).map((side, k) => (
                <label>
                  {side === 'from' ? 'From' : 'To'}
                  <select name={side}>
                    {flow.versions.map((v) => (
                      <option
                        value={String(v.version)}
                        selected={
                          (side === 'from' ? from : to) === String(v.version) ||
                          ((side === 'from' ? from : to) === undefined &&
                            v === flow.versions[k === 0 ? 1 : 0])
                        }
                      >
                        v{v.version}
                      </option>
                    ))}
                  </select>
                </label>
              ))}
              <button type="submit" class="secondary">
                Show diff
              </button>
            </form>
            {diff && diff.status !== 200 ? <Notice kind="error">{message(diff)}</Notice> : null}
            {diff && diff.status === 200 ? (
              <pre tabindex={0}>{(diff.body as { patch: string }).patch}</pre>
            ) : null}
          </>
        ) : null}
        <h2>Metadata trust</h2>
        {trust?.literal == null ? (
          <Empty>
            Nothing to review yet: release a version first. Its text is untrusted until you opt in here.
          </Empty>
        ) : (
          <>
            <p>
              {trust.trusted
                ? `Trusted: models see the text below (v${trust.version}) as written by you.`
                : `Untrusted: models see this flow's authored text only as untrusted data. Opting in trusts exactly the text below (v${trust.version}); a later release is untrusted again until reviewed.`}
            </p>
            <pre tabindex={0}>{trust.literal}</pre>
            <form method="post" action={`/console/w/${ws}/flows/${flow.flowSlug}/trust`}>
              <Csrf token={csrf} />
              <input type="hidden" name="trust" value={trust.trusted ? 'false' : 'true'} />
              <button type="submit" class={trust.trusted ? 'danger' : 'secondary'}>
                {trust.trusted ? 'Stop trusting this text' : `Trust this text (v${trust.version})`}
              </button>
            </form>
          </>
        )}
        <h2>Bindings</h2>
        <p class="muted">
          Which connection fills each slot the flow requires, for live runs and for draft runs.
        </p>
        <Json value={flow.bindings} />
        {connections.length === 0 ? (
          <Empty>
            No connections to bind yet. <a href={`/console/w/${ws}/connections`}>Create one</a> first.
          </Empty>
        ) : (
          <form method="post" action={`/console/w/${ws}/flows/${flow.flowSlug}/bindings`} class="filters">
            <Csrf token={csrf} />
            <label>
              Slot
              <input name="slot" required maxlength={64} />
            </label>
            <label>
              Connection
              <select name="connectionId">
                {connections.map((x) => (
                  <option value={x.connectionId}>{x.name}</option>
                ))}
              </select>
            </label>
            <label>
              For
              <select name="target">
                <option value="live">live</option>
                <option value="draft">draft</option>
              </select>
            </label>
            <button type="submit" class="secondary">
              Bind slot
            </button>
          </form>
        )}
      </>,
      error ? 400 : 200,
    );
  };
  console_.get('/console/w/:ws/flows/:slug', (c) => flowPage(c));
  console_.post('/console/w/:ws/flows/:slug/bindings', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const slug = c.req.param('slug');
    const answer = await api(c, 'PUT', wsPath(c, `/flows/${encodeURIComponent(slug)}/bindings`), {
      target: formText(form, 'target') || 'live',
      slots: { [formText(form, 'slot')]: formText(form, 'connectionId') },
    });
    if (answer.status === 403) return failed(c, 'Flow', 'flows', answer);
    if (answer.status !== 200) return flowPage(c, message(answer));
    return c.redirect(`/console/w/${c.req.param('ws')}/flows/${encodeURIComponent(slug)}?done=bound`, 303);
  });
  console_.post('/console/w/:ws/flows/:slug/trust', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const trusted = formText(form, 'trust') === 'true';
    const slug = c.req.param('slug');
    const answer = await api(c, 'PATCH', wsPath(c, `/flows/${encodeURIComponent(slug)}`), {
      trustMetadata: trusted,
    });
    if (answer.status === 403) return failed(c, 'Flow', 'flows', answer);
    if (answer.status !== 200) return flowPage(c, message(answer));
    const done = trusted ? 'trusted' : 'untrusted';
    return c.redirect(`/console/w/${c.req.param('ws')}/flows/${encodeURIComponent(slug)}?done=${done}`, 303);
  });
  console_.post('/console/w/:ws/flows/:slug/release', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const version = formText(form, 'version');
    const note = formText(form, 'releaseNote');
    const slug = c.req.param('slug');
    const answer = await api(c, 'POST', wsPath(c, `/flows/${encodeURIComponent(slug)}/release`), {
      ...(version ? { version: Number(version) } : {}),
      ...(note ? { releaseNote: note } : {}),
    });
    if (answer.status === 403) return failed(c, 'Flow', 'flows', answer);
    if (answer.status !== 200) return flowPage(c, message(answer));
    return c.redirect(`/console/w/${c.req.param('ws')}/flows/${encodeURIComponent(slug)}?done=released`, 303);
  });

  // --- connect your agent -----------------------------------------------------------------------------------------
  console_.get('/console/w/:ws/connect', (c) => {
    const ws = c.req.param('ws') as string;
    const rawVar = c.req.query('var') ?? DEFAULT_TOKEN_ENV_VAR;
    const varName = isEnvVarName(rawVar) ? rawVar : DEFAULT_TOKEN_ENV_VAR;
    const transport: Transport = (TRANSPORTS as readonly string[]).includes(c.req.query('transport') ?? '')
      ? (c.req.query('transport') as Transport)
      : 'http';
    const apiUrl = deps.config.publicUrlConfigured ? deps.config.publicUrl : new URL(c.req.url).origin;
    const configs = PROVIDERS.map((provider) =>
      renderConfig({
        provider,
        transport,
        workspaceId: ws,
        apiUrl,
        tokenEnvVar: varName,
        narrowing: NO_FLAGS,
      }),
    );
    return render(
      c,
      frameOf(c, 'Connect your agent', ws, 'connect'),
      <>
        <h1>Connect your agent</h1>
        <p>
          Each entry references the key through the variable <code>{varName}</code>; the key itself never goes
          in a config file. Create a key on the <a href={`/console/w/${ws}/keys`}>keys page</a>, then{' '}
          <code>export {varName}=…</code> where the client runs.
        </p>
        {rawVar !== varName ? <Notice kind="error">Not a variable name; showing {varName}.</Notice> : null}
        <form method="get" action={`/console/w/${ws}/connect`} class="filters" data-autosubmit="">
          <label>
            Variable holding the key
            <input name="var" value={varName} maxlength={100} pattern="[A-Za-z_][A-Za-z0-9_]*" />
          </label>
          <label>
            Transport
            <select name="transport">
              {TRANSPORTS.map((t) => (
                <option value={t} selected={t === transport}>
                  {t === 'http' ? 'Streamable HTTP' : 'stdio (flowgate mcp stdio)'}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="secondary">
            Show configs
          </button>
        </form>
        {configs.map((cfg, i) => (
          <section aria-labelledby={`client-${cfg.provider}`}>
            <h2 id={`client-${cfg.provider}`}>{cfg.provider}</h2>
            <p class="muted">In {cfg.file}</p>
            <div class="secret">
              <label for={`config-${i}`} class="muted">
                {cfg.format.toUpperCase()} for {cfg.provider}
              </label>
              <button type="button" class="secondary" data-copy={`config-${i}`}>
                Copy
              </button>
            </div>
            <textarea
              id={`config-${i}`}
              readonly
              rows={Math.min(16, cfg.content.split('\n').length + 1)}
              class="mono wide"
            >
              {cfg.content}
            </textarea>
            {cfg.notes.length > 0 ? (
              <ul class="muted">
                {cfg.notes.map((n) => (
                  <li>{n}</li>
                ))}
              </ul>
            ) : null}
          </section>
        ))}
      </>,
    );
  });

  // --- MCP policy (edited through PUT …/mcp-policy) and the tools/list preview ----------------------------------
  const NARROWING_FIELDS = [
    ['x-mcp-toolsets', 'X-MCP-Toolsets', 'comma-separated toolsets'],
    ['x-mcp-tools', 'X-MCP-Tools', 'comma-separated tool names'],
    ['x-mcp-exclude-tools', 'X-MCP-Exclude-Tools', 'comma-separated tool names'],
    ['x-mcp-readonly', 'X-MCP-Readonly', 'true or false'],
  ] as const;
  const policyPage = async (c: C, extra: { error?: string; draft?: PolicyDraft }) => {
    const ws = c.req.param('ws') as string;
    const [policyAnswer, accountsAnswer] = await Promise.all([
      api(c, 'GET', wsPath(c, '/mcp-policy')),
      api(c, 'GET', wsPath(c, '/service-accounts?limit=200')),
    ]);
    if (policyAnswer.status !== 200) return failed(c, 'MCP policy', 'policy', policyAnswer);
    const policy = policyAnswer.body as {
      readOnly: boolean;
      disabledTools: string[];
      allowedOrigins: string[];
      allowedIps: string[];
      rateLimitPerMinute: number | null;
      updatedAt: string | null;
    };
    const accounts =
      accountsAnswer.status === 200 ? (accountsAnswer.body as { items: ServiceAccount[] }).items : [];
    const sa = c.req.query('sa') || accounts[0]?.serviceAccountId || '';
    const headerValues = Object.fromEntries(
      NARROWING_FIELDS.map(([name]) => [name, c.req.query(name) ?? '']),
    );
    const preview = sa
      ? await api(
          c,
          'GET',
          wsPath(c, `/console/tools-preview${qs({ serviceAccountId: sa, ...headerValues })}`),
        )
      : null;
    const result =
      preview?.status === 200
        ? (preview.body as { visible: string[]; hidden: { name: string; blockers: { reason: string }[] }[] })
        : null;
    const list = (items: string[]) =>
      items.length === 0 ? <span class="muted">none</span> : <code>{items.join(', ')}</code>;
    // After a refused save the form keeps what was typed; otherwise it shows the stored policy.
    const draft: PolicyDraft = extra.draft ?? {
      readOnly: policy.readOnly,
      disabledTools: policy.disabledTools,
      allowedOrigins: policy.allowedOrigins.join('\n'),
      allowedIps: policy.allowedIps.join('\n'),
      rateLimitPerMinute: policy.rateLimitPerMinute === null ? '' : String(policy.rateLimitPerMinute),
    };
    const csrf = c.get('csrf');
    return render(
      c,
      frameOf(c, 'MCP policy', ws, 'policy'),
      <>
        <h1>MCP policy</h1>
        {noticeOf(c)}
        {extra.error ? <Notice kind="error">{extra.error}</Notice> : null}
        <div class="scroll" tabindex={0}>
          <table>
            <tbody>
              <tr>
                <th scope="row">Read-only</th>
                <td>{policy.readOnly ? 'yes: mutating tools are hidden' : 'no'}</td>
              </tr>
              <tr>
                <th scope="row">Disabled tools</th>
                <td>{list(policy.disabledTools)}</td>
              </tr>
              <tr>
                <th scope="row">Allowed origins</th>
                <td>{list(policy.allowedOrigins)}</td>
              </tr>
              <tr>
                <th scope="row">IP allowlist</th>
                <td>{policy.allowedIps.length === 0 ? 'any address' : list(policy.allowedIps)}</td>
              </tr>
              <tr>
                <th scope="row">Rate limit</th>
                <td>
                  {policy.rateLimitPerMinute === null
                    ? 'deployment default per key'
                    : `${policy.rateLimitPerMinute} requests a minute per key`}
                </td>
              </tr>
            </tbody>
          </table>
        </div>
        <h2>Change the policy</h2>
        <p class="muted">
          The same change as <code>flowgate mcp-policy set</code> or <code>PUT …/mcp-policy</code>; it
          replaces every field below.
        </p>
        <form method="post" action={`/console/w/${ws}/policy`} class="stack">
          <Csrf token={csrf} />
          <label class="check">
            <input type="checkbox" name="readOnly" value="true" checked={draft.readOnly} />
            Read-only: hide mutating tools
          </label>
          <fieldset>
            <legend>Disabled tools</legend>
            {deps.toolNames.map((t) => (
              <label class="check mono">
                <input
                  type="checkbox"
                  name="disabledTools"
                  value={t}
                  checked={draft.disabledTools.includes(t)}
                />
                {t}
              </label>
            ))}
          </fieldset>
          <label>
            Allowed origins (one per line; empty allows any)
            <textarea name="allowedOrigins" rows={3} maxlength={16000} placeholder="https://app.example.com">
              {draft.allowedOrigins}
            </textarea>
          </label>
          <label>
            IP allowlist (addresses or CIDR ranges, one per line; empty allows any)
            <textarea name="allowedIps" rows={3} maxlength={8000} placeholder="203.0.113.0/24">
              {draft.allowedIps}
            </textarea>
          </label>
          <label>
            Rate limit per minute per key (empty for the deployment default)
            <input
              name="rateLimitPerMinute"
              inputmode="numeric"
              value={draft.rateLimitPerMinute}
              maxlength={16}
            />
          </label>
          <button type="submit">Save policy</button>
        </form>
        <h2>Preview the tool list</h2>
        {accounts.length === 0 ? (
          <Empty>
            No service accounts yet. <a href={`/console/w/${ws}/keys`}>Create one</a> to preview what its keys
            see.
          </Empty>
        ) : (
          <form method="get" action={`/console/w/${ws}/policy`} class="filters" data-autosubmit="">
            <label>
              Service account
              <select name="sa">
                {accounts.map((a) => (
                  <option value={a.serviceAccountId} selected={a.serviceAccountId === sa}>
                    {a.name}
                  </option>
                ))}
              </select>
            </label>
            {NARROWING_FIELDS.map(([name, label, hint]) => (
              <label>
                {label}
                <input name={name} value={headerValues[name]} placeholder={hint} maxlength={2000} />
              </label>
            ))}
            <button type="submit" class="secondary">
              Preview
            </button>
          </form>
        )}
        {preview && preview.status !== 200 ? <Notice kind="error">{message(preview)}</Notice> : null}
        {result ? (
          <section aria-live="polite" aria-labelledby="preview-visible">
            <h3 id="preview-visible">tools/list: {result.visible.length} tools</h3>
            {result.visible.length === 0 ? (
              <Empty>No tool is visible: grant capabilities to the account or loosen the headers.</Empty>
            ) : (
              <ul class="mono" id="visible-tools">
                {result.visible.map((t) => (
                  <li>{t}</li>
                ))}
              </ul>
            )}
            <h3>Hidden ({result.hidden.length})</h3>
            <Table columns={['Tool', 'Why']}>
              {result.hidden.map((h) => (
                <tr>
                  <td class="mono">{h.name}</td>
                  <td>{h.blockers.map((b) => b.reason).join(', ')}</td>
                </tr>
              ))}
            </Table>
          </section>
        ) : null}
      </>,
      extra.error ? 400 : 200,
    );
  };
  console_.get('/console/w/:ws/policy', (c) => policyPage(c, {}));
  console_.post('/console/w/:ws/policy', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const tools = form.disabledTools;
    const draft: PolicyDraft = {
      readOnly: formText(form, 'readOnly') === 'true',
      disabledTools: (Array.isArray(tools) ? tools : tools ? [tools] : []).filter(
        (x): x is string => typeof x === 'string',
      ),
      allowedOrigins: formText(form, 'allowedOrigins'),
      allowedIps: formText(form, 'allowedIps'),
      rateLimitPerMinute: formText(form, 'rateLimitPerMinute'),
    };
    const rate = draft.rateLimitPerMinute;
    const answer = await api(c, 'PUT', wsPath(c, '/mcp-policy'), {
      readOnly: draft.readOnly,
      disabledTools: draft.disabledTools,
      allowedOrigins: entries(draft.allowedOrigins),
      allowedIps: entries(draft.allowedIps),
      // Anything but digits goes to the API as typed, so its validation (not a silent NaN) answers.
      rateLimitPerMinute: rate === '' ? null : /^\d{1,15}$/.test(rate) ? Number(rate) : rate,
    });
    if (answer.status === 403) return failed(c, 'MCP policy', 'policy', answer);
    if (answer.status !== 200) return policyPage(c, { error: message(answer), draft });
    return c.redirect(`/console/w/${c.req.param('ws')}/policy?done=policy-saved`, 303);
  });
}

/** Mounts the admin console at /console (docs in README, "Admin console"). */
export const installConsole: RouteInstaller = (app, deps) => consoleRoutes(app, deps);
