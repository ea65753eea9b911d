import { isAppError } from '@flowgate/core';
import type { DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOperator } from './operator.js';
import type { ChangeListener } from './scope.js';
import { flowLiteral, seedWorkspace, testWorkspaceDeps } from './testing.js';
import { openWorkspace, type Workspace } from './workspace.js';

/**
 * Caches outside the domain (the gateway's authenticator and workspace cache) learn of each change from the domain
 * itself, whichever edge made it; a refused change tells them nothing.
 */
let h: DbHandle;
let ws: Workspace;
const told: string[] = [];
const changes: ChangeListener = {
  serviceAccountChanged: (id, workspaceId) => told.push(`account ${id} in ${workspaceId}`),
  keyRevoked: (id, workspaceId) => told.push(`key ${id} in ${workspaceId}`),
  workspaceChanged: (id) => told.push(`workspace ${id}`),
  flowsChanged: (id) => told.push(`flows of ${id}`),
};

beforeAll(async () => {
  h = await createTestDb();
  await seedWorkspace(h.db, 'ws-changes', 'Changes');
  ws = openWorkspace(testWorkspaceDeps(h.db, { changes }), {
    workspaceId: 'ws-changes',
    actor: { kind: 'operator', id: 'operator' },
  });
});
afterAll(async () => h?.close());

async function refused(act: () => Promise<unknown>): Promise<string | null> {
  try {
    await act();
    return null;
  } catch (error) {
    return isAppError(error) ? error.code : 'unexpected';
  }
}

describe('WorkspaceDeps.changes', () => {
  it('is told of an account update, a key revocation, a policy change and a new workspace, once each', async () => {
    const account = await ws.serviceAccounts.create({ name: 'bot', capabilities: ['flows.read'] });
    const key = await ws.serviceAccounts.issueKey(account.id, { name: 'k' });
    told.length = 0;

    await ws.serviceAccounts.update(account.id, { status: 'disabled' });
    await ws.serviceAccounts.revokeKey(account.id, key.keyId);
    await ws.policy.put({ readOnly: true });
    await openOperator(testWorkspaceDeps(h.db, { changes }), {
      actor: { kind: 'operator', id: 'operator' },
    }).workspaces.create({ id: 'ws-changes-new', name: 'New' });

    expect(told).toEqual([
      `account ${account.id} in ws-changes`,
      `key ${key.keyId} in ws-changes`,
      'workspace ws-changes',
      'workspace ws-changes-new',
    ]);
  });

  it('is told of a release (per-flow endpoints list the live version), and of nothing for a draft', async () => {
    told.length = 0;
    const draft = await ws.flows.saveDraft({
      literal: flowLiteral('told-flow', { tool: 'told_tool' }),
      expectedSlug: null,
    });
    expect(draft.status).toBe('saved');
    expect(told).toEqual([]);
    await ws.flows.release({ slug: 'told-flow', version: null, releaseNote: null, keepVisibility: false });
    expect(told).toEqual(['flows of ws-changes']);
  });

  it('is told nothing when the change is refused', async () => {
    told.length = 0;
    expect(await refused(() => ws.serviceAccounts.update('sa_missing', { status: 'disabled' }))).toBe(
      'not_found',
    );
    const account = await ws.serviceAccounts.create({ name: 'bot2', capabilities: ['flows.read'] });
    expect(await refused(() => ws.serviceAccounts.revokeKey(account.id, 'key_missing'))).toBe('not_found');
    expect(told).toEqual([]);
  });
});
