import { type Capability, ROLE_CAPABILITIES } from '@flowgate/auth';
import { EXAMPLE_FLOWS, type RequiresSlot, validateFlow } from '@flowgate/flows';
import { AdminApiError, type AdminClient, type ServiceAccount } from './admin-client.js';
import { CliError } from './cli-io.js';
import type { DemoAccount, DemoCredentials } from './data-dir.js';
import { DEMO_MODEL, demoSlotPath } from './demo-api.js';

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
    // The viewer role's capabilities: everything read-only plus feedback.
    capabilities: ROLE_CAPABILITIES.viewer,
  },
  { name: 'demo-full', capabilities: ['workspace.full'] },
];

export interface SeedOptions {
  /** Credentials saved by an earlier run; their keys are reused while the server still knows them. */
  existing?: DemoCredentials | undefined;
  /** MCP endpoint recorded next to the keys. */
  mcpUrl: string;
  /** The loopback stand-in API the demo connections point at (see demo-api.ts). */
  demoApiUrl: string;
}

export interface SeedResult {
  credentials: DemoCredentials;
  workspaceCreated: boolean;
  /** Accounts whose key was created in this run: the only time their keys are printed. */
  newKeys: DemoAccount[];
  /** Slugs of the sample flows in the demo workspace (pushed and released on the first run). */
  flows: string[];
}

export async function seedDemo(client: AdminClient, options: SeedOptions): Promise<SeedResult> {
  const workspaceCreated = await ensureWorkspace(client, DEMO_WORKSPACE_ID, DEMO_WORKSPACE_NAME);
  const accounts = await ensureServiceAccounts(client, DEMO_WORKSPACE_ID);
  const { all, created } = await ensureDemoKeys(client, DEMO_WORKSPACE_ID, accounts, options.existing);
  const flows = await ensureDemoFlows(client, DEMO_WORKSPACE_ID, options.demoApiUrl);
  return {
    workspaceCreated,
    newKeys: created,
    flows,
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

/** The secret of every demo connection: a visible placeholder, never a real credential. */
export const DEMO_SECRET = 'demo-placeholder-not-a-real-secret';
export const DEMO_CONNECTION_PREFIX = 'demo-';

/**
 * Pushes and releases each sample flow that the workspace does not have yet, trusts its authored descriptions (the
 * admin wrote them: they are ours), and binds its slots to the demo connections. A flow that already exists is
 * left as the user made it (only a missing release or missing bindings are completed), so re-running
 * `flowgate dev` neither overwrites edits nor makes new versions.
 */
export async function ensureDemoFlows(
  client: AdminClient,
  ws: string,
  demoApiUrl: string,
): Promise<string[]> {
  const samples = Object.values(EXAMPLE_FLOWS).map((edn) => {
    const result = validateFlow(edn);
    if (!result.valid || !result.model)
      throw new CliError('internal_error', 'a bundled sample flow does not validate');
    return { edn, model: result.model };
  });
  const slots = new Map<string, RequiresSlot>();
  for (const { model } of samples)
    for (const r of model.requires) if (!slots.has(r.slot)) slots.set(r.slot, r);
  const connectionIds = await ensureDemoConnections(client, ws, [...slots.values()], demoApiUrl);

  const slugs: string[] = [];
  for (const { edn, model } of samples) {
    const slug = model.slug;
    let flow = await client.getFlow(ws, slug).catch((error: unknown) => {
      if (error instanceof AdminApiError && error.status === 404) return undefined;
      throw error;
    });
    if (!flow) {
      const pushed = await client.pushDraft(ws, slug, edn);
      if (pushed.status !== 200)
        throw new CliError('internal_error', `the sample flow ${slug} was refused by the server`);
      flow = await client.getFlow(ws, slug);
    }
    if (flow.liveVersion === null || flow.liveVersion === undefined) {
      await client.releaseFlow(ws, slug, { releaseNote: 'sample flow' });
      await client.setFlowTrust(ws, slug, true);
    }
    const bound = (flow.bindings as { live?: Record<string, string> } | undefined)?.live ?? {};
    const missing: Record<string, string> = {};
    for (const r of model.requires) {
      const id = connectionIds.get(r.slot);
      if (!bound[r.slot] && id) missing[r.slot] = id;
    }
    if (Object.keys(missing).length > 0)
      await client.setFlowBindings(ws, slug, { target: 'live', slots: missing });
    slugs.push(slug);
  }
  return slugs;
}

/**
 * One demo connection per slot name (`demo-<slot>`), pointing at the stand-in API. Found again by name on later
 * runs and moved to this run's stand-in when it still points at an earlier one (or at the old placeholder host);
 * a connection the user pointed elsewhere is left alone.
 */
async function ensureDemoConnections(
  client: AdminClient,
  ws: string,
  slots: RequiresSlot[],
  demoApiUrl: string,
): Promise<Map<string, string>> {
  const byName = new Map<string, { id: string; baseUrl: string | null }>();
  let cursor: string | undefined;
  do {
    const page = await client.listConnections(ws, { limit: 200, ...(cursor ? { cursor } : {}) });
    for (const c of page.items) byName.set(c.name, { id: c.connectionId, baseUrl: c.baseUrl });
    cursor = page.nextCursor ?? undefined;
  } while (cursor);

  const ids = new Map<string, string>();
  for (const slot of slots) {
    const name = `${DEMO_CONNECTION_PREFIX}${slot.slot}`;
    const path = demoSlotPath(slot.slot, slot.type);
    const baseUrl = `${demoApiUrl}${path}`;
    const found = byName.get(name);
    if (!found) {
      const created = await client.createConnection(ws, {
        name,
        type: slot.type,
        ...(slot.type === 'secret' ? {} : { baseUrl }),
        ...(slot.type === 'llm-provider' ? { model: DEMO_MODEL } : {}),
        auth: { type: 'bearer', secret: DEMO_SECRET },
      });
      ids.set(slot.slot, created.connectionId);
      continue;
    }
    if (slot.type !== 'secret' && found.baseUrl !== baseUrl && isEarlierDemoTarget(found.baseUrl, path)) {
      await client.updateConnection(ws, found.id, { baseUrl });
    }
    ids.set(slot.slot, found.id);
  }
  return ids;
}

function isEarlierDemoTarget(baseUrl: string | null, path: string): boolean {
  if (!baseUrl) return false;
  if (baseUrl.startsWith('https://api.example.com/')) return true;
  try {
    const url = new URL(baseUrl);
    return url.protocol === 'http:' && url.hostname === '127.0.0.1' && url.pathname === path;
  } catch {
    return false;
  }
}
