import type { AdminApi } from '@flowgate/gateway';
import { type ClientResponse, hc, type InferRequestType, type InferResponseType } from 'hono/client';
import { z } from 'zod';

/**
 * HTTP client for the admin API (docs/admin-api.md). The CLI never opens the database itself: the embedded
 * database belongs to the one server process, so every admin command goes through this client.
 *
 * Paths, bodies and answers are the gateway's own route types (`hc<AdminApi>`): a changed route breaks the build
 * here instead of at run time.
 */

export interface AdminClientOptions {
  apiUrl: string;
  /** Operator token or a workspace-admin bearer; sent only in the Authorization header. */
  token: string | undefined;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** A failed admin call: the server's `{code, message}` or a transport failure mapped to the same shape. */
export class AdminApiError extends Error {
  readonly code: string;
  readonly status: number;
  /** Field-level problems the server listed for a rejected body. */
  readonly issues: Array<{ path: string; message: string }>;

  constructor(
    code: string,
    message: string,
    status: number,
    issues: Array<{ path: string; message: string }> = [],
  ) {
    super(message);
    this.name = 'AdminApiError';
    this.code = code;
    this.status = status;
    this.issues = issues;
  }
}

// An error answer may come from anything between the CLI and the gateway (a proxy, a wrong URL): checked before use.
const errorBodySchema = z.object({
  code: z.string(),
  message: z.string(),
  issues: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .max(50)
    .optional(),
});

type Api = ReturnType<typeof hc<AdminApi>>;
type Ws = Api['api']['workspaces'][':ws'];
type ServiceAccounts = Ws['service-accounts'];
type Flow = Ws['flows'][':slug'];

export type Workspace = InferResponseType<Api['api']['admin']['workspaces']['$post'], 201>;
export type ServiceAccount = InferResponseType<ServiceAccounts['$post'], 201>;
export type ServiceAccountPatch = InferRequestType<ServiceAccounts[':sa']['$patch']>['json'];
export type CreatedKey = InferResponseType<ServiceAccounts[':sa']['keys']['$post'], 201>;
export type KeyInfo = InferResponseType<ServiceAccounts[':sa']['keys']['$get'], 200>['items'][number];
export type Connection = InferResponseType<Ws['connections']['$post'], 201>;
export type McpPolicy = InferResponseType<Ws['mcp-policy']['$put'], 200>;
export type McpPolicyInput = InferRequestType<Ws['mcp-policy']['$put']>['json'];
export type AuditPage = InferResponseType<Ws['audit']['$get'], 200>;
export type FeedbackPage = InferResponseType<Ws['feedback']['$get'], 200>;
export type FeedbackQuery = InferRequestType<Ws['feedback']['$get']>['query'];
export type FeedbackArea = NonNullable<FeedbackQuery['area']>;
export type UsageSeries = InferResponseType<Ws['usage']['$get'], 200>;
export type UsagePoint = UsageSeries['points'][number];
type UsageApiQuery = InferRequestType<Ws['usage']['$get']>['query'];
export type UsageGroup = NonNullable<UsageApiQuery['group_by']>;
export type UsageGranularity = NonNullable<UsageApiQuery['granularity']>;
export type DraftAnswer = InferResponseType<Flow['draft']['$put']>;
export type FlowDiagnostic = DraftAnswer['diagnostics'][number];
export type ReleaseAnswer = InferResponseType<Flow['release']['$post'], 200>;
export type BindingsAnswer = InferResponseType<Flow['bindings']['$put'], 200>;
export type FlowInfo = InferResponseType<Flow['$get'], 200>;
export type FlowSummary = InferResponseType<Flow['$patch'], 200>;
export type Installation = InferResponseType<Ws['installations']['$post'], 201>;
export type InstallationInput = InferRequestType<Ws['installations']['$post']>['json'];
export type InstallationPatch = InferRequestType<Ws['installations'][':id']['$patch']>['json'];
type ConnectionBody = InferRequestType<Ws['connections']['$post']>['json'];
type ConnectionPatchBody = InferRequestType<Ws['connections'][':id']['$patch']>['json'];
export type ConnectionCheck = InferResponseType<Ws['connections'][':id']['check']['$post'], 200>;
export type DeletedConnection = InferResponseType<Ws['connections'][':id']['$delete'], 200>;
export type RunPage = InferResponseType<Ws['runs']['$get'], 200>;
export type RunSummary = RunPage['items'][number];
export type RunDetail = InferResponseType<Ws['runs'][':runId']['$get'], 200>;
export type StartRunInput = InferRequestType<Flow['runs']['$post']>['json'];
export type StartedRun = InferResponseType<Flow['runs']['$post'], 202>;

/**
 * What `connections create` sends. Looser than the route's body on purpose: the CLI passes the user's `--type` and
 * `--auth-type` through, and the server's validation names what is wrong.
 */
export interface ConnectionInput {
  name: string;
  type: string;
  baseUrl?: string;
  model?: string;
  auth: { type: string; secret?: string; headerName?: string };
  /** An mcp-server's fixed (non-secret) headers. */
  headers?: Record<string, string>;
}

/** What `connections update` sends; like ConnectionInput, the server names what is wrong. */
export interface ConnectionPatchInput {
  name?: string;
  baseUrl?: string;
  model?: string;
  secret?: string;
  auth?: { type: string; secret?: string; headerName?: string };
  /** Replaces the whole set of an mcp-server's fixed headers. */
  headers?: Record<string, string>;
}

interface PageQuery {
  limit?: number;
  cursor?: string;
}

/** Path segments are not encoded by the typed client: encode every value that comes from the user. */
const seg = encodeURIComponent;

export class AdminClient {
  readonly apiUrl: string;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(options: AdminClientOptions) {
    this.apiUrl = options.apiUrl.replace(/\/+$/, '');
    this.#headers = { accept: 'application/json' };
    if (options.token) this.#headers.authorization = `Bearer ${options.token}`;
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  createWorkspace(input: { id: string; name: string }): Promise<Workspace> {
    return this.#json((api) => api.api.admin.workspaces.$post({ json: input }));
  }

  createServiceAccount(
    ws: string,
    input: InferRequestType<ServiceAccounts['$post']>['json'],
  ): Promise<ServiceAccount> {
    return this.#json((api) =>
      api.api.workspaces[':ws']['service-accounts'].$post({ param: { ws: seg(ws) }, json: input }),
    );
  }

