/** @jsxImportSource hono/jsx */
/** What the console pages share: the request types, rendering and form helpers. */
import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { GatewayDeps } from '../app.js';
import type { AppEnv } from '../context.js';
import type { AdminClient, Refusal } from './api.js';
import type { ConsoleSession } from './session.js';
import { Layout, Notice, type PageFrame } from './views.js';

export type Env = AppEnv & { Variables: { consoleSession: ConsoleSession; csrf: string } };
export type C = Context<Env>;

/** A run's HTML result: no script, no network, its own origin (sandbox), framed only by the console. */
export const RESULT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; sandbox";
export const PAGE_SIZE = 20;

export async function render(c: Context, frame: PageFrame, body: Child, status = 200) {
  const page = <Layout {...frame}>{body}</Layout>;
  return c.html(html`<!DOCTYPE html>${page}`, status as 200);
}

export function frameOf(c: C, title: string, ws: string | null, nav: PageFrame['nav']): PageFrame {
  const session = c.get('consoleSession');
  return {
    title,
    workspaceId: ws,
    nav,
    csrf: c.get('csrf'),
    operator: session.principal.kind === 'operator',
  };
}

export function formText(form: Record<string, unknown>, name: string): string {
  const raw = form[name];
  const v = Array.isArray(raw) ? raw[0] : raw;
  return typeof v === 'string' ? v.trim() : '';
}

export function qs(params: Record<string, string | number | null | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Splits a textarea of one entry per line (commas also accepted) into its non-empty entries. */
export function entries(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** The policy form's fields as typed, so a refused save can show them again. */
export interface PolicyDraft {
  readOnly: boolean;
  disabledTools: string[];
  allowedOrigins: string;
  allowedIps: string;
  rateLimitPerMinute: string;
  /** Quotas as typed; empty: none. */
  quotas: { runsPerMonth: string; llmTokensPerMonth: string; toolCallsPerDay: string };
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

export function noticeOf(c: C): Child {
  const key = c.req.query('done');
  const text = key ? NOTICES[key] : undefined;
  return text ? <Notice>{text}</Notice> : null;
}

/** What every console page gets: the app to route on, the deps, and the in-process admin API as the signed-in principal. */
export interface PageKit {
  app: Hono<Env>;
  deps: GatewayDeps;
  api: (c: C) => AdminClient;
  /** The path parameter of the page's workspace, for the admin API's `/api/workspaces/:ws/…` routes. */
  wsParam: (c: C) => { ws: string };
  /** A refused admin call as the whole page: a 403 stays a 403, whatever the page. */
  failed: (c: C, title: string, nav: PageFrame['nav'], refused: Refusal) => Promise<Response>;
}
