import type { WorkspaceAccess } from '@flowgate/auth';
import { AppError, newId } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import { redactString, type SecretBox } from '@flowgate/secrets';
import type { ConnectionCheck, ConnectionSummary, WorkspaceServices } from '@flowgate/workspace-mcp';
import { createFlowServices } from './flow-services.js';
import { probe } from './outbound.js';

const CHECK_TIMEOUT_MS = 5_000;
const CHECK_CONCURRENCY = 4;

export interface ServiceDeps {
  db: Database;
  secretBox: SecretBox;
  allowPrivateNetwork: boolean;
}

function summary(
  row: repos.ConnectionRow,
  slots: Array<{ flowSlug: string; slot: string; target: string }>,
): ConnectionSummary {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    baseUrl: row.baseUrl,
    authType: row.authType,
    status: row.status,
    health: row.health
      ? {
          ok: row.health.ok,
          checkedAt: row.health.checkedAt,
          httpStatus: row.health.status ?? null,
          message: row.health.message ?? null,
        }
      : null,
    configKeys: Object.keys(row.config).sort(),
    boundSlots: slots,
    createdAt: row.createdAt.toISOString(),
  };
}

function authHeaders(row: repos.ConnectionRow, secret: string | null): Record<string, string> {
  if (!secret) return {};
  if (row.authType === 'bearer') return { authorization: `Bearer ${secret}` };
  if (row.authType === 'basic') return { authorization: `Basic ${Buffer.from(secret).toString('base64')}` };
  if (row.authType === 'api-key') return { [row.config.headerName ?? 'X-API-Key']: secret };
  return {};
}

/** The workspace's data as the MCP tools see it: every query scoped to `access.workspaceId`. */
export function createWorkspaceServices(deps: ServiceDeps, access: WorkspaceAccess): WorkspaceServices {
  const ws = access.workspaceId;
  const { db } = deps;

  async function check(row: repos.ConnectionRow): Promise<ConnectionCheck> {
    const checkedAt = new Date().toISOString();
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
    const target = new URL(
      row.type === 'llm-provider' ? `${row.baseUrl.replace(/\/+$/, '')}/models` : row.baseUrl,
    );
    let result: ConnectionCheck;
    try {
      const res = await probe(target, {
        headers: { accept: 'application/json', ...authHeaders(row, secret) },
        timeoutMs: CHECK_TIMEOUT_MS,
        allowPrivate: deps.allowPrivateNetwork,
      });
      // Reachable and credentials accepted. LLM providers must answer their model list.
      const ok =
        row.type === 'llm-provider'
          ? res.status >= 200 && res.status < 300
          : res.status < 500 && res.status !== 401 && res.status !== 403;
      const message = ok
        ? null
        : res.status === 401 || res.status === 403
          ? 'credentials were rejected'
          : `answered HTTP ${res.status}`;
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
            ? `no answer within ${CHECK_TIMEOUT_MS} ms`
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
    return result;
  }

  async function checkAll(rows: repos.ConnectionRow[]): Promise<ConnectionCheck[]> {
    const out: ConnectionCheck[] = new Array(rows.length);
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const i = next++;
        out[i] = await check(rows[i] as repos.ConnectionRow);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHECK_CONCURRENCY, rows.length) }, worker));
    return out;
  }

  return {
    ...createFlowServices(db, ws),
    async workspaceInfo() {
      const row = await repos.getWorkspace(db, ws);
      if (!row) throw new AppError('not_found', 'workspace not found');
      return { id: row.id, name: row.name };
    },
    async listConnections({ limit, after }) {
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
    async checkConnections({ connectionIds, limit, after }) {
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
    },
    async sendFeedback(input) {
      const row = await repos.insertFeedback(db, ws, {
        id: newId('fb', 16),
        principalType: access.principal.kind,
        principalId: access.principal.id,
        area: input.area,
        summary: input.summary,
        details: input.details,
        resourceUri: input.resourceUri,
        runId: input.runId,
        flowSlug: input.flowSlug,
        context: input.context,
      });
      return { feedbackId: row.id, createdAt: row.createdAt.toISOString() };
    },
  };
}
