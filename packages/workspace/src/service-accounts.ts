/** Service accounts of a workspace and their API keys: who may call the workspace's MCP endpoint and admin API. */
import { generateApiKey } from '@flowgate/auth';
import { AppError, newId } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { audited } from './audit.js';
import type { Page } from './flows/records.js';
import type { UseCaseContext } from './scope.js';

export type ServiceAccountStatus = 'active' | 'disabled';

export interface ServiceAccountRecord {
  id: string;
  name: string;
  capabilities: string[];
  status: ServiceAccountStatus;
  createdAt: string;
  updatedAt: string;
}

/** A key as listed: never its secret, which exists only in the answer that issued it. */
export interface ApiKeyRecord {
  id: string;
  name: string | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface IssuedKey {
  serviceAccountId: string;
  keyId: string;
  /** The whole key, shown once. */
  apiKey: string;
  expiresAt: string | null;
}

export interface ServiceAccountUseCases {
  create(input: { name: string; capabilities: string[] }): Promise<ServiceAccountRecord>;
  /** One account; 404 `not_found` when it does not exist. */
  get(id: string): Promise<ServiceAccountRecord>;
  /** In id order, so a cursor resumes exactly. */
  list(input: { limit: number; after: string | null }): Promise<Page<ServiceAccountRecord>>;
  update(
    id: string,
    patch: {
      name?: string | undefined;
      status?: ServiceAccountStatus | undefined;
      capabilities?: string[] | undefined;
    },
  ): Promise<ServiceAccountRecord>;
  issueKey(
    serviceAccountId: string,
    input: { name?: string | undefined; expiresAt?: Date | undefined },
  ): Promise<IssuedKey>;
  listKeys(serviceAccountId: string): Promise<ApiKeyRecord[]>;
  /** Revoking twice keeps the first revocation time. */
  revokeKey(serviceAccountId: string, keyId: string): Promise<void>;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

function accountRecord(row: repos.ServiceAccountRow): ServiceAccountRecord {
  return {
    id: row.id,
    name: row.name,
    capabilities: row.capabilities,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function keyRecord(row: repos.ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
    expiresAt: iso(row.expiresAt),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

const accountNotFound = () => new AppError('not_found', 'service account not found');

export function serviceAccountUseCases(ctx: UseCaseContext): ServiceAccountUseCases {
  const { db, workspaceId: ws } = ctx;

  async function existing(id: string): Promise<repos.ServiceAccountRow> {
    const row = await repos.getServiceAccount(db, ws, id);
    if (!row) throw accountNotFound();
    return row;
  }

  return {
    create(input) {
      return audited(ctx, 'service_accounts.create', { ok: () => ({ arguments: input }) }, async () =>
        accountRecord(await repos.createServiceAccount(db, ws, { id: newId('sa', 16), ...input })),
      );
    },
    async get(id) {
      return accountRecord(await existing(id));
    },
    async list({ limit, after }) {
      const rows = await repos.listServiceAccounts(db, ws, { limit: limit + 1, afterId: after ?? undefined });
      const items = rows.slice(0, limit).map(accountRecord);
      return { items, nextAfter: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
    },
    update(id, patch) {
      const args = { serviceAccountId: id, ...patch };
      return audited(ctx, 'service_accounts.update', { ok: () => ({ arguments: args }) }, async () => {
        const row = await repos.updateServiceAccount(db, ws, id, patch);
        if (!row) throw accountNotFound();
        ctx.deps.changes?.serviceAccountChanged(id, ws);
        return accountRecord(row);
      });
    },
    issueKey(serviceAccountId, input) {
      return audited(
        ctx,
        'api_keys.create',
        { ok: (k) => ({ arguments: { serviceAccountId, keyId: k.keyId, name: input.name } }) },
        async () => {
          await existing(serviceAccountId);
          const key = generateApiKey();
          const row = await repos.createApiKey(db, ws, {
            id: key.keyId,
            serviceAccountId,
            name: input.name ?? null,
            secretHash: key.secretHash,
            expiresAt: input.expiresAt ?? null,
          });
          return { serviceAccountId, keyId: row.id, apiKey: key.apiKey, expiresAt: iso(row.expiresAt) };
        },
      );
    },
    async listKeys(serviceAccountId) {
      await existing(serviceAccountId);
      return (await repos.listApiKeys(db, ws, serviceAccountId)).map(keyRecord);
    },
    revokeKey(serviceAccountId, keyId) {
      return audited(
        ctx,
        'api_keys.revoke',
        { ok: () => ({ arguments: { serviceAccountId, keyId } }) },
        async () => {
          if (!(await repos.revokeApiKey(db, ws, serviceAccountId, keyId))) {
            throw new AppError('not_found', 'key not found');
          }
          ctx.deps.changes?.keyRevoked(keyId, ws);
        },
      );
    },
  };
}
