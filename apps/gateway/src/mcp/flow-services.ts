import { type Database, repos } from '@flowgate/db';
import {
  type FlowDefinitionRecord,
  type FlowRecord,
  InvalidArguments,
  type SlotBindingRecord,
  type WorkspaceServices,
} from '@flowgate/workspace-mcp';

export type FlowServices = Pick<
  WorkspaceServices,
  | 'searchFlows'
  | 'searchFlowTools'
  | 'getFlow'
  | 'getFlowDefinition'
  | 'saveFlowDraft'
  | 'releaseFlow'
  | 'flowSlotBindings'
>;

/** Installations a workspace may hold (repos bound it); scanned to resolve a slug without an installation id. */
const INSTALLATION_SCAN_PAGES = Math.ceil(repos.MAX_INSTALLATIONS_PER_WORKSPACE / 200);

type Resolved =
  | { kind: 'own'; row: repos.FlowRow }
  | { kind: 'installed'; installation: repos.InstallationRow; definition: repos.InstalledDefinition | null };

/** Search positions travel inside the package's signed cursors as JSON; the shape is still checked on the way back. */
function openPosition<T>(after: string | null, isPosition: (v: unknown) => v is T): T | undefined {
  if (after === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(after);
  } catch {
    parsed = null;
  }
  if (!isPosition(parsed)) {
    throw new InvalidArguments([
      { path: 'cursor', message: 'Cursor is no longer valid; omit it to start from the first page' },
    ]);
  }
  return parsed;
}

/**
 * Whether an opt-in covers a definition: only when the definition is byte-identical to the one reviewed (spec 7.5).
 * `changed` marks an opt-in that exists but was given for something else.
 */
function pinnedTrust(
  optedIn: boolean,
  pinned: string | null,
  literal: string | null,
): { trusted: boolean; changed: boolean } {
  if (!optedIn) return { trusted: false, changed: false };
  const trusted = pinned !== null && literal !== null && repos.literalSha256(literal) === pinned;
  return { trusted, changed: !trusted };
}

function installedRecord(
  installation: repos.InstallationRow,
  definition: repos.InstalledDefinition | null,
): FlowRecord {
  const model = definition?.model;
  const trust = pinnedTrust(
    installation.trustMetadata,
    installation.trustedLiteralSha256,
    definition?.literal ?? null,
  );
  return {
    slug: installation.sourceFlowSlug,
    installation: {
      id: installation.id,
      sourceWorkspaceId: installation.sourceWorkspaceId,
      versionPolicy: installation.versionPolicy,
      pinnedVersion: installation.pinnedVersion,
      activeVersion: definition?.version ?? null,
      enabled: installation.enabled,
      trustMetadata: trust.trusted,
      slotBindings: { ...installation.slotBindings },
    },
    name: model?.name ?? null,
    description: model?.description ?? null,
    tags: model ? [...model.tags] : [],
    // The source's draft and version history belong to the publishing workspace.
    hasDraft: false,
    draftUpdatedAt: null,
    latestVersion: null,
    liveVersion: null,
    isPublic: true,
    ownerTrustMetadata: false,
    metadataChangedSinceReview: trust.changed,
    mcpToolNames: model ? model.interfaces.mcp.map((m) => m.toolName) : [],
  };
}

/**
 * The flow side of the workspace services: A's repositories, every query scoped to `ws`. Installations (read
 * through `repos.resolveInstalledDefinition`, which requires a public, released source) are the only way to
 * another workspace's data.
 */
