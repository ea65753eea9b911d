/**
 * Connection management for workspace admins: create, change, rotate, disable and enable, with the rules that keep a
 * connection coherent (an auth type and its secret change together; a header name never outlives its api-key auth;
 * only an llm-provider has a model). Secrets are encrypted here and never come back out.
 */
import { AppError, type ConnectionType, newId } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { displayUrl, type SecretBox } from '@flowgate/secrets';
import { audited } from '../audit.js';
import type { Page } from '../flows/records.js';
import type { UseCaseContext } from '../scope.js';

export type ConnectionAuthInput =
  | { type: 'none' }
  | { type: 'bearer'; secret: string }
  | { type: 'api-key'; secret: string; headerName: string }
  | { type: 'basic'; secret: string };

export interface NewConnection {
  name: string;
  type: ConnectionType;
  baseUrl?: string | undefined;
  model?: string | undefined;
  auth: ConnectionAuthInput;
}

/** Only the given fields change; `secret` alone rotates under the current auth type, `auth` replaces both. */
export interface ConnectionChange {
  name?: string | undefined;
  baseUrl?: string | undefined;
  model?: string | undefined;
  secret?: string | undefined;
  auth?: ConnectionAuthInput | undefined;
}

/** A connection as its admins see it: whether it has a secret, never the secret. */
export interface ConnectionRecord {
  id: string;
  name: string;
  type: ConnectionType;
  /** Credentials trimmed, also from rows stored before they were refused in base URLs. */
  baseUrl: string | null;
  authType: string;
  hasSecret: boolean;
  headerName: string | null;
  model: string | null;
  status: 'active' | 'disabled';
  health: { ok: boolean; checkedAt: string; status?: number; message?: string } | null;
  createdAt: string;
}

export interface ConnectionAdminUseCases {
  create(input: NewConnection): Promise<ConnectionRecord>;
  /** In id order, so a cursor resumes exactly. */
  records(input: { limit: number; after: string | null }): Promise<Page<ConnectionRecord>>;
  update(id: string, change: ConnectionChange): Promise<ConnectionRecord>;
  rotate(id: string, secret: string): Promise<ConnectionRecord>;
  disable(id: string): Promise<ConnectionRecord>;
  enable(id: string): Promise<ConnectionRecord>;
}

