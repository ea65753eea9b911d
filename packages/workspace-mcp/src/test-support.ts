/** Shared fixtures for this package's tests: an in-memory WorkspaceServices and a request context builder. */
import type { Capability } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import { type FlowModel, validateFlow } from '@flowgate/flows';
import type { ConnectionCheck, ConnectionSummary } from './catalog.js';
import type {
  FeedbackInput,
  FlowDefinitionRecord,
  FlowRecord,
  FlowToolHit,
  McpAuditEntry,
  McpRequestContext,
  SlotBindingRecord,
  WorkspaceServices,
} from './context.js';
import { handleMcpMessage } from './dispatch.js';
import { NO_NARROWING } from './narrowing.js';
import { OPEN_WORKSPACE_POLICY } from './policy.js';

export const ALL_CAPABILITIES: readonly Capability[] = [
  'flows.read',
  'flows.run',
  'flows.manage',
  'runs.read',
  'resources.read',
  'installations.read',
  'connections.read',
  'steps.read',
  'feedback.send',
];

export function connection(n: number, over: Partial<ConnectionSummary> = {}): ConnectionSummary {
  return {
    id: `conn_${String(n).padStart(3, '0')}`,
    name: `crm-${n}`,
    type: 'http-api',
    baseUrl: `https://api${n}.example.test/v1`,
    authType: 'bearer',
    status: 'active',
    health: null,
    configKeys: ['header_name'],
    boundSlots: [],
    createdAt: '2026-11-01T00:00:00.000Z',
    ...over,
  };
}

// ---- flows ----------------------------------------------------------------------------------------------

export interface FakeVersion {
  version: number;
  literal: string;
  model: FlowModel;
  createdAt: string;
  releaseNote: string | null;
}

/** A stored flow of the fake: own (`workspaceId` ws-acme) or another workspace's public flow. */
export interface FakeFlow {
  workspaceId: string;
  slug: string;
  draft: { literal: string; model: FlowModel; updatedAt: string } | null;
  versions: FakeVersion[];
  live: number | null;
  isPublic: boolean;
  trustMetadata: boolean;
  bindings: { live: Record<string, string>; draft: Record<string, string> };
}

export interface FakeInstallation {
  id: string;
  source: FakeFlow;
  versionPolicy: 'pinned' | 'track-latest';
  pinnedVersion: number | null;
  enabled: boolean;
  trustMetadata: boolean;
  slotBindings: Record<string, string>;
  createdAt: string;
}

export function modelOf(literal: string): FlowModel {
  const r = validateFlow(literal);
  if (!r.model) throw new Error(`test flow does not validate: ${JSON.stringify(r.diagnostics)}`);
  return r.model;
}

/** A flow with a draft and optionally released versions (each version = the same literal unless given). */
export function fakeFlow(
  literal: string,
  over: Partial<Omit<FakeFlow, 'versions'>> & { released?: string[]; liveVersion?: number | null } = {},
): FakeFlow {
  const model = modelOf(literal);
  const { released = [], liveVersion, ...rest } = over;
  const versions = released.map((text, i) => ({
    version: i + 1,
    literal: text,
    model: modelOf(text),
    createdAt: `2026-11-0${Math.min(9, i + 1)}T00:00:00.000Z`,
    releaseNote: `release ${i + 1}`,
  }));
  return {
    workspaceId: 'ws-acme',
    slug: model.slug,
    draft: { literal, model, updatedAt: '2026-11-10T00:00:00.000Z' },
    versions,
    live: liveVersion !== undefined ? liveVersion : versions.length ? versions.length : null,
    isPublic: model.discover.public,
    trustMetadata: false,
    bindings: { live: {}, draft: {} },
    ...rest,
  };
}

