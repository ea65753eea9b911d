/**
 * Connection management for workspace admins: create, change, rotate, disable and enable, with the rules that keep a
 * connection coherent (an auth type and its secret change together; a header name never outlives its api-key auth;
 * only an llm-provider has a model; only an mcp-server has fixed headers). Secrets are encrypted here and never come
 * back out.
 */
import { AppError, type ConnectionType, newId } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { displayUrl, fixedHeaders, type SecretBox } from '@flowgate/secrets';
import { audited } from '../audit.js';
import type { Page } from '../flows/records.js';
import type { UseCaseContext } from '../scope.js';
import {
  fixedHeaderConfig,
  fixedHeaderNames,
  fixedHeaderProblems,
  RESERVED_HEADER_NAMES,
  withoutFixedHeaders,
} from './headers.js';

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
  /** An mcp-server's fixed headers, name → value: not secrets (stored and shown in plain text). */
  headers?: Record<string, string> | undefined;
}

/** Only the given fields change; `secret` alone rotates under the current auth type, `auth` replaces both. */
export interface ConnectionChange {
  name?: string | undefined;
  baseUrl?: string | undefined;
  model?: string | undefined;
  secret?: string | undefined;
  auth?: ConnectionAuthInput | undefined;
  /** Replaces the whole set of an mcp-server's fixed headers (`{}` removes them). */
  headers?: Record<string, string> | undefined;
}

/** What an mcp-server's last check found, without the tool names. */
export interface McpHealthSummary {
  protocolVersion: string;
  serverName: string;
  serverVersion?: string;
  toolCount: number;
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
  /** Names of an mcp-server's fixed headers; their values are not returned. */
  fixedHeaderNames: string[];
  status: 'active' | 'disabled';
  health: {
    ok: boolean;
    checkedAt: string;
    status?: number;
    message?: string;
    mcp?: McpHealthSummary;
  } | null;
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

/** The stored MCP findings of a connection's last check, without the tool names. */
export function mcpHealthSummary(row: repos.ConnectionRow): McpHealthSummary | undefined {
  const mcp = row.health?.mcp;
  if (!mcp) return undefined;
  return {
    protocolVersion: mcp.protocolVersion,
    serverName: mcp.serverName,
    ...(mcp.serverVersion !== undefined ? { serverVersion: mcp.serverVersion } : {}),
    toolCount: mcp.toolCount,
  };
}

export function connectionRecord(row: repos.ConnectionRow): ConnectionRecord {
  const mcp = mcpHealthSummary(row);
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    baseUrl: displayUrl(row.baseUrl),
    authType: row.authType,
    hasSecret: row.secretCiphertext !== null,
    headerName: row.config.headerName ?? null,
    model: row.config.model ?? null,
    fixedHeaderNames: fixedHeaderNames(row.config),
    status: row.status,
    health: row.health
      ? {
          ok: row.health.ok,
          checkedAt: row.health.checkedAt,
          ...(row.health.status !== undefined ? { status: row.health.status } : {}),
          ...(row.health.message !== undefined ? { message: row.health.message } : {}),
          ...(mcp ? { mcp } : {}),
        }
      : null,
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
    // Names only: the values are not secrets, but an audit row says what changed, not the configuration.
    ...(change.headers !== undefined ? { headers: Object.keys(change.headers).sort() } : {}),
    rotated: change.secret !== undefined || (change.auth !== undefined && 'secret' in change.auth),
  };
}

const RESERVED = new Set<string>(RESERVED_HEADER_NAMES);

/**
 * The rules of an mcp-server's auth and fixed headers: no basic auth (the protocol's servers take bearer tokens or
 * keys), an api-key header the protocol does not own, and fixed headers that are neither reserved nor secret-looking.
 */
function mcpServerRules(auth: ConnectionAuthInput | null, headers: Record<string, string> | null): void {
  if (auth?.type === 'basic') {
    throw new AppError('invalid_request', 'an mcp-server authenticates with none, bearer or api-key', [
      { path: 'auth.type', message: 'an mcp-server authenticates with none, bearer or api-key' },
    ]);
  }
  const keyHeader = auth?.type === 'api-key' ? auth.headerName : null;
  if (keyHeader !== null && RESERVED.has(keyHeader.toLowerCase())) {
    const message = `${keyHeader} is set by Flowgate or the protocol and cannot carry the api key`;
    throw new AppError('invalid_request', message, [{ path: 'auth.headerName', message }]);
  }
  if (headers === null) return;
  const issues = fixedHeaderProblems(headers, keyHeader);
  const first = issues[0];
  if (first) {
    throw new AppError('invalid_request', `fixed header refused: ${first.path}: ${first.message}`, issues);
  }
}

/** The auth of a stored connection as the rules see it (no secret needed). */
function currentAuth(row: repos.ConnectionRow): ConnectionAuthInput | null {
  if (row.authType === 'api-key') {
    return { type: 'api-key', secret: '', headerName: row.config.headerName ?? 'X-API-Key' };
  }
  return null;
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
  if (change.headers !== undefined && current.type !== 'mcp-server') {
    throw new AppError('invalid_request', 'only an mcp-server has fixed headers');
  }
  if (current.type === 'mcp-server' && (change.auth !== undefined || change.headers !== undefined)) {
    mcpServerRules(change.auth ?? currentAuth(current), change.headers ?? fixedHeaders(current.config));
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
  let config = { ...current.config };
  if (change.model !== undefined) config.model = change.model;
  if (change.headers !== undefined) {
    config = { ...withoutFixedHeaders(config), ...fixedHeaderConfig(change.headers) };
    // What the server lists may depend on them (a tenant header): the last check described other requests.
    patch.health = null;
  }
  if (change.auth !== undefined) {
    patch.authType = change.auth.type;
    patch.secretCiphertext = 'secret' in change.auth ? box.encrypt(change.auth.secret, ws) : null;
    delete config.headerName;
    if (change.auth.type === 'api-key') config.headerName = change.auth.headerName;
  }
  if (change.model !== undefined || change.auth !== undefined || change.headers !== undefined) {
    patch.config = config;
  }
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
      const auditArgs = {
        ...input,
        ...(input.headers !== undefined ? { headers: Object.keys(input.headers).sort() } : {}),
      };
      return audited(ctx, 'connections.create', { ok: () => ({ arguments: auditArgs }) }, async () => {
        const { auth } = input;
        if (input.model !== undefined && input.type !== 'llm-provider') {
          throw new AppError('invalid_request', 'only an llm-provider has a model');
        }
        if (input.headers !== undefined && input.type !== 'mcp-server') {
          throw new AppError('invalid_request', 'only an mcp-server has fixed headers');
        }
        if (input.type === 'mcp-server') mcpServerRules(auth, input.headers ?? null);
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
            ...fixedHeaderConfig(input.headers ?? {}),
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