export function connectionRecord(row: repos.ConnectionRow): ConnectionRecord {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    baseUrl: displayUrl(row.baseUrl),
    authType: row.authType,
    hasSecret: row.secretCiphertext !== null,
    headerName: row.config.headerName ?? null,
    model: row.config.model ?? null,
    status: row.status,
    health: row.health ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** What a change did, for the audit log: never the secret, only whether it was replaced (`rotated`). */
function changeAuditArgs(connectionId: string, change: ConnectionChange) {
  return {
    connectionId,
    ...(change.name !== undefined ? { name: change.name } : {}),
    ...(change.baseUrl !== undefined ? { baseUrl: displayUrl(change.baseUrl) } : {}),
    ...(change.model !== undefined ? { model: change.model } : {}),
    ...(change.auth !== undefined ? { authType: change.auth.type } : {}),
    ...(change.auth?.type === 'api-key' ? { headerName: change.auth.headerName } : {}),
    rotated: change.secret !== undefined || (change.auth !== undefined && 'secret' in change.auth),
  };
}

/**
 * Checks a change against the connection as it is and turns it into a row patch: the secret encrypted (the old
 * ciphertext is overwritten), config rebuilt so a header name never outlives its api-key auth.
 */
async function connectionPatch(
  ctx: UseCaseContext,
  box: SecretBox,
  current: repos.ConnectionRow,
  change: ConnectionChange,
): Promise<repos.ConnectionPatch> {
  const ws = current.workspaceId;
  if (change.secret !== undefined && current.authType === 'none') {
    throw new AppError(
      'invalid_request',
      'this connection has no authentication; set auth with a type and secret to add one',
    );
  }
  if (change.secret !== undefined && current.authType === 'basic' && !/^[^:]*:/s.test(change.secret)) {
    throw new AppError('invalid_request', 'basic auth secret is "user:password"');
  }
  if (change.model !== undefined && current.type !== 'llm-provider') {
    throw new AppError('invalid_request', 'only an llm-provider has a model');
  }
  if (change.auth?.type === 'none' && current.type === 'secret') {
    throw new AppError('invalid_request', 'a secret connection needs a secret');
  }
  if (change.name !== undefined && change.name !== current.name) {
    if (await repos.getConnectionByName(ctx.db, ws, change.name)) {
      throw new AppError('conflict', `a connection named ${change.name} already exists`);
    }
  }
  const patch: repos.ConnectionPatch = {};
  if (change.name !== undefined) patch.name = change.name;
  if (change.baseUrl !== undefined) patch.baseUrl = change.baseUrl;
  if (change.secret !== undefined) patch.secretCiphertext = box.encrypt(change.secret, ws);
  const config = { ...current.config };
  if (change.model !== undefined) config.model = change.model;
  if (change.auth !== undefined) {
    patch.authType = change.auth.type;
    patch.secretCiphertext = 'secret' in change.auth ? box.encrypt(change.auth.secret, ws) : null;
    delete config.headerName;
    if (change.auth.type === 'api-key') config.headerName = change.auth.headerName;
  }
  if (change.model !== undefined || change.auth !== undefined) patch.config = config;
  return patch;
}

const notFound = () => new AppError('not_found', 'connection not found');

export function connectionAdminUseCases(ctx: UseCaseContext): ConnectionAdminUseCases {
  const { db, workspaceId: ws, deps } = ctx;

  async function applyChange(id: string, change: ConnectionChange): Promise<ConnectionRecord> {
    const current = await repos.getConnection(db, ws, id);
    if (!current) throw notFound();
    const patch = await connectionPatch(ctx, deps.secretBox, current, change);
    const row = await repos.updateConnection(db, ws, id, patch);
    if (!row) throw notFound();
    return connectionRecord(row);
  }

  function setStatus(id: string, status: 'active' | 'disabled'): Promise<ConnectionRecord> {
    const action = status === 'active' ? 'connections.enable' : 'connections.disable';
    return audited(
      ctx,
      action,
      { ok: (r) => ({ arguments: { connectionId: id, name: r.name } }) },
      async () => {
        const row = await repos.updateConnection(db, ws, id, { status });
        if (!row) throw notFound();
        return connectionRecord(row);
      },
    );
  }

  return {
    create(input) {
      return audited(ctx, 'connections.create', { ok: () => ({ arguments: input }) }, async () => {
        const { auth } = input;
        const row = await repos.createConnection(db, ws, {
          id: newId('conn', 16),
          name: input.name,
          type: input.type,
          baseUrl: input.baseUrl ?? null,
          authType: auth.type,
          secretCiphertext: 'secret' in auth ? deps.secretBox.encrypt(auth.secret, ws) : null,
          config: {
            ...(auth.type === 'api-key' ? { headerName: auth.headerName } : {}),
            ...(input.model !== undefined ? { model: input.model } : {}),
          },
        });
        if (!row) throw new AppError('conflict', `a connection named ${input.name} already exists`);
        return connectionRecord(row);
      });
    },
    async records({ limit, after }) {
      const rows = await repos.listConnections(db, ws, { limit: limit + 1, afterId: after ?? undefined });
      const items = rows.slice(0, limit).map(connectionRecord);
      return { items, nextAfter: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
    },
    update(id, change) {
      return audited(
        ctx,
        'connections.update',
        { ok: () => ({ arguments: changeAuditArgs(id, change) }) },
        () => applyChange(id, change),
      );
    },
    rotate(id, secret) {
      return audited(
        ctx,
        'connections.rotate',
        { ok: (r) => ({ arguments: { connectionId: id, name: r.name } }) },
        () => applyChange(id, { secret }),
      );
    },
    disable: (id) => setStatus(id, 'disabled'),
    enable: (id) => setStatus(id, 'active'),
  };
}