/** A small valid definition with one MCP tool; `extra` is spliced into the top-level map. */
export function flowLiteral(
  slug: string,
  opts: { tool?: string; description?: string; requires?: string[]; extra?: string; label?: string } = {},
): string {
  const tool = opts.tool ?? slug.replace(/-/g, '_');
  const requires = (opts.requires ?? []).map((slot) => `{:slot :${slot} :type :http-api}`).join(' ');
  const step = opts.requires?.length
    ? `(flow/step :http :call {:connection :${opts.requires[0]} :path "/x"})`
    : '(flow/step :function :echo {:code (fn [x] x) :input (flow/input)})';
  return `{:slug :${slug}
 :name "Name of ${slug}"
 :description ${JSON.stringify(opts.description ?? `Does ${slug}`)}
 :tags ["t-${slug}"]
 :requires [${requires}]
 :invocations {:default {:label ${JSON.stringify(opts.label ?? 'Run it')}
                         :inputs [{:name :domain :type :string :required true :label "Domain label" :description "Domain help"}
                                  {:name :mode :type :select :options ["fast" "full"] :default "fast" :label "Mode label"}]}}
 :interfaces {:mcp [{:tool-name "${tool}" :title "Title of ${tool}" :description ${JSON.stringify(opts.description ?? `Tool ${tool}`)} :invocation :default}]}
 ${opts.extra ?? ''}
 :flow ${step}}`;
}

export interface FakeFlowStore {
  flows: FakeFlow[];
  installations: FakeInstallation[];
}

function activeVersionOf(inst: FakeInstallation): number | null {
  if (inst.versionPolicy === 'pinned') return inst.pinnedVersion;
  return inst.source.live;
}

function currentModel(f: FakeFlow): FlowModel | null {
  if (f.live !== null) return f.versions[f.live - 1]?.model ?? null;
  return f.draft?.model ?? null;
}

function flowRecord(f: FakeFlow, inst: FakeInstallation | null): FlowRecord {
  const model = inst ? (f.versions[(activeVersionOf(inst) ?? 0) - 1]?.model ?? null) : currentModel(f);
  const described = model ?? f.draft?.model ?? null;
  return {
    slug: f.slug,
    installation: inst
      ? {
          id: inst.id,
          sourceWorkspaceId: f.workspaceId,
          versionPolicy: inst.versionPolicy,
          pinnedVersion: inst.pinnedVersion,
          activeVersion: activeVersionOf(inst),
          enabled: inst.enabled,
          trustMetadata: inst.trustMetadata,
          slotBindings: { ...inst.slotBindings },
        }
      : null,
    name: described?.name ?? null,
    description: described?.description ?? null,
    tags: described?.tags ?? [],
    hasDraft: inst ? false : f.draft !== null,
    draftUpdatedAt: inst ? null : (f.draft?.updatedAt ?? null),
    latestVersion: f.versions.length ? f.versions.length : null,
    liveVersion: f.live,
    isPublic: f.isPublic,
    ownerTrustMetadata: inst ? false : f.trustMetadata,
    mcpToolNames: model ? model.interfaces.mcp.map((m) => m.toolName) : [],
  };
}

function haystack(model: FlowModel | null | undefined, slug: string): string {
  if (!model) return slug;
  return [
    slug,
    model.name ?? '',
    model.description ?? '',
    ...model.tags,
    ...model.interfaces.mcp.flatMap((m) => [m.toolName, m.title ?? '', m.description ?? '']),
  ]
    .join(' ')
    .toLowerCase();
}

function matches(text: string, query: string | null): boolean {
  if (query === null) return true;
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => text.includes(w));
}

function pageBy<T>(items: T[], key: (t: T) => string, limit: number, after: string | null) {
  const start = after === null ? 0 : items.findIndex((t) => key(t) === after) + 1;
  const slice = items.slice(start, start + limit);
  const last = slice.at(-1);
  return { items: slice, nextAfter: start + limit < items.length && last ? key(last) : null };
}

export interface FakeServices extends WorkspaceServices {
  connections: ConnectionSummary[];
  feedback: FeedbackInput[];
  calls: { method: string; input: unknown }[];
  store: FakeFlowStore;
  /** Runs at the start of releaseFlow: lets a test change the store between a tool's checks and the write. */
  beforeRelease?: (() => void) | undefined;
}