export function createFlowServices(db: Database, ws: string): FlowServices {
  /**
   * An own flow as models see it. Its authored text and tool names come from the live version when there is one,
   * never from the draft (which any flows.manage key can rewrite after an admin's review); the admin opt-in applies
   * only while the live version is byte-identical to the one reviewed.
   */
  async function ownRecordOf(row: repos.FlowRow): Promise<FlowRecord> {
    const live = row.liveVersion !== null ? await repos.definitionOf(db, row, 'live') : null;
    const model = live?.model ?? (row.draftModel as repos.FlowDefinition['model'] | null);
    const trust = pinnedTrust(row.trustMetadata, row.trustedLiteralSha256, live?.literal ?? null);
    return {
      slug: row.slug,
      installation: null,
      name: model ? (model.name ?? null) : row.name,
      description: model ? (model.description ?? null) : row.description,
      tags: model ? [...model.tags] : [...row.tags],
      hasDraft: row.draftLiteral !== null,
      draftUpdatedAt: row.draftUpdatedAt ? row.draftUpdatedAt.toISOString() : null,
      latestVersion: row.latestVersion,
      liveVersion: row.liveVersion,
      isPublic: row.isPublic,
      ownerTrustMetadata: trust.trusted,
      metadataChangedSinceReview: trust.changed,
      mcpToolNames: model ? model.interfaces.mcp.map((m) => m.toolName) : [],
    };
  }

  /**
   * Whether the opt-in of a search hit covers the version the row describes: draft rows never; live rows of own
   * flows against the flow's pin, installation rows against the installation's (digests computed by the database).
   */
  async function hitTrust(h: repos.FlowToolHit): Promise<{ trusted: boolean; changed: boolean }> {
    if (!h.trustMetadata || h.source === 'draft' || h.version === null)
      return { trusted: false, changed: false };
    let pinned: string | null = null;
    let digest: string | null = null;
    if (h.installationId === null) {
      pinned = (await repos.flowTrustPin(db, ws, h.flowId))?.trustedLiteralSha256 ?? null;
      digest = await repos.versionLiteralSha256(db, ws, h.flowId, h.version, { publicOnly: false });
    } else {
      const inst = await repos.getInstallation(db, ws, h.installationId);
      pinned = inst?.trustedLiteralSha256 ?? null;
      if (inst && pinned !== null) {
        digest = await repos.versionLiteralSha256(db, inst.sourceWorkspaceId, h.flowId, h.version, {
          publicOnly: true,
        });
      }
    }
    const trusted = pinned !== null && digest !== null && pinned === digest;
    return { trusted, changed: !trusted };
  }

  async function installed(installation: repos.InstallationRow): Promise<Resolved> {
    return {
      kind: 'installed',
      installation,
      definition: await repos.resolveInstalledDefinition(db, installation),
    };
  }

  /** The oldest installation of a public flow with this slug. */
  async function installationBySlug(slug: string): Promise<repos.InstallationRow | null> {
    let best: repos.InstallationRow | null = null;
    let afterId: string | undefined;
    for (let page = 0; page < INSTALLATION_SCAN_PAGES; page++) {
      const rows = await repos.listInstallations(db, ws, { limit: 200, afterId });
      for (const r of rows) {
        if (r.sourceFlowSlug === slug && (!best || r.createdAt < best.createdAt)) best = r;
      }
      if (rows.length < 200) break;
      afterId = rows.at(-1)?.id;
    }
    return best;
  }

  async function resolve(
    slug: string,
    installationId: string | null,
    includeInstalled: boolean,
  ): Promise<Resolved | null> {
    if (installationId !== null) {
      if (!includeInstalled) return null;
      const inst = await repos.getInstallation(db, ws, installationId);
      return inst && inst.sourceFlowSlug === slug ? installed(inst) : null;
    }
    const row = await repos.getFlow(db, ws, slug);
    if (row) return { kind: 'own', row };
    if (!includeInstalled) return null;
    const inst = await installationBySlug(slug);
    return inst ? installed(inst) : null;
  }

  return {
    async searchFlows({ query, includeInstalled, limit, after }) {
      const page = await repos.searchFlows(db, ws, {
        query: query ?? undefined,
        limit,
        after: openPosition(after, repos.isFlowSearchPosition),
        includeInstallations: includeInstalled,
      });
      // Pages are small (≤ 50): each entry's tool names come from its definition, read by primary key.
      const items: FlowRecord[] = [];
      for (const hit of page.items) {
        if (hit.installationId === null) {
          const row = await repos.getFlow(db, ws, hit.flowSlug);
          if (row) items.push(await ownRecordOf(row));
          continue;
        }
        const inst = await repos.getInstallation(db, ws, hit.installationId);
        if (!inst) continue;
        items.push(installedRecord(inst, await repos.resolveInstalledDefinition(db, inst)));
      }
      return { items, nextAfter: page.next ? JSON.stringify(page.next) : null };
    },

    async searchFlowTools({ query, toolName, includeDraft, includeInstalled, limit, after }) {
      const page = await repos.searchFlowTools(db, ws, {
        query: query ?? undefined,
        toolName: toolName ?? undefined,
        limit,
        after: openPosition(after, repos.isToolSearchPosition),
        includeDraft,
        includeInstallations: includeInstalled,
      });
      const items = [];
      for (const h of page.items) {
        const trust = await hitTrust(h);
        items.push({
          flowSlug: h.flowSlug,
          toolName: h.toolName,
          installationId: h.installationId,
          source: h.source,
          title: h.title,
          description: h.description,
          trustMetadata: trust.trusted,
          metadataChangedSinceReview: trust.changed,
        });
      }
      return {
        items,
        nextAfter: page.next ? JSON.stringify(page.next) : null,
      };
    },

    async getFlow({ slug, installationId, includeInstalled }) {
      const r = await resolve(slug, installationId, includeInstalled);
      if (!r) return null;
      return r.kind === 'own' ? ownRecordOf(r.row) : installedRecord(r.installation, r.definition);
    },

    async getFlowDefinition({
      slug,
      installationId,
      includeInstalled,
      selector,
    }): Promise<FlowDefinitionRecord | null> {
      const r = await resolve(slug, installationId, includeInstalled);
      if (!r) return null;
      if (r.kind === 'installed') {
        const def = r.definition;
        // An installation reaches only the released public version it runs; never the publisher's draft.
        if (!def) return null;
        if ('version' in selector ? selector.version !== def.version : selector.source === 'draft')
          return null;
        return {
          slug: def.flowSlug,
          installationId: r.installation.id,
          version: def.version,
          literal: def.literal,
          model: def.model,
          updatedAt: r.installation.updatedAt.toISOString(),
          releaseNote: null,
        };
      }
      const def = await repos.definitionOf(
        db,
        r.row,
        'version' in selector ? { version: selector.version } : selector.source,
      );
      if (!def) return null;
      return {
        slug: def.flowSlug,
        installationId: null,
        version: def.version,
        literal: def.literal,
        model: def.model,
        updatedAt: def.updatedAt.toISOString(),
        releaseNote: def.releaseNote,
      };
    },

    async saveFlowDraft({ literal, model }) {
      const saved = await repos.saveDraft(db, ws, { literal, model });
      return { created: saved.created, flow: await ownRecordOf(saved.flow) };
    },

    async releaseFlow({ slug, version, releaseNote, expectedPublic }) {
      const released = await repos.releaseFlow(db, ws, slug, {
        version: version ?? undefined,
        releaseNote: releaseNote ?? undefined,
        expectedPublic,
      });
      return {
        version: released.version,
        created: released.created,
        previousLiveVersion: released.previousLiveVersion,
        releasedAt: new Date().toISOString(),
        releaseNote: released.releaseNote,
      };
    },

    async flowSlotBindings({ slug, installationId, target }): Promise<SlotBindingRecord[]> {
      let map: Record<string, string>;
      if (installationId !== null) {
        const inst = await repos.getInstallation(db, ws, installationId);
        if (!inst || inst.sourceFlowSlug !== slug) return [];
        map = inst.slotBindings;
      } else {
        map = (await repos.getFlowBindings(db, ws, slug, target)) ?? {};
      }
      const ids = [...new Set(Object.values(map))];
      const rows = ids.length ? await repos.listConnections(db, ws, { limit: ids.length, ids }) : [];
      const byId = new Map(rows.map((c) => [c.id, c]));
      return Object.entries(map)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([slot, id]) => {
          const c = byId.get(id);
          return {
            slot,
            connection: c
              ? {
                  id: c.id,
                  name: c.name,
                  type: c.type,
                  status: c.status,
                  health: c.health ? { ok: c.health.ok, checkedAt: c.health.checkedAt } : null,
                }
              : null,
          };
        });
    },
  };
}
