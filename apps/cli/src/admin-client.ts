import { z } from 'zod';

/**
 * HTTP client for the admin API (spec 11.1). The CLI never opens the database itself: the embedded
 * database belongs to the one server process, so every admin command goes through this client.
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

// Responses are validated for the fields the CLI relies on; unknown fields are kept for `--json`.
const workspaceSchema = z.looseObject({ id: z.string(), name: z.string(), createdAt: z.string() });
const serviceAccountSchema = z.looseObject({
  serviceAccountId: z.string(),
  name: z.string(),
  capabilities: z.array(z.string()),
  status: z.string(),
});
const serviceAccountListSchema = z.looseObject({ items: z.array(serviceAccountSchema) });
const createdKeySchema = z.looseObject({
  serviceAccountId: z.string(),
  key: z.looseObject({ keyId: z.string(), apiKey: z.string(), expiresAt: z.string().nullable().optional() }),
});
const keyInfoSchema = z.looseObject({
  keyId: z.string(),
  name: z.string().nullable().optional(),
  createdAt: z.string(),
  expiresAt: z.string().nullable().optional(),
  lastUsedAt: z.string().nullable().optional(),
  revokedAt: z.string().nullable().optional(),
});
const keyListSchema = z.looseObject({ items: z.array(keyInfoSchema) });
const connectionSchema = z.looseObject({ connectionId: z.string() });
const policySchema = z.looseObject({});
const auditPageSchema = z.looseObject({
  items: z.array(z.looseObject({})),
  nextCursor: z.string().nullable().optional(),
});
const diagnosticSchema = z.looseObject({
  severity: z.string(),
  code: z.string(),
  message: z.string(),
  path: z.string(),
  line: z.number().nullable(),
  column: z.number().nullable(),
  hint: z.string(),
});
const draftAnswerSchema = z.looseObject({
  flowSlug: z.string(),
  valid: z.boolean(),
  diagnostics: z.array(diagnosticSchema).max(500),
});
const releaseAnswerSchema = z.looseObject({ flowSlug: z.string(), version: z.number() });
const bindingsAnswerSchema = z.looseObject({
  flowSlug: z.string(),
  target: z.string(),
  slots: z.record(z.string(), z.string()),
});
const flowSchema = z.looseObject({ flowSlug: z.string() });
const flowListSchema = z.looseObject({
  items: z.array(flowSchema),
  nextCursor: z.string().nullable().optional(),
});
const installationSchema = z.looseObject({
  installationId: z.string(),
  sourceWorkspaceId: z.string(),
  flowSlug: z.string(),
  enabled: z.boolean(),
});
const installationListSchema = z.looseObject({
  items: z.array(installationSchema),
  nextCursor: z.string().nullable().optional(),
});
const connectionListSchema = z.looseObject({
  items: z.array(z.looseObject({ connectionId: z.string(), name: z.string() })),
  nextCursor: z.string().nullable().optional(),
});
const errorBodySchema = z.object({
  code: z.string(),
  message: z.string(),
  issues: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .max(50)
    .optional(),
});

export type Workspace = z.infer<typeof workspaceSchema>;
export type ServiceAccount = z.infer<typeof serviceAccountSchema>;
export type CreatedKey = z.infer<typeof createdKeySchema>;
export type KeyInfo = z.infer<typeof keyInfoSchema>;
export type Connection = z.infer<typeof connectionSchema>;
export type McpPolicy = z.infer<typeof policySchema>;
export type AuditPage = z.infer<typeof auditPageSchema>;
export type FlowDiagnostic = z.infer<typeof diagnosticSchema>;
export type DraftAnswer = z.infer<typeof draftAnswerSchema>;
export type ReleaseAnswer = z.infer<typeof releaseAnswerSchema>;
export type BindingsAnswer = z.infer<typeof bindingsAnswerSchema>;
export type FlowInfo = z.infer<typeof flowSchema>;
export type Installation = z.infer<typeof installationSchema>;

export interface InstallationInput {
  sourceWorkspaceId: string;
  flowSlug: string;
  versionPolicy: 'pinned' | 'track-latest';
  pinnedVersion?: number;
}

export interface InstallationPatch {
  enabled?: boolean;
  trustMetadata?: boolean;
  slotBindings?: Record<string, string | null>;
  versionPolicy?: 'pinned' | 'track-latest';
  pinnedVersion?: number;
}

export interface ServiceAccountPatch {
  status?: 'active' | 'disabled';
  capabilities?: string[];
  name?: string;
}

export interface ConnectionInput {
  name: string;
  type: string;
  baseUrl?: string;
  auth: { type: string; secret?: string; headerName?: string };
}

export interface McpPolicyInput {
  readOnly?: boolean;
  disabledTools?: string[];
  allowedOrigins?: string[];
  allowedIps?: string[];
}

const seg = encodeURIComponent;

export class AdminClient {
  readonly apiUrl: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(options: AdminClientOptions) {
    this.apiUrl = options.apiUrl.replace(/\/+$/, '');
    this.#token = options.token;
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  createWorkspace(input: { id: string; name: string }): Promise<Workspace> {
    return this.#call('POST', '/api/admin/workspaces', input, workspaceSchema);
  }

  createServiceAccount(ws: string, input: { name: string; capabilities: string[] }): Promise<ServiceAccount> {
    return this.#call('POST', `/api/workspaces/${seg(ws)}/service-accounts`, input, serviceAccountSchema);
  }

  listServiceAccounts(ws: string): Promise<{ items: ServiceAccount[] }> {
    return this.#call(
      'GET',
      `/api/workspaces/${seg(ws)}/service-accounts`,
      undefined,
      serviceAccountListSchema,
    );
  }

  updateServiceAccount(ws: string, sa: string, patch: ServiceAccountPatch): Promise<ServiceAccount> {
    return this.#call(
      'PATCH',
      `/api/workspaces/${seg(ws)}/service-accounts/${seg(sa)}`,
      patch,
      serviceAccountSchema,
    );
  }

  createKey(ws: string, sa: string, input: { name?: string; expiresAt?: string }): Promise<CreatedKey> {
    return this.#call(
      'POST',
      `/api/workspaces/${seg(ws)}/service-accounts/${seg(sa)}/keys`,
      input,
      createdKeySchema,
    );
  }

  listKeys(ws: string, sa: string): Promise<{ items: KeyInfo[] }> {
    return this.#call(
      'GET',
      `/api/workspaces/${seg(ws)}/service-accounts/${seg(sa)}/keys`,
      undefined,
      keyListSchema,
    );
  }

  async revokeKey(ws: string, sa: string, keyId: string): Promise<void> {
    await this.#call(
      'DELETE',
      `/api/workspaces/${seg(ws)}/service-accounts/${seg(sa)}/keys/${seg(keyId)}`,
      undefined,
      undefined,
    );
  }

  createConnection(ws: string, input: ConnectionInput): Promise<Connection> {
    return this.#call('POST', `/api/workspaces/${seg(ws)}/connections`, input, connectionSchema);
  }

  setMcpPolicy(ws: string, input: McpPolicyInput): Promise<McpPolicy> {
    return this.#call('PUT', `/api/workspaces/${seg(ws)}/mcp-policy`, input, policySchema);
  }

  listAudit(ws: string, query: { limit?: number; cursor?: string } = {}): Promise<AuditPage> {
    const params = new URLSearchParams();
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    const qs = params.size > 0 ? `?${params.toString()}` : '';
    return this.#call('GET', `/api/workspaces/${seg(ws)}/audit${qs}`, undefined, auditPageSchema);
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
    const path = `/api/workspaces/${seg(ws)}/flows/${seg(slug)}/draft`;
    const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/edn' };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    let response: Response;
    try {
      response = await this.#fetch(`${this.apiUrl}${path}`, {
        method: 'PUT',
        headers,
        body: edn,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      throw new AdminApiError('unavailable', `cannot reach ${this.apiUrl} (${transportReason(error)})`, 0);
    }
    const text = await response.text();
    if (response.status !== 200 && response.status !== 422) throw errorFromResponse(response.status, text);
    let parsed: ReturnType<typeof draftAnswerSchema.safeParse>;
    try {
      parsed = draftAnswerSchema.safeParse(JSON.parse(text));
    } catch {
      throw new AdminApiError('invalid_response', `PUT ${path} answered ${response.status} without JSON`, 0);
    }
    if (!parsed.success)
      throw new AdminApiError('invalid_response', `PUT ${path} answered an unexpected shape`, 0);
    return { status: response.status, answer: parsed.data };
  }

  releaseFlow(
    ws: string,
    slug: string,
    input: { version?: number; releaseNote?: string },
  ): Promise<ReleaseAnswer> {
    return this.#call(
      'POST',
      `/api/workspaces/${seg(ws)}/flows/${seg(slug)}/release`,
      input,
      releaseAnswerSchema,
    );
  }

  setFlowBindings(
    ws: string,
    slug: string,
    input: { target?: 'live' | 'draft'; slots: Record<string, string | null> },
  ): Promise<BindingsAnswer> {
    return this.#call(
      'PUT',
      `/api/workspaces/${seg(ws)}/flows/${seg(slug)}/bindings`,
      input,
      bindingsAnswerSchema,
    );
  }

  listFlows(
    ws: string,
    query: { limit?: number; cursor?: string } = {},
  ): Promise<{ items: FlowInfo[]; nextCursor?: string | null | undefined }> {
    return this.#call(
      'GET',
      `/api/workspaces/${seg(ws)}/flows${queryString(query)}`,
      undefined,
      flowListSchema,
    );
  }

  getFlow(ws: string, slug: string): Promise<FlowInfo> {
    return this.#call('GET', `/api/workspaces/${seg(ws)}/flows/${seg(slug)}`, undefined, flowSchema);
  }

  listConnections(
    ws: string,
    query: { limit?: number; cursor?: string } = {},
  ): Promise<z.infer<typeof connectionListSchema>> {
    return this.#call(
      'GET',
      `/api/workspaces/${seg(ws)}/connections${queryString(query)}`,
      undefined,
      connectionListSchema,
    );
  }

  createInstallation(ws: string, input: InstallationInput): Promise<Installation> {
    return this.#call('POST', `/api/workspaces/${seg(ws)}/installations`, input, installationSchema);
  }

  updateInstallation(ws: string, id: string, patch: InstallationPatch): Promise<Installation> {
    return this.#call(
      'PATCH',
      `/api/workspaces/${seg(ws)}/installations/${seg(id)}`,
      patch,
      installationSchema,
    );
  }

  listInstallations(
    ws: string,
    query: { limit?: number; cursor?: string } = {},
  ): Promise<{ items: Installation[]; nextCursor?: string | null | undefined }> {
    return this.#call(
      'GET',
      `/api/workspaces/${seg(ws)}/installations${queryString(query)}`,
      undefined,
      installationListSchema,
    );
  }

  async #call<T>(method: string, path: string, body: unknown, schema: z.ZodType<T>): Promise<T>;
  async #call(method: string, path: string, body: unknown, schema: undefined): Promise<undefined>;
  async #call<T>(
    method: string,
    path: string,
    body: unknown,
    schema: z.ZodType<T> | undefined,
  ): Promise<T | undefined> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.#fetch(`${this.apiUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      throw new AdminApiError('unavailable', `cannot reach ${this.apiUrl} (${transportReason(error)})`, 0);
    }
    const text = await response.text();
    if (!response.ok) throw errorFromResponse(response.status, text);
    if (!schema) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AdminApiError(
        'invalid_response',
        `${method} ${path} answered ${response.status} without JSON`,
        0,
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const fields = parsed.error.issues.map((i) => i.path.join('.') || '(root)').join(', ');
      throw new AdminApiError(
        'invalid_response',
        `${method} ${path} answered an unexpected shape (${fields})`,
        0,
      );
    }
    return parsed.data;
  }
}

function queryString(query: { limit?: number; cursor?: string }): string {
  const params = new URLSearchParams();
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.cursor !== undefined) params.set('cursor', query.cursor);
  return params.size > 0 ? `?${params.toString()}` : '';
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