export function fakeServices(
  connections: ConnectionSummary[] = [connection(1), connection(2), connection(3)],
  store: FakeFlowStore = { flows: [], installations: [] },
): FakeServices {
  const own = () => store.flows.filter((f) => f.workspaceId === 'ws-acme');
  const ownFlow = (slug: string) => own().find((f) => f.slug === slug);
  const visibleInstallations = (include: boolean) => (include ? store.installations : []);
  const resolve = (slug: string, installationId: string | null, include: boolean) => {
    if (installationId !== null) {
      const inst = visibleInstallations(include).find(
        (i) => i.id === installationId && i.source.slug === slug,
      );
      return inst ? { flow: inst.source, inst } : null;
    }
    const f = ownFlow(slug);
    if (f) return { flow: f, inst: null };
    const inst = visibleInstallations(include).find((i) => i.source.slug === slug);
    return inst ? { flow: inst.source, inst } : null;
  };
  const svc: FakeServices = {
    connections,
    feedback: [],
    calls: [],
    store,
    async searchFlows(input) {
      svc.calls.push({ method: 'searchFlows', input });
      const records = [
        ...own().map((f) => ({
          key: f.slug,
          rec: flowRecord(f, null),
          text: haystack(currentModel(f), f.slug),
        })),
        ...visibleInstallations(input.includeInstalled).map((i) => ({
          key: `${i.source.slug}~${i.id}`,
          rec: flowRecord(i.source, i),
          text: haystack(i.source.versions[(activeVersionOf(i) ?? 0) - 1]?.model, i.source.slug),
        })),
      ]
        .filter((r) => matches(r.text, input.query))
        .sort((a, b) => a.key.localeCompare(b.key));
      const page = pageBy(records, (r) => r.key, input.limit, input.after);
      return { items: page.items.map((r) => r.rec), nextAfter: page.nextAfter };
    },
    async searchFlowTools(input) {
      svc.calls.push({ method: 'searchFlowTools', input });
      const hits: Array<{ key: string; hit: FlowToolHit; text: string }> = [];
      for (const f of own()) {
        const defs: Array<['live' | 'draft', FlowModel | undefined]> = [];
        if (f.live !== null) defs.push(['live', f.versions[f.live - 1]?.model]);
        if (input.includeDraft && f.draft) defs.push(['draft', f.draft.model]);
        for (const [source, model] of defs) {
          for (const m of model?.interfaces.mcp ?? []) {
            hits.push({
              key: `${f.slug}/${m.toolName}/${source}`,
              hit: {
                flowSlug: f.slug,
                toolName: m.toolName,
                installationId: null,
                source,
                title: m.title ?? null,
                description: m.description ?? null,
                trustMetadata: f.trustMetadata,
              },
              text: haystack(model, f.slug),
            });
          }
        }
      }
      for (const i of visibleInstallations(input.includeInstalled)) {
        const model = i.source.versions[(activeVersionOf(i) ?? 0) - 1]?.model;
        for (const m of model?.interfaces.mcp ?? []) {
          hits.push({
            key: `${i.source.slug}/${m.toolName}~${i.id}`,
            hit: {
              flowSlug: i.source.slug,
              toolName: m.toolName,
              installationId: i.id,
              source: 'live',
              title: m.title ?? null,
              description: m.description ?? null,
              trustMetadata: i.trustMetadata,
            },
            text: haystack(model, i.source.slug),
          });
        }
      }
      const found = hits
        .filter((h) =>
          input.toolName === null ? matches(h.text, input.query) : h.hit.toolName === input.toolName,
        )
        .sort((a, b) => a.key.localeCompare(b.key));
      const page = pageBy(found, (h) => h.key, input.limit, input.after);
      return { items: page.items.map((h) => h.hit), nextAfter: page.nextAfter };
    },
    async getFlow(input) {
      svc.calls.push({ method: 'getFlow', input });
      const r = resolve(input.slug, input.installationId, input.includeInstalled);
      return r ? flowRecord(r.flow, r.inst) : null;
    },
    async getFlowDefinition(input) {
      svc.calls.push({ method: 'getFlowDefinition', input });
      const r = resolve(input.slug, input.installationId, input.includeInstalled);
      if (!r) return null;
      const { flow, inst } = r;
      const fromVersion = (n: number | null): FlowDefinitionRecord | null => {
        const v = n === null ? undefined : flow.versions[n - 1];
        return v
          ? {
              slug: flow.slug,
              installationId: inst?.id ?? null,
              version: v.version,
              literal: v.literal,
              model: v.model,
              updatedAt: v.createdAt,
              releaseNote: v.releaseNote,
            }
          : null;
      };
      const sel = input.selector;
      if (inst) {
        const active = activeVersionOf(inst);
        if ('version' in sel) return sel.version === active ? fromVersion(active) : null;
        return sel.source === 'draft' ? null : fromVersion(active);
      }
      if ('version' in sel) return fromVersion(sel.version);
      switch (sel.source) {
        case 'draft':
          return flow.draft
            ? {
                slug: flow.slug,
                installationId: null,
                version: null,
                literal: flow.draft.literal,
                model: flow.draft.model,
                updatedAt: flow.draft.updatedAt,
                releaseNote: null,
              }
            : null;
        case 'latest':
          return fromVersion(flow.versions.length || null);
        case 'live':
        case 'active':
          return fromVersion(flow.live);
      }
    },
    async saveFlowDraft(input) {
      svc.calls.push({ method: 'saveFlowDraft', input });
      let f = ownFlow(input.slug);
      const created = !f;
      if (!f) {
        f = fakeFlow(input.literal);
        store.flows.push(f);
      }
      f.draft = { literal: input.literal, model: input.model, updatedAt: '2026-11-20T10:00:00.000Z' };
      return { created, flow: flowRecord(f, null) };
    },
    async releaseFlow(input) {
      svc.calls.push({ method: 'releaseFlow', input });
      svc.beforeRelease?.();
      const f = ownFlow(input.slug);
      if (!f) throw new AppError('not_found', 'flow not found');
      const previousLiveVersion = f.live;
      // As the repository does under its row lock.
      const candidate = input.version === null ? f.draft?.model : f.versions[input.version - 1]?.model;
      if (
        input.expectedPublic !== undefined &&
        candidate &&
        (f.isPublic !== input.expectedPublic || candidate.discover.public !== input.expectedPublic)
      ) {
        throw new AppError('conflict', 'visibility changed since it was checked');
      }
      let releaseNote: string | null;
      if (input.version === null) {
        if (!f.draft) throw new AppError('invalid_request', 'no draft');
        f.versions.push({
          version: f.versions.length + 1,
          literal: f.draft.literal,
          model: f.draft.model,
          createdAt: '2026-11-20T11:00:00.000Z',
          releaseNote: input.releaseNote,
        });
        f.live = f.versions.length;
        releaseNote = input.releaseNote;
      } else {
        const v = f.versions[input.version - 1];
        if (!v) throw new AppError('not_found', 'version not found');
        f.live = input.version;
        releaseNote = v.releaseNote;
      }
      return {
        version: f.live,
        created: input.version === null,
        previousLiveVersion,
        releasedAt: '2026-11-20T11:00:00.000Z',
        releaseNote,
      };
    },
    async flowSlotBindings(input) {
      svc.calls.push({ method: 'flowSlotBindings', input });
      const r = resolve(input.slug, input.installationId, true);
      if (!r) return [];
      const map = r.inst ? r.inst.slotBindings : r.flow.bindings[input.target];
      return Object.entries(map).map(([slot, id]): SlotBindingRecord => {
        const c = svc.connections.find((x) => x.id === id);
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
    async workspaceInfo() {
      svc.calls.push({ method: 'workspaceInfo', input: null });
      return { id: 'ws-acme', name: 'Acme' };
    },
    async listConnections(input) {
      svc.calls.push({ method: 'listConnections', input });
      const start = input.after === null ? 0 : svc.connections.findIndex((c) => c.id === input.after) + 1;
      const items = svc.connections.slice(start, start + input.limit);
      const last = items.at(-1);
      return { items, nextAfter: start + input.limit < svc.connections.length && last ? last.id : null };
    },
    async checkConnections(input) {
      svc.calls.push({ method: 'checkConnections', input });
      const check = (c: ConnectionSummary): ConnectionCheck => ({
        connectionId: c.id,
        name: c.name,
        type: c.type,
        ok: c.status === 'active',
        status: c.status === 'active' ? 'healthy' : 'disabled',
        httpStatus: c.status === 'active' ? 200 : null,
        latencyMs: c.status === 'active' ? 12 : null,
        message: null,
        checkedAt: '2026-11-20T10:00:00.000Z',
      });
      if (input.connectionIds) {
        const known = svc.connections.filter((c) => input.connectionIds?.includes(c.id));
        return {
          items: known.map(check),
          unknownConnectionIds: input.connectionIds.filter((id) => !known.some((c) => c.id === id)),
          nextAfter: null,
        };
      }
      const start = input.after === null ? 0 : svc.connections.findIndex((c) => c.id === input.after) + 1;
      const items = svc.connections.slice(start, start + input.limit);
      const last = items.at(-1);
      return {
        items: items.map(check),
        unknownConnectionIds: [],
        nextAfter: start + input.limit < svc.connections.length && last ? last.id : null,
      };
    },
    async sendFeedback(input) {
      svc.calls.push({ method: 'sendFeedback', input });
      if (input.summary === 'explode')
        throw new AppError('unavailable', 'Feedback storage is unavailable, try again later');
      svc.feedback.push(input);
      return { feedbackId: `fb_${svc.feedback.length}`, createdAt: '2026-11-20T10:00:00.000Z' };
    },
  };
  return svc;
}

export interface TestContext extends McpRequestContext {
  services: FakeServices;
  audits: McpAuditEntry[];
  errors: unknown[];
}

export function makeCtx(over: Partial<McpRequestContext> = {}): TestContext {
  const audits: McpAuditEntry[] = [];
  const errors: unknown[] = [];
  const ctx = {
    workspaceId: 'ws-acme',
    principal: { kind: 'service_account', id: 'sa_agent', name: 'agent', keyId: 'key_1' },
    capabilities: new Set<Capability>(ALL_CAPABILITIES),
    narrowing: NO_NARROWING,
    workspacePolicy: OPEN_WORKSPACE_POLICY,
    services: fakeServices(),
    protocolVersionHeader: '2025-11-25',
    cursorKey: 'test-cursor-key',
    publicBaseUrl: 'https://flowgate.test',
    audit: (e: McpAuditEntry) => audits.push(e),
    onError: (e: unknown) => errors.push(e),
    ...over,
    audits,
    errors,
  } as TestContext;
  return ctx;
}

// biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies structurally.
type Json = any;

export interface RpcResponse {
  status: number;
  body: {
    jsonrpc: string;
    id: unknown;
    result?: Json;
    error?: { code: number; message: string; data?: Json };
  };
}

let nextId = 1;

/** Sends one request and returns the HTTP status and the parsed body. */
export async function rpc(
  ctx: McpRequestContext,
  method: string,
  params?: Record<string, unknown>,
): Promise<RpcResponse> {
  const id = nextId++;
  const res = await handleMcpMessage(
    params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params },
    ctx,
  );
  if (res.body === null) throw new Error(`expected a body, got status ${res.status}`);
  const body = JSON.parse(res.body);
  if (body.id !== id) throw new Error(`response id ${body.id} does not match request id ${id}`);
  return { status: res.status, body };
}

export async function callTool(
  ctx: McpRequestContext,
  name: string,
  args?: unknown,
  meta?: Record<string, unknown>,
) {
  const params: Record<string, unknown> = { name };
  if (args !== undefined) params.arguments = args;
  if (meta) params._meta = meta;
  return rpc(ctx, 'tools/call', params);
}