  listServiceAccounts(ws: string): Promise<{ items: ServiceAccount[] }> {
    return this.#list((api) =>
      api.api.workspaces[':ws']['service-accounts'].$get({ param: { ws: seg(ws) }, query: {} }),
    );
  }

  updateServiceAccount(ws: string, sa: string, patch: ServiceAccountPatch): Promise<ServiceAccount> {
    return this.#json((api) =>
      api.api.workspaces[':ws']['service-accounts'][':sa'].$patch({
        param: { ws: seg(ws), sa: seg(sa) },
        json: patch,
      }),
    );
  }

  createKey(ws: string, sa: string, input: { name?: string; expiresAt?: string }): Promise<CreatedKey> {
    return this.#json((api) =>
      api.api.workspaces[':ws']['service-accounts'][':sa'].keys.$post({
        param: { ws: seg(ws), sa: seg(sa) },
        json: input,
      }),
    );
  }

  listKeys(ws: string, sa: string): Promise<{ items: KeyInfo[] }> {
    return this.#list((api) =>
      api.api.workspaces[':ws']['service-accounts'][':sa'].keys.$get({ param: { ws: seg(ws), sa: seg(sa) } }),
    );
  }

  async revokeKey(ws: string, sa: string, keyId: string): Promise<void> {
    const { response, text } = await this.#send((api) =>
      api.api.workspaces[':ws']['service-accounts'][':sa'].keys[':keyId'].$delete({
        param: { ws: seg(ws), sa: seg(sa), keyId: seg(keyId) },
      }),
    );
    if (!response.ok) throw errorFromResponse(response.status, text);
  }

  createConnection(ws: string, input: ConnectionInput): Promise<Connection> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].connections.$post({
        param: { ws: seg(ws) },
        // The server validates the user's values (see ConnectionInput).
        json: input as ConnectionBody,
      }),
    );
  }

  updateConnection(ws: string, id: string, patch: ConnectionPatchInput): Promise<Connection> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].connections[':id'].$patch({
        param: { ws: seg(ws), id: seg(id) },
        // The server validates the user's values (see ConnectionPatchInput).
        json: patch as ConnectionPatchBody,
      }),
    );
  }

  rotateConnection(ws: string, id: string, secret: string): Promise<Connection> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].connections[':id'].rotate.$post({
        param: { ws: seg(ws), id: seg(id) },
        json: { secret },
      }),
    );
  }

  setConnectionEnabled(ws: string, id: string, enabled: boolean): Promise<Connection> {
    return this.#json((api) => {
      const route = api.api.workspaces[':ws'].connections[':id'];
      const param = { param: { ws: seg(ws), id: seg(id) } };
      return enabled ? route.enable.$post(param) : route.disable.$post(param);
    });
  }

  checkConnection(ws: string, id: string): Promise<ConnectionCheck> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].connections[':id'].check.$post({ param: { ws: seg(ws), id: seg(id) } }),
    );
  }

  deleteConnection(ws: string, id: string, force: boolean): Promise<DeletedConnection> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].connections[':id'].$delete({
        param: { ws: seg(ws), id: seg(id) },
        query: force ? { force: 'true' } : {},
      }),
    );
  }

  setMcpPolicy(ws: string, input: McpPolicyInput): Promise<McpPolicy> {
    return this.#json((api) =>
      api.api.workspaces[':ws']['mcp-policy'].$put({ param: { ws: seg(ws) }, json: input }),
    );
  }

  listAudit(ws: string, query: PageQuery = {}): Promise<AuditPage> {
    return this.#list((api) =>
      api.api.workspaces[':ws'].audit.$get({ param: { ws: seg(ws) }, query: pageQuery(query) }),
    );
  }

  listFeedback(
    ws: string,
    query: PageQuery & { area?: FeedbackArea; since?: string } = {},
  ): Promise<FeedbackPage> {
    return this.#list((api) =>
      api.api.workspaces[':ws'].feedback.$get({
        param: { ws: seg(ws) },
        query: {
          ...pageQuery(query),
          ...(query.area !== undefined ? { area: query.area } : {}),
          ...(query.since !== undefined ? { since: query.since } : {}),
        },
      }),
    );
  }

  /** A workspace's usage series over `[from, to)`, per hour or day bucket and group. */
  usage(
    ws: string,
    query: { from: string; to: string; granularity: UsageGranularity; groupBy: UsageGroup },
  ): Promise<UsageSeries> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].usage.$get({
        param: { ws: seg(ws) },
        query: { from: query.from, to: query.to, granularity: query.granularity, group_by: query.groupBy },
      }),
    );
  }

  /**
   * Pushes EDN text as the flow's draft. A 422 (invalid definition, nothing saved) is an answer, not an error:
   * it carries the diagnostics the caller prints.
   */
  async pushDraft(
    ws: string,
    slug: string,
    edn: string,
  ): Promise<{ status: 200 | 422; answer: DraftAnswer }> {
    const { response, text, label } = await this.#send((api) =>
      api.api.workspaces[':ws'].flows[':slug'].draft.$put(
        { param: { ws: seg(ws), slug: seg(slug) } },
        { headers: { 'content-type': 'application/edn' }, init: { body: edn } },
      ),
    );
    if (response.status !== 200 && response.status !== 422) throw errorFromResponse(response.status, text);
    return { status: response.status, answer: parseAnswer<DraftAnswer>(text, label, response.status) };
  }

  releaseFlow(
    ws: string,
    slug: string,
    input: { version?: number; releaseNote?: string },
  ): Promise<ReleaseAnswer> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].flows[':slug'].release.$post({
        param: { ws: seg(ws), slug: seg(slug) },
        json: input,
      }),
    );
  }

  setFlowBindings(
    ws: string,
    slug: string,
    input: { target?: 'live' | 'draft'; slots: Record<string, string | null> },
  ): Promise<BindingsAnswer> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].flows[':slug'].bindings.$put({
        param: { ws: seg(ws), slug: seg(slug) },
        json: input,
      }),
    );
  }

  /** Trusts (or withdraws trust in) the live version's authored metadata, shown to agents when trusted. */
  setFlowTrust(ws: string, slug: string, trustMetadata: boolean): Promise<FlowSummary> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].flows[':slug'].$patch({
        param: { ws: seg(ws), slug: seg(slug) },
        json: { trustMetadata },
      }),
    );
  }

  listFlows(ws: string, query: PageQuery = {}) {
    return this.#list((api) =>
      api.api.workspaces[':ws'].flows.$get({ param: { ws: seg(ws) }, query: pageQuery(query) }),
    );
  }

  getFlow(ws: string, slug: string): Promise<FlowInfo> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].flows[':slug'].$get({ param: { ws: seg(ws), slug: seg(slug) } }),
    );
  }

  listConnections(ws: string, query: PageQuery = {}) {
    return this.#list((api) =>
      api.api.workspaces[':ws'].connections.$get({ param: { ws: seg(ws) }, query: pageQuery(query) }),
    );
  }

  createInstallation(ws: string, input: InstallationInput): Promise<Installation> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].installations.$post({ param: { ws: seg(ws) }, json: input }),
    );
  }

  updateInstallation(ws: string, id: string, patch: InstallationPatch): Promise<Installation> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].installations[':id'].$patch({
        param: { ws: seg(ws), id: seg(id) },
        json: patch,
      }),
    );
  }

  listInstallations(ws: string, query: PageQuery = {}) {
    return this.#list((api) =>
      api.api.workspaces[':ws'].installations.$get({ param: { ws: seg(ws) }, query: pageQuery(query) }),
    );
  }

  listRuns(
    ws: string,
    query: PageQuery & { status?: RunSummary['status']; flow?: string } = {},
  ): Promise<RunPage> {
    return this.#list((api) =>
      api.api.workspaces[':ws'].runs.$get({
        param: { ws: seg(ws) },
        query: {
          ...pageQuery(query),
          ...(query.status !== undefined ? { status: query.status } : {}),
          ...(query.flow !== undefined ? { flow: query.flow } : {}),
        },
      }),
    );
  }

  getRun(ws: string, runId: string): Promise<RunDetail> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].runs[':runId'].$get({ param: { ws: seg(ws), runId: seg(runId) } }),
    );
  }

  cancelRun(ws: string, runId: string): Promise<RunSummary> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].runs[':runId'].cancel.$post({ param: { ws: seg(ws), runId: seg(runId) } }),
    );
  }

  startRun(ws: string, slug: string, input: StartRunInput): Promise<StartedRun> {
    return this.#json((api) =>
      api.api.workspaces[':ws'].flows[':slug'].runs.$post({
        param: { ws: seg(ws), slug: seg(slug) },
        json: input,
      }),
    );
  }

  /** A list answer: its `items` are what every caller iterates, so an answer without them is refused. */
  async #list<T extends { items: unknown[] }>(
    call: (api: Api) => Promise<ClientResponse<T, number, string>>,
  ): Promise<T> {
    const { response, text, label } = await this.#send(call);
    if (!response.ok) throw errorFromResponse(response.status, text);
    const answer = parseAnswer<T>(text, label, response.status);
    if (!Array.isArray((answer as { items?: unknown } | null)?.items)) {
      throw new AdminApiError('invalid_response', `${label} answered an unexpected shape (items)`, 0);
    }
    return answer;
  }

  async #json<T>(call: (api: Api) => Promise<ClientResponse<T, number, string>>): Promise<T> {
    const { response, text, label } = await this.#send(call);
    if (!response.ok) throw errorFromResponse(response.status, text);
    return parseAnswer<T>(text, label, response.status);
  }

  /** One request with the token, a timeout, and transport failures mapped to `unavailable`. */
  async #send<R extends ClientResponse<unknown, number, string>>(
    call: (api: Api) => Promise<R>,
  ): Promise<{ response: R; text: string; label: string }> {
    // `METHOD /path?query` for messages, without the base URL.
    let label = '';
    const api = hc<AdminApi>(this.apiUrl, {
      headers: this.#headers,
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        label = `${init?.method ?? 'GET'} ${String(input).slice(this.apiUrl.length)}`;
        try {
          return await this.#fetch(input, { ...init, signal: AbortSignal.timeout(this.#timeoutMs) });
        } catch (error) {
          throw new AdminApiError(
            'unavailable',
            `cannot reach the Flowgate API at ${this.apiUrl} (${transportReason(error)})`,
            0,
          );
        }
      },
    });
    const response = await call(api);
    return { response, text: await response.text(), label };
  }
}

function pageQuery(query: PageQuery): { limit?: string; cursor?: string } {
  return {
    ...(query.limit !== undefined ? { limit: String(query.limit) } : {}),
    ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
  };
}

function parseAnswer<T>(text: string, label: string, status: number): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new AdminApiError('invalid_response', `${label} answered ${status} without JSON`, 0);
  }
}

function errorFromResponse(status: number, text: string): AdminApiError {
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success)
      return new AdminApiError(parsed.data.code, parsed.data.message, status, parsed.data.issues);
  } catch {
    // not JSON: fall through to a status-only error, never echoing an unknown body
  }
  return new AdminApiError(`http_${status}`, `the server answered HTTP ${status}`, status);
}

function transportReason(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return 'timed out';
    const cause = (error as Error & { cause?: { code?: unknown } }).cause;
    if (cause && typeof cause.code === 'string') return cause.code;
    return error.message;
  }
  return 'network error';
}
