import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../client.js';
import { apiKeys, serviceAccounts } from '../schema.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function createApiKey(
  db: Database,
  workspaceId: string,
  input: {
    id: string;
    serviceAccountId: string;
    name: string | null;
    secretHash: string;
    expiresAt: Date | null;
  },
): Promise<ApiKeyRow> {
  const rows = await db
    .insert(apiKeys)
    .values({ ...input, workspaceId })
    .returning();
  return rows[0] as ApiKeyRow;
}

export async function listApiKeys(
  db: Database,
  workspaceId: string,
  serviceAccountId: string,
): Promise<ApiKeyRow[]> {
  return db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.workspaceId, workspaceId), eq(apiKeys.serviceAccountId, serviceAccountId)))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
    .limit(500);
}

/** Marks the key revoked; returns false when no such key belongs to this account and workspace. */
export async function revokeApiKey(
  db: Database,
  workspaceId: string,
  serviceAccountId: string,
  keyId: string,
): Promise<boolean> {
  const where = and(
    eq(apiKeys.workspaceId, workspaceId),
    eq(apiKeys.serviceAccountId, serviceAccountId),
    eq(apiKeys.id, keyId),
  );
  // Revoking twice keeps the first revocation time.
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(where, isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (rows.length > 0) return true;
  const existing = await db.select({ id: apiKeys.id }).from(apiKeys).where(where).limit(1);
  return existing.length > 0;
}

export interface KeyLookup {
  keyId: string;
  workspaceId: string;
  serviceAccountId: string;
  serviceAccountName: string;
  serviceAccountStatus: 'active' | 'disabled';
  capabilities: string[];
  secretHash: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/**
 * The authentication lookup. It is the one query keyed by a global id rather than a workspace: the key id is
 * what identifies the tenant. The workspace it returns is then checked against the requested one.
 */
export async function lookupApiKey(db: Database, keyId: string): Promise<KeyLookup | null> {
  const rows = await db
    .select({
      keyId: apiKeys.id,
      workspaceId: apiKeys.workspaceId,
      serviceAccountId: apiKeys.serviceAccountId,
      serviceAccountName: serviceAccounts.name,
      serviceAccountStatus: serviceAccounts.status,
      capabilities: serviceAccounts.capabilities,
      secretHash: apiKeys.secretHash,
      expiresAt: apiKeys.expiresAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(
      serviceAccounts,
      and(
        eq(serviceAccounts.id, apiKeys.serviceAccountId),
        eq(serviceAccounts.workspaceId, apiKeys.workspaceId),
      ),
    )
    .where(eq(apiKeys.id, keyId))
    .limit(1);
  return rows[0] ?? null;
}

/** Batched `lastUsedAt` write; keys that are revoked keep their last value. */
export async function touchApiKeys(db: Database, keyIds: string[], at: Date): Promise<void> {
  if (keyIds.length === 0) return;
  await db
    .update(apiKeys)
    .set({ lastUsedAt: at })
    .where(and(inArray(apiKeys.id, keyIds), isNull(apiKeys.revokedAt)));
}
