import type { Capability } from '@flowgate/auth';
import { AdminApiError, type AdminClient, type ServiceAccount } from './admin-client.js';
import type { DemoAccount, DemoCredentials } from './data-dir.js';

/**
 * Seeds the demo workspace through the admin API, idempotently: a second run finds what the first one
 * made and reuses it. Each step is its own function so later steps (sample flows, connections) slot in
 * after `ensureDemoKeys` without touching the others.
 */

export const DEMO_WORKSPACE_ID = 'ws-demo';
export const DEMO_WORKSPACE_NAME = 'Demo workspace';

export const DEMO_ACCOUNTS: ReadonlyArray<{ name: string; capabilities: readonly Capability[] }> = [
  {
    name: 'demo-readonly',
    capabilities: [
      'flows.read',
      'runs.read',
      'resources.read',
      'installations.read',
      'connections.read',
      'steps.read',
      'feedback.send',
    ],
  },
  { name: 'demo-full', capabilities: ['workspace.full'] },
];

export interface SeedOptions {
  /** Credentials saved by an earlier run; their keys are reused while the server still knows them. */
  existing?: DemoCredentials | undefined;
  /** MCP endpoint recorded next to the keys. */
  mcpUrl: string;
}

export interface SeedResult {
  credentials: DemoCredentials;
  workspaceCreated: boolean;
  /** Accounts whose key was created in this run: the only time their keys are printed. */
  newKeys: DemoAccount[];
}

export async function seedDemo(client: AdminClient, options: SeedOptions): Promise<SeedResult> {
  const workspaceCreated = await ensureWorkspace(client, DEMO_WORKSPACE_ID, DEMO_WORKSPACE_NAME);
  const accounts = await ensureServiceAccounts(client, DEMO_WORKSPACE_ID);
  const { all, created } = await ensureDemoKeys(client, DEMO_WORKSPACE_ID, accounts, options.existing);
  return {
    workspaceCreated,
    newKeys: created,
    credentials: { workspaceId: DEMO_WORKSPACE_ID, mcpUrl: options.mcpUrl, accounts: all },
  };
}

/** True when created now, false when it already existed. */
export async function ensureWorkspace(client: AdminClient, id: string, name: string): Promise<boolean> {
  try {
    await client.createWorkspace({ id, name });
    return true;
  } catch (error) {
    if (error instanceof AdminApiError && error.status === 409) return false;
    throw error;
  }
}

async function ensureServiceAccounts(client: AdminClient, ws: string): Promise<ServiceAccount[]> {
  const { items } = await client.listServiceAccounts(ws);
  const out: ServiceAccount[] = [];
  for (const spec of DEMO_ACCOUNTS) {
    // An account the user changed since (capabilities, status) is left as they set it.
    const found = items.find((sa) => sa.name === spec.name);
    out.push(
      found ??
        (await client.createServiceAccount(ws, { name: spec.name, capabilities: [...spec.capabilities] })),
    );
  }
  return out;
}

async function ensureDemoKeys(
  client: AdminClient,
  ws: string,
  accounts: ServiceAccount[],
  existing: DemoCredentials | undefined,
): Promise<{ all: DemoAccount[]; created: DemoAccount[] }> {
  const all: DemoAccount[] = [];
  const created: DemoAccount[] = [];
  for (const sa of accounts) {
    const saved = existing?.accounts.find((a) => a.serviceAccountId === sa.serviceAccountId);
    if (saved && (await keyIsUsable(client, ws, sa.serviceAccountId, saved.keyId))) {
      all.push({ ...saved, name: sa.name, capabilities: sa.capabilities });
      continue;
    }
    const { key } = await client.createKey(ws, sa.serviceAccountId, { name: 'demo' });
    const account: DemoAccount = {
      name: sa.name,
      serviceAccountId: sa.serviceAccountId,
      capabilities: sa.capabilities,
      keyId: key.keyId,
      apiKey: key.apiKey,
    };
    all.push(account);
    created.push(account);
  }
  return { all, created };
}

async function keyIsUsable(client: AdminClient, ws: string, sa: string, keyId: string): Promise<boolean> {
  const { items } = await client.listKeys(ws, sa);
  const key = items.find((k) => k.keyId === keyId);
  if (!key || key.revokedAt) return false;
  return !key.expiresAt || new Date(key.expiresAt).getTime() > Date.now();
}
