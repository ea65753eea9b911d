/**
 * Connections as readers see them — never a secret, a config value or credentials in a base URL — and health
 * checks: one bounded request per connection, defined by its type, under the outbound address policy (an
 * mcp-server's check is the protocol's own: a session that lists the tools).
 */
import { AppError, type ConnectionType } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { checkHost, isBlockedAddress } from '@flowgate/run-engine';
import { authHeaders, fixedHeaders, redactString } from '@flowgate/secrets';
import { audited } from '../audit.js';
import type { Page } from '../flows/records.js';
import type { McpCheckResult, UseCaseContext } from '../scope.js';
import {
  type ConnectionAdminUseCases,
  connectionAdminUseCases,
  type McpHealthSummary,
  mcpHealthSummary,
} from './manage.js';
import { probe } from './probe.js';
import { safeBaseUrl, safeText } from './sanitize.js';

const CHECK_CONCURRENCY = 4;
/** Tool names kept from an mcp-server's check (for readiness); the count is always the whole list's. */
export const MAX_STORED_MCP_TOOLS = 200;
const MAX_MCP_TOOL_NAME = 128;
const MAX_MCP_LABEL = 200;
const MAX_CHECK_MESSAGE = 500;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const LINE_BREAKING = /[\s\u0000-\u001f\u007f]+/g;

/** What an mcp-server's last check found, as list_connections and check_connections show it. */
export interface McpCheckSummary {
  protocolVersion: string;
  serverName: string;
  toolCount: number;
}

export interface ConnectionSummary {
  id: string;
  name: string;
  type: ConnectionType;
  /** Scheme, host, port and path only; secret-looking path segments shown as `[redacted]`. */
  baseUrl: string | null;
  authType: string;
  status: 'active' | 'disabled';
  health: { ok: boolean; checkedAt: string; httpStatus: number | null; message: string | null } | null;
  /** An mcp-server's last successful check; absent for other types and before one. */
  mcp?: McpCheckSummary;
  /** Names of the non-secret config entries; values are never returned. */
  configKeys: string[];
  boundSlots: { flowSlug: string; slot: string; target: string }[];
  createdAt: string;
}

export interface ConnectionCheck {
  connectionId: string;
  name: string;
  type: ConnectionType;
  ok: boolean;
  status: 'healthy' | 'unhealthy' | 'disabled';
  httpStatus: number | null;
  latencyMs: number | null;
  message: string | null;
  checkedAt: string;
  /** What an mcp-server's check found; absent for other types and when the check failed. */
  mcp?: McpCheckSummary;
}

export interface ConnectionChecks {
  items: ConnectionCheck[];
  /** Ids asked for that do not exist in the workspace. */
  unknownConnectionIds: string[];
  nextAfter: string | null;
}

/** Where a connection is bound: own flows' slots (per target) and installations' slots. */
export interface ConnectionUsageRecord {
  flowBindings: Array<{ flowSlug: string; target: 'live' | 'draft'; slot: string }>;
  installationBindings: Array<{ installationId: string; flowSlug: string; slot: string }>;
}

/** What deleting a connection unbound (empty unless forced). */
export interface ConnectionRemoval {
  connectionId: string;
  name: string;
  unbound: ConnectionUsageRecord;
}

export interface ConnectionUseCases extends ConnectionAdminUseCases {
  /** In id order, so a cursor resumes exactly. */
  list(input: { limit: number; after: string | null }): Promise<Page<ConnectionSummary>>;
  /** Health-checks `connectionIds` (all of them, ignoring the page) or, when null, one page of all connections. */
  check(input: {
    connectionIds: string[] | null;
    limit: number;
    after: string | null;
  }): Promise<ConnectionChecks>;
  /** Health-checks one connection (not_found when it is not in the workspace). */
  checkOne(connectionId: string): Promise<ConnectionCheck>;
  /**
   * Deletes a connection and its secret. Refused (conflict, every binding named) while flows or installations are
   * bound to it, unless `force`: then those bindings are removed first and the installations disabled.
   */
  remove(input: { connectionId: string; force: boolean }): Promise<ConnectionRemoval>;
}

function usageLines(usage: ConnectionUsageRecord): string[] {
  return [
    ...usage.flowBindings.map((b) => `flow ${b.flowSlug} (${b.target}) slot :${b.slot}`),
    ...usage.installationBindings.map(
      (b) => `installation ${b.installationId} (${b.flowSlug}) slot :${b.slot}`,
    ),
  ];
}

function compactMcp(mcp: McpHealthSummary | undefined): { mcp?: McpCheckSummary } {
  return mcp
    ? { mcp: { protocolVersion: mcp.protocolVersion, serverName: mcp.serverName, toolCount: mcp.toolCount } }
    : {};
}

/** Remote text, untrusted: one line, no control characters, bounded. */
function remoteLabel(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : '';
  return text.replace(LINE_BREAKING, ' ').trim().slice(0, max);
}

