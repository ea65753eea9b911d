/** @jsxImportSource hono/jsx */
/** What the console pages share: the request types, rendering, form helpers and the admin API shapes they read. */
import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { GatewayDeps } from '../app.js';
import type { AppEnv } from '../context.js';
import type { ApiAnswer } from './inner.js';
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

/** The API's error message, with its validation issues (`path: message`) so a form says which field was wrong. */
export function message(answer: ApiAnswer): string {
  const b = answer.body as { message?: unknown; issues?: unknown } | null;
  if (typeof b?.message !== 'string') return `request failed (${answer.status})`;
  const issues = Array.isArray(b.issues)
    ? b.issues.flatMap((i: { path?: unknown; message?: unknown }) =>
        typeof i?.path === 'string' && typeof i.message === 'string' ? [`${i.path}: ${i.message}`] : [],
      )
    : [];
  return issues.length > 0 ? `${b.message}: ${issues.join('; ')}` : b.message;
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
}

export interface ServiceAccount {
  serviceAccountId: string;
  name: string;
  capabilities: string[];
  status: string;
  createdAt: string;
}
export interface ApiKey {
  keyId: string;
  name: string | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}
export interface Run {
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
export interface RunDetail extends Run {
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
export interface FlowSummary {
  flowSlug: string;
  name: string;
  description: string | null;
  tags: string[];
  hasDraft: boolean;
  latestVersion: number | null;
  liveVersion: number | null;
}
export interface FlowDetail extends FlowSummary {
  versions: { version: number; releaseNote: string | null; createdAt: string }[];
  bindings: { live: Record<string, unknown>; draft: Record<string, unknown> };
}
export interface Installation {
  installationId: string;
  sourceWorkspaceId: string;
  flowSlug: string;
  versionPolicy: 'pinned' | 'track-latest';
  pinnedVersion: number | null;
  enabled: boolean;
  trustMetadata: boolean;
  slotBindings: Record<string, string>;
}

export interface Connection {
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
export interface ConnectionCheck {
  status: string;
  httpStatus: number | null;
  latencyMs: number | null;
  message: string | null;
}
export interface Feedback {
  feedbackId: string;
  area: string;
  summary: string;
  details: string | null;
  principalType: string;
  principalId: string;
  resourceUri: string | null;
  runId: string | null;
  flowSlug: string | null;
  context: Record<string, unknown> | null;
  createdAt: string;
}
export interface AuditRow {
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

export function noticeOf(c: C): Child {
  const key = c.req.query('done');
  const text = key ? NOTICES[key] : undefined;
  return text ? <Notice>{text}</Notice> : null;
}

/** What every console page gets: the app to route on, the deps, and the in-process admin API as the signed-in principal. */
export interface PageKit {
  app: Hono<Env>;
  deps: GatewayDeps;
  api: (c: C, method: string, path: string, body?: unknown) => Promise<ApiAnswer>;
  wsPath: (c: C, rest: string) => string;
  failed: (c: C, title: string, nav: PageFrame['nav'], answer: ApiAnswer) => Promise<Response>;
}
