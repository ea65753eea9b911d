import type { Authenticator, Principal } from '@flowgate/auth';
import { capabilitySchema } from '@flowgate/auth';
import { hmacSha256, randomBytes, timingSafeEqualText, toBase64Url } from '@flowgate/core';
import { type ConsoleSessionKind, consoleSessions, type WorkspaceDeps } from '@flowgate/workspace';
import { z } from 'zod';

/** A console session lasts at most this long, and never past the signing-in token's own expiry. */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** A one-time sign-in link is good for this long (and once). */
export const SIGN_IN_CODE_TTL_MS = 10 * 60 * 1000;

/** What a session acts as. Service-account keys are never workspace admins, so they never get here. */
export type ConsolePrincipal = Extract<Principal, { kind: 'operator' } | { kind: 'user' }>;

export interface ConsoleSession {
  principal: ConsolePrincipal;
  /** Workspace ids the session may open; `*` for the operator. */
  workspaces: readonly string[];
  /** What the CSRF token of this session is derived from (the hash, never the cookie value). */
  idHash: string;
  expiresAt: Date;
}

const storedPrincipal = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('operator') }),
  z.strictObject({
    kind: z.literal('user'),
    id: z.string().min(1).max(256),
    workspaces: z.record(
      z.string(),
      z.strictObject({
        role: z.enum(['admin', 'editor', 'viewer']).nullable(),
        capabilities: z.array(capabilitySchema),
      }),
    ),
    expiresAt: z.string().datetime().nullable(),
  }),
]);

function storePrincipal(p: ConsolePrincipal): z.infer<typeof storedPrincipal> {
  if (p.kind === 'operator') return { kind: 'operator' };
  return {
    kind: 'user',
    id: p.id,
    workspaces: Object.fromEntries(
      [...p.workspaces].map(([ws, m]) => [ws, { role: m.role, capabilities: [...m.capabilities] }]),
    ),
    expiresAt: p.expiresAt?.toISOString() ?? null,
  };
}

function loadPrincipal(value: unknown): ConsolePrincipal | null {
  const parsed = storedPrincipal.safeParse(value);
  if (!parsed.success) return null;
  const p = parsed.data;
  if (p.kind === 'operator') return { kind: 'operator', id: 'operator' };
  return {
    kind: 'user',
    id: p.id,
    workspaces: new Map(
      Object.entries(p.workspaces).map(([ws, m]) => [
        ws,
        { role: m.role, capabilities: new Set(m.capabilities) },
      ]),
    ),
    expiresAt: p.expiresAt ? new Date(p.expiresAt) : null,
  };
}

/** The database sessions are stored in (the one the workspace use cases run on). */
type Database = WorkspaceDeps['db'];

export type SignInResult =
  | { ok: true; principal: ConsolePrincipal; workspaces: string[] }
  | { ok: false; message: string };

/**
 * Who a token may sign in as: the operator, or a user whose JWT makes it admin of at least one workspace. The
 * workspaces are the ones it administers, as the admin API's guard would decide.
 */
export async function principalForToken(authenticator: Authenticator, token: string): Promise<SignInResult> {
  const refused = { ok: false as const, message: 'that token cannot sign in to the console' };
  const result = await authenticator.authenticate(token);
  if (!result.ok) return refused;
  const p = result.principal;
  if (p.kind === 'operator') return { ok: true, principal: p, workspaces: ['*'] };
  if (p.kind === 'service_account') {
    return {
      ok: false,
      message: 'service-account keys cannot manage a workspace; sign in with a workspace-admin token',
    };
  }
  const admin = [...p.workspaces.keys()].filter((ws) => {
    const access = authenticator.resolveAccess(p, ws);
    return access.ok && access.access.isAdmin;
  });
  if (admin.length === 0) return refused;
  return { ok: true, principal: p, workspaces: admin };
}

function insert(
  db: Database,
  kind: ConsoleSessionKind,
  principal: ConsolePrincipal,
  workspaces: string[],
  expiresAt: Date,
): Promise<string> {
  return consoleSessions(db).issue(kind, { principal: storePrincipal(principal), workspaces, expiresAt });
}

/** A new session; returns the cookie value (stored only as its hash). */
export async function createSession(
  db: Database,
  signIn: { principal: ConsolePrincipal; workspaces: string[] },
  now: Date,
): Promise<{ id: string; expiresAt: Date }> {
  let expires = now.getTime() + SESSION_TTL_MS;
  if (signIn.principal.kind === 'user' && signIn.principal.expiresAt) {
    expires = Math.min(expires, signIn.principal.expiresAt.getTime());
  }
  const expiresAt = new Date(expires);
  // Sign-ins are rare, so each one also clears rows that expired more than a day ago; the table stays small
  // without a timer of its own.
  await consoleSessions(db).prune(new Date(now.getTime() - 24 * 60 * 60 * 1000));
  return { id: await insert(db, 'session', signIn.principal, signIn.workspaces, expiresAt), expiresAt };
}

/**
 * A one-time sign-in code for the admins of one workspace (`flowgate dev` prints it as a link). The session it
 * turns into acts as a user who is admin of that workspace alone.
 */
export async function createSignInCode(db: Database, workspaceId: string, now = new Date()): Promise<string> {
  const principal: ConsolePrincipal = {
    kind: 'user',
    id: 'console-link',
    workspaces: new Map([[workspaceId, { role: 'admin', capabilities: new Set() }]]),
    expiresAt: null,
  };
  return insert(db, 'code', principal, [workspaceId], new Date(now.getTime() + SIGN_IN_CODE_TTL_MS));
}

/** Trades a one-time code for a session (at most once); null when the code is unknown, used or expired. */
export async function redeemSignInCode(
  db: Database,
  code: string,
  now: Date,
): Promise<{ id: string; expiresAt: Date } | null> {
  const row = await consoleSessions(db).revoke('code', code, now);
  if (!row) return null;
  const principal = loadPrincipal(row.principal);
  if (!principal) return null;
  return createSession(db, { principal, workspaces: row.workspaces }, now);
}

export async function readSession(db: Database, id: string, now: Date): Promise<ConsoleSession | null> {
  const row = await consoleSessions(db).find('session', id, now);
  if (!row) return null;
  const principal = loadPrincipal(row.principal);
  if (!principal) return null;
  return { principal, workspaces: row.workspaces, idHash: row.idHash, expiresAt: row.expiresAt };
}

export async function revokeSession(db: Database, id: string, now: Date): Promise<void> {
  await consoleSessions(db).revoke('session', id, now);
}

export function mayOpen(session: ConsoleSession, workspaceId: string): boolean {
  return session.workspaces.includes('*') || session.workspaces.includes(workspaceId);
}

/**
 * The session's CSRF token: an HMAC of the session's id hash, so it needs no storage, differs per session, and
 * cannot be forged without the deployment's key. Every form carries it; every POST must send it back.
 */
export function csrfToken(key: Uint8Array, session: ConsoleSession): string {
  return toBase64Url(hmacSha256(key, `console-csrf:${session.idHash}`));
}

export function sameToken(a: string, b: string): boolean {
  return timingSafeEqualText(a, b);
}

export function randomToken(): string {
  return toBase64Url(randomBytes(32));
}