/** The tool names a check stores: strings of a callable length, each once, at most MAX_STORED_MCP_TOOLS. */
function storedToolNames(tools: readonly unknown[]): string[] {
  const names = new Set<string>();
  for (const t of tools) {
    if (names.size >= MAX_STORED_MCP_TOOLS) break;
    if (typeof t === 'string' && t.length > 0 && t.length <= MAX_MCP_TOOL_NAME) names.add(t);
  }
  return [...names];
}

function summary(
  row: repos.ConnectionRow,
  slots: Array<{ flowSlug: string; slot: string; target: string }>,
): ConnectionSummary {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    baseUrl: safeBaseUrl(row.baseUrl),
    authType: row.authType,
    status: row.status,
    health: row.health
      ? {
          ok: row.health.ok,
          checkedAt: row.health.checkedAt,
          httpStatus: row.health.status ?? null,
          message: safeText(row.health.message ?? null),
        }
      : null,
    ...compactMcp(mcpHealthSummary(row)),
    configKeys: Object.keys(row.config).sort(),
    boundSlots: slots,
    createdAt: row.createdAt.toISOString(),
  };
}

export function connectionUseCases(ctx: UseCaseContext): ConnectionUseCases {
  const { db, workspaceId: ws, deps } = ctx;
  const timeoutMs = deps.outbound.timeoutMs;

  async function checkOne(row: repos.ConnectionRow): Promise<ConnectionCheck> {
    const checkedAt = ctx.now().toISOString();
    const base = { connectionId: row.id, name: row.name, type: row.type, checkedAt };
    if (row.status === 'disabled') {
      return {
        ...base,
        ok: false,
        status: 'disabled',
        httpStatus: null,
        latencyMs: null,
        message: 'connection is disabled',
      };
    }
    // Decrypted here and only for the request; it never leaves this function.
    const secret = row.secretCiphertext ? deps.secretBox.decrypt(row.secretCiphertext, ws) : null;
    if (row.type === 'secret' || !row.baseUrl) {
      const ok = secret !== null;
      return {
        ...base,
        ok,
        status: ok ? 'healthy' : 'unhealthy',
        httpStatus: null,
        latencyMs: null,
        message: ok ? 'secret is stored' : 'no secret stored',
      };
    }
    if (row.type === 'mcp-server') return checkMcpServer(row, row.baseUrl, secret, base);
    const target = new URL(
      row.type === 'llm-provider' ? `${row.baseUrl.replace(/\/+$/, '')}/models` : row.baseUrl,
    );
    let result: ConnectionCheck;
    try {
      const res = await probe(target, {
        headers: { accept: 'application/json', ...authHeaders(row, secret) },
        timeoutMs,
        allowPrivate: deps.outbound.allowPrivateNetwork,
      });
      // One rule for every type (README, "Connection health"): healthy = the system answered and did not reject the
      // credentials. A 404 on the probed path says the host is up; the path is only a guess at what it serves.
      const rejected = res.status === 401 || res.status === 403;
      const ok = res.status < 500 && !rejected;
      const message = rejected
        ? 'credentials were rejected'
        : res.status >= 300
          ? `${ok ? 'reachable; ' : ''}answered HTTP ${res.status}`
          : null;
      result = {
        ...base,
        ok,
        status: ok ? 'healthy' : 'unhealthy',
        httpStatus: res.status,
        latencyMs: res.latencyMs,
        message,
      };
    } catch (err) {
      const reason =
        err instanceof AppError
          ? err.message
          : (err as Error).name === 'TimeoutError'
            ? `no answer within ${timeoutMs} ms`
            : 'could not connect';
      result = {
        ...base,
        ok: false,
        status: 'unhealthy',
        httpStatus: null,
        latencyMs: null,
        message: reason,
      };
    }
    result.message =
      result.message === null ? null : redactString(result.message, { knownSecrets: secret ? [secret] : [] });
    await repos.setConnectionHealth(db, ws, row.id, {
      ok: result.ok,
      checkedAt,
      ...(result.httpStatus !== null ? { status: result.httpStatus } : {}),
      ...(result.message !== null ? { message: result.message } : {}),
    });
    return { ...result, message: safeText(result.message) };
  }

  /**
   * The protocol's own check: a session is opened (version negotiation included), the tools are listed and the
   * session closed, through the deployment's MCP port. Only names, versions and the count are kept.
   */
  async function checkMcpServer(
    row: repos.ConnectionRow,
    baseUrl: string,
    secret: string | null,
    base: Pick<ConnectionCheck, 'connectionId' | 'name' | 'type' | 'checkedAt'>,
  ): Promise<ConnectionCheck> {
    const known = { knownSecrets: secret ? [secret] : [] };
    const fail = async (message: string): Promise<ConnectionCheck> => {
      const redacted = redactString(message, known).slice(0, MAX_CHECK_MESSAGE);
      await repos.setConnectionHealth(db, ws, row.id, {
        ok: false,
        checkedAt: base.checkedAt,
        message: redacted,
      });
      return {
        ...base,
        ok: false,
        status: 'unhealthy',
        httpStatus: null,
        latencyMs: null,
        message: safeText(redacted),
      };
    };
    if (!deps.mcpCheck) return fail('this deployment cannot check MCP servers (no MCP client configured)');
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return fail('only http and https URLs can be called');
    // Literal and local addresses are refused before any request; names are checked again where they resolve.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    try {
      checkHost(host, deps.outbound.allowPrivateNetwork ? undefined : isBlockedAddress);
    } catch {
      return fail(`${host} is a private or loopback address, which this deployment does not allow`);
    }
    const started = performance.now();
    let found: McpCheckResult;
    try {
      found = await deps.mcpCheck({
        url,
        // The auth header last: a fixed header can never stand in for it (the rules refuse the name anyway).
        headers: { ...fixedHeaders(row.config), ...authHeaders(row, secret) },
        timeoutMs,
        allowPrivateNetwork: deps.outbound.allowPrivateNetwork,
      });
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      const reason =
        error.name === 'TimeoutError' || error.name === 'AbortError'
          ? `no answer within ${timeoutMs} ms`
          : remoteLabel(error.message, MAX_CHECK_MESSAGE) || 'could not connect';
      return fail(`MCP check failed: ${reason}`);
    }
    const latencyMs = Math.round(performance.now() - started);
    const tools = Array.isArray(found.tools) ? found.tools : [];
    const serverVersion = remoteLabel(found.serverVersion, MAX_MCP_LABEL);
    const mcp = {
      protocolVersion: remoteLabel(found.protocolVersion, 64),
      serverName: remoteLabel(found.serverName, MAX_MCP_LABEL),
      ...(serverVersion ? { serverVersion } : {}),
      toolCount: tools.length,
      tools: storedToolNames(tools),
    };
    // A server's own name or version could echo what we sent it; never store our secret.
    mcp.serverName = redactString(mcp.serverName, known);
    if (mcp.serverVersion !== undefined) mcp.serverVersion = redactString(mcp.serverVersion, known);
    await repos.setConnectionHealth(db, ws, row.id, { ok: true, checkedAt: base.checkedAt, mcp });
    return {
      ...base,
      ok: true,
      status: 'healthy',
      httpStatus: null,
      latencyMs,
      message: null,
      mcp: { protocolVersion: mcp.protocolVersion, serverName: mcp.serverName, toolCount: mcp.toolCount },
    };
  }

  async function checkAll(rows: repos.ConnectionRow[]): Promise<ConnectionCheck[]> {
    const out: ConnectionCheck[] = new Array(rows.length);
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const i = next++;
        out[i] = await checkOne(rows[i] as repos.ConnectionRow);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHECK_CONCURRENCY, rows.length) }, worker));
    return out;
  }

  async function check({
    connectionIds,
    limit,
    after,
  }: {
    connectionIds: string[] | null;
    limit: number;
    after: string | null;
  }): Promise<ConnectionChecks> {
    if (connectionIds) {
      const unique = [...new Set(connectionIds)];
      const rows = await repos.listConnections(db, ws, { limit: unique.length, ids: unique });
      const found = new Set(rows.map((r) => r.id));
      return {
        items: await checkAll(rows),
        unknownConnectionIds: unique.filter((id) => !found.has(id)),
        nextAfter: null,
      };
    }
    const rows = await repos.listConnections(db, ws, { limit: limit + 1, afterId: after ?? undefined });
    const page = rows.slice(0, limit);
    return {
      items: await checkAll(page),
      unknownConnectionIds: [],
      nextAfter: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
    };
  }

  return {
    ...connectionAdminUseCases(ctx),
    async list({ limit, after }) {
      const rows = await repos.listConnections(db, ws, { limit: limit + 1, afterId: after ?? undefined });
      const page = rows.slice(0, limit);
      const slots = await repos.listBindingsForConnections(
        db,
        ws,
        page.map((r) => r.id),
      );
      return {
        items: page.map((r) =>
          summary(
            r,
            slots.filter((s) => s.connectionId === r.id).map(({ connectionId: _c, ...s }) => s),
          ),
        ),
        nextAfter: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
      };
    },
    remove({ connectionId, force }) {
      return audited(
        ctx,
        'connections.delete',
        { ok: (removed) => ({ arguments: { ...removed, force } }) },
        async () => {
          const row = await repos.getConnection(db, ws, connectionId);
          if (!row) throw new AppError('not_found', 'connection not found');
          const outcome = await repos.deleteConnection(db, ws, connectionId, { force });
          if (!outcome) throw new AppError('not_found', 'connection not found');
          if (!outcome.deleted) {
            const lines = usageLines(outcome.usage);
            throw new AppError(
              'conflict',
              `connection ${row.name} is bound to ${lines.join(', ')}; unbind it first or delete with force`,
              lines.map((message) => ({ path: 'bindings', message })),
            );
          }
          return { connectionId, name: row.name, unbound: outcome.usage };
        },
      );
    },
    check,
    checkOne(connectionId) {
      return audited(
        ctx,
        'connections.check',
        { ok: (found) => ({ arguments: { connectionId, status: found.status } }) },
        async () => {
          const found = (await check({ connectionIds: [connectionId], limit: 1, after: null })).items[0];
          if (!found) throw new AppError('not_found', 'connection not found');
          return found;
        },
      );
    },
  };
}
