/**
 * Property-based fuzzing of the gateway's HTTP surface: arbitrary JSON-RPC envelopes, methods, params, tool
 * arguments and MCP headers on the MCP endpoints, raw byte bodies, and admin API requests (paths, query strings,
 * bodies) with valid and invalid credentials. Every answer must come within 2 s, never be a 5xx, and be
 * well-formed: a JSON-RPC response (JSON or SSE), or the gateway's `{code, message}` error body.
 */
import { CATALOG } from '@flowgate/workspace-mcp';
import fc from 'fast-check';

export const FUZZ_WS = 'ws-fuzz';
export const MAX_ANSWER_MS = 2000;

export interface FuzzTarget {
  url: string;
  adminToken: string;
  /** A key with every workspace capability. */
  fullKey: string;
  /** A key that may only read flows. */
  readKey: string;
  /** A run the keys may read. */
  runId: string;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** What the answer must look like: an MCP endpoint answers JSON-RPC (or an HTTP error body). */
  surface: 'mcp' | 'admin';
}

export interface FuzzAnswer {
  status: number;
  contentType: string;
  text: string;
  ms: number;
}

// --- arbitraries -------------------------------------------------------------------------------------

/** Printable ASCII: what an HTTP header value may carry (fetch refuses the rest before sending). */
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 60,
});
const segment = fc.oneof(
  fc.constantFrom(FUZZ_WS, 'echo', 'ws-other', 'x', '..', '%2e%2e', '0', '-1', 'a'.repeat(300)),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
);

// The catalog's own names, so a renamed or added tool is fuzzed without touching this file.
const TOOLS = CATALOG.map((t) => t.name);
const METHODS = [
  'initialize',
  'notifications/initialized',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'server/discover',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
  'completion/complete',
  'logging/setLevel',
];
const ARG_NAMES = [
  'flow_slug',
  'tool_name',
  'input',
  'wait_ms',
  'query',
  'limit',
  'cursor',
  'run_id',
  'step_id',
  'installation_id',
  'target',
  'definition',
  'source',
  'message',
  'step_type',
  'version',
];

const anyJson = fc.jsonValue({ maxDepth: 3 });
const smallString = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('echo', 'echo_word', '', 'draft', 'live'),
);
const argValue = fc.oneof(
  anyJson,
  smallString,
  fc.integer(),
  fc.constantFrom(null, true, -1, 0, 1e300, 1500),
);

function toolArgs(target: FuzzTarget) {
  return fc.oneof(
    fc.dictionary(fc.constantFrom(...ARG_NAMES), argValue, { maxKeys: 5 }),
    fc.record(
      {
        flow_slug: fc.constantFrom('echo', 'nope', ''),
        tool_name: fc.constantFrom('echo_word', 'nope'),
        input: fc.oneof(fc.record({ word: smallString }), anyJson),
        // Waits stay short: a long wait on a run that never ends would be a slow answer by design.
        wait_ms: fc.integer({ min: -10, max: 1000 }),
        run_id: fc.constantFrom(target.runId, 'run_nope'),
      },
      { requiredKeys: [] },
    ),
    anyJson,
  );
}

function params(target: FuzzTarget) {
  const uri = fc.oneof(
    fc.constantFrom(
      `flowgate://runs/${target.runId}`,
      `flowgate://runs/${target.runId}/result`,
      'flowgate://flows/echo',
      'flowgate://flows/echo/definition/live',
      'flowgate://flows/echo/mcp-tools/echo_word',
      `flowgate://workspaces/${FUZZ_WS}/mcp`,
      'flowgate://mcp-docs/overview',
      'flowgate://runs/',
      'file:///etc/passwd',
    ),
    fc.string({ maxLength: 60 }),
    fc.webUrl(),
  );
  return fc.oneof(
    fc.record(
      {
        name: fc.oneof(fc.constantFrom(...TOOLS), fc.string({ maxLength: 30 })),
        arguments: toolArgs(target),
      },
      { requiredKeys: [] },
    ),
    fc.record({ uri }, { requiredKeys: [] }),
    fc.record(
      {
        protocolVersion: fc.oneof(
          fc.constantFrom('2025-11-25', '2025-06-18', '2025-03-26', '2026-07-28'),
          fc.string({ maxLength: 12 }),
        ),
        capabilities: anyJson,
        clientInfo: fc.record({ name: smallString, version: smallString }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    ),
    fc.record(
      { cursor: fc.oneof(fc.string({ maxLength: 40 }), anyJson), taskId: smallString, _meta: anyJson },
      { requiredKeys: [] },
    ),
    anyJson,
  );
}

function envelope(target: FuzzTarget) {
  const fields = {
    jsonrpc: usually<unknown>('2.0', anyJson),
    id: fc.oneof(
      { weight: 6, arbitrary: fc.integer() },
      { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(null), anyJson) },
    ),
    method: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...METHODS) },
      { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 30 }), anyJson) },
    ),
    params: params(target),
  };
  // Mostly complete envelopes (so the methods behind the envelope check are reached), some with keys missing.
  const one = fc.oneof(
    { weight: 4, arbitrary: fc.record(fields) },
    { weight: 1, arbitrary: fc.record(fields, { requiredKeys: [] }) },
  );
  return fc.oneof(
    { weight: 8, arbitrary: one.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.array(one, { maxLength: 4 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
    // A valid envelope cut short or with noise appended: parsers must refuse it, not choke on it.
    {
      weight: 1,
      arbitrary: fc.tuple(one, fc.nat(), fc.string({ maxLength: 10 })).map(([v, cut, noise]) => {
        const s = JSON.stringify(v);
        return s.slice(0, cut % (s.length + 1)) + noise;
      }),
    },
  );
}

/** Mostly the good value (so the handlers behind the checks are reached), sometimes anything from `other`. */
function usually<T>(good: T, other: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ weight: 9, arbitrary: fc.constant(good) }, { weight: 1, arbitrary: other });
}

/** Mostly absent, now and then one of `values`. */
function sometimes(values: fc.Arbitrary<string>): fc.Arbitrary<string | undefined> {
  return fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: values });
}

function auth(target: FuzzTarget): fc.Arbitrary<string | undefined> {
  return usually<string | undefined>(
    `Bearer ${target.fullKey}`,
    fc.oneof(
      fc.constantFrom(
        `Bearer ${target.readKey}`,
        `Bearer ${target.adminToken}`,
        `Bearer ${target.fullKey.slice(0, -1)}x`,
        'Bearer fgk_nope',
        'Bearer ',
        'Basic dXNlcjpwYXNz',
        'Bearer eyJhbGciOiJub25lIn0.e30.',
      ),
      headerText.map((s) => `Bearer ${s}`),
      headerText,
      fc.constant(undefined),
    ),
  );
}

/** The headers of a well-behaved client, with narrowing headers from their valid values now and then. */
function cleanMcpHeaders(target: FuzzTarget) {
  return fc
    .record({
      authorization: fc.constant(`Bearer ${target.fullKey}`),
      'content-type': fc.constant('application/json'),
      accept: fc.constant('application/json, text/event-stream'),
      'mcp-protocol-version': fc.constantFrom('2025-11-25', '2025-06-18', '2025-03-26'),
      'x-mcp-toolsets': sometimes(
        fc.constantFrom('read', 'run', 'search', 'run,search', 'authoring', 'release'),
      ),
      'x-mcp-readonly': sometimes(fc.constantFrom('true', 'false')),
    })
    .map(defined);
}

function mcpHeaders(target: FuzzTarget) {
  return fc.oneof(
    { weight: 3, arbitrary: cleanMcpHeaders(target) },
    { weight: 2, arbitrary: fuzzedMcpHeaders(target) },
  );
}

function fuzzedMcpHeaders(target: FuzzTarget) {
  return fc
    .record({
      authorization: auth(target),
      'content-type': usually<string | undefined>(
        'application/json',
        fc.oneof(
          fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/edn', undefined),
          headerText,
        ),
      ),
      accept: usually<string | undefined>(
        'application/json, text/event-stream',
        fc.oneof(fc.constantFrom('application/json', 'text/event-stream', '*/*', undefined), headerText),
      ),
      'mcp-protocol-version': usually<string | undefined>(
        '2025-11-25',
        fc.oneof(
          fc.constantFrom('2025-06-18', '2025-03-26', '2026-07-28', '2024-11-05', undefined),
          headerText,
        ),
      ),
      'mcp-session-id': sometimes(headerText),
      'x-mcp-toolsets': sometimes(
        fc.oneof(fc.constantFrom('read', 'run,search', 'all', 'authoring,release'), headerText),
      ),
      'x-mcp-tools': sometimes(fc.oneof(fc.constantFrom(...TOOLS), headerText)),
      'x-mcp-exclude-tools': sometimes(fc.oneof(fc.constantFrom(...TOOLS), headerText)),
      'x-mcp-readonly': sometimes(fc.oneof(fc.constantFrom('true', 'false', '1', ''), headerText)),
      origin: sometimes(fc.constantFrom('http://evil.example', 'null', 'http://127.0.0.1')),
    })
    .map(defined);
}

function defined(h: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter((e): e is [string, string] => e[1] !== undefined));
}

const query = fc
  .dictionary(
    fc.oneof(
      fc.constantFrom('limit', 'cursor', 'status', 'after', 'before', 'q', 'flow'),
      fc.string({ maxLength: 10 }),
    ),
    fc.oneof(fc.constantFrom('1', '0', '-1', '1000000', 'abc', ''), fc.string({ maxLength: 40 })),
    { maxKeys: 3 },
  )
  .map((q) => {
    const s = new URLSearchParams(q).toString();
    return s ? `?${s}` : '';
  });

export function mcpRequest(target: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const path = fc.oneof(
    { weight: 6, arbitrary: fc.constant(`/api/workspaces/${FUZZ_WS}/mcp`) },
    { weight: 2, arbitrary: fc.constant(`/api/workspaces/${FUZZ_WS}/flows/echo/mcp`) },
    { weight: 1, arbitrary: segment.map((ws) => `/api/workspaces/${ws}/mcp`) },
    { weight: 1, arbitrary: segment.map((slug) => `/api/workspaces/${FUZZ_WS}/flows/${slug}/mcp`) },
  );
  const body = fc.oneof(
    { weight: 8, arbitrary: envelope(target) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  );
  return fc
    .record({
      method: fc.oneof(
        { weight: 12, arbitrary: fc.constant('POST') },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'DELETE', 'PUT', 'OPTIONS', 'PATCH') },
      ),
      path,
      headers: mcpHeaders(target),
      body,
    })
    .map((r) => ({ ...r, surface: 'mcp' as const, ...(r.method === 'GET' ? { body: undefined } : {}) }));
}

export function adminRequest(target: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const ws = fc.oneof({ weight: 4, arbitrary: fc.constant(FUZZ_WS) }, { weight: 1, arbitrary: segment });
  const route = fc.oneof(
    fc.constant('/api/admin/workspaces'),
    ws.map((w) => `/api/workspaces/${w}`),
    fc
      .tuple(
        ws,
        fc.constantFrom(
          'service-accounts',
          'connections',
          'mcp-policy',
          'audit',
          'flows',
          'installations',
          'runs',
        ),
      )
      .map(([w, r]) => `/api/workspaces/${w}/${r}`),
    fc
      .tuple(
        ws,
        fc.constantFrom('service-accounts', 'connections', 'flows', 'installations', 'runs'),
        segment,
      )
      .map(([w, r, id]) => `/api/workspaces/${w}/${r}/${id}`),
    fc
      .tuple(ws, segment, fc.constantFrom('draft', 'release', 'bindings', 'mcp'))
      .map(([w, s, a]) => `/api/workspaces/${w}/flows/${s}/${a}`),
    fc
      .tuple(ws, segment, fc.option(segment, { nil: undefined }))
      .map(([w, sa, k]) => `/api/workspaces/${w}/service-accounts/${sa}/keys${k ? `/${k}` : ''}`),
    fc
      .tuple(ws, fc.constantFrom(target.runId, 'run_nope'))
      .map(([w, r]) => `/api/workspaces/${w}/runs/${r}/cancel`),
    fc.constantFrom(
      '/healthz',
      '/readyz',
      '/.well-known/mcp/server-card.json',
      `/api/workspaces/${FUZZ_WS}/mcp/server-card`,
      '/',
      '/api',
    ),
    fc.array(segment, { maxLength: 5 }).map((s) => `/${s.join('/')}`),
  );
  const body = fc.oneof(
    { weight: 4, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
    {
      weight: 4,
      arbitrary: fc
        .record(
          {
            id: smallString,
            name: smallString,
            capabilities: fc.oneof(
              fc.array(fc.constantFrom('flows.read', 'flows.run', 'runs.read', 'flows.manage', 'nope')),
              anyJson,
            ),
            input: anyJson,
            baseUrl: fc.oneof(fc.webUrl(), smallString),
            authType: fc.constantFrom('none', 'bearer', 'api_key_header', 'basic', 'nope'),
            version: fc.oneof(fc.integer(), smallString),
            bindings: anyJson,
            enabled: fc.boolean(),
            tools: anyJson,
            expiresAt: fc.oneof(
              fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
              smallString,
            ),
          },
          { requiredKeys: [] },
        )
        .map((v) => JSON.stringify(v)),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }) },
    { weight: 1, arbitrary: fc.constantFrom('{:slug :echo :flow (flow/input)}', '{:slug', '(((', '{}') },
  );
  // Real routes with their own method (so the validation and handlers behind them are reached), then anything.
  const id = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('echo', target.runId) },
    { weight: 1, arbitrary: segment },
  );
  const known = fc.oneof(
    fc.constantFrom(
      ['POST', '/api/admin/workspaces'],
      ['GET', '/api/workspaces/W/service-accounts'],
      ['POST', '/api/workspaces/W/service-accounts'],
      ['GET', '/api/workspaces/W/connections'],
      ['POST', '/api/workspaces/W/connections'],
      ['GET', '/api/workspaces/W/mcp-policy'],
      ['PUT', '/api/workspaces/W/mcp-policy'],
      ['GET', '/api/workspaces/W/audit'],
      ['GET', '/api/workspaces/W/flows'],
      ['GET', '/api/workspaces/W/installations'],
      ['POST', '/api/workspaces/W/installations'],
      ['GET', '/api/workspaces/W/runs'],
    ),
    fc
      .tuple(
        fc.constantFrom(
          ['PATCH', '/api/workspaces/W/service-accounts/I'],
          ['GET', '/api/workspaces/W/service-accounts/I/keys'],
          ['POST', '/api/workspaces/W/service-accounts/I/keys'],
          ['DELETE', '/api/workspaces/W/service-accounts/I/keys/I'],
          ['PATCH', '/api/workspaces/W/connections/I'],
          ['PUT', '/api/workspaces/W/flows/I/draft'],
          ['POST', '/api/workspaces/W/flows/I/release'],
          ['PUT', '/api/workspaces/W/flows/I/bindings'],
          ['PATCH', '/api/workspaces/W/flows/I'],
          ['GET', '/api/workspaces/W/flows/I'],
          ['POST', '/api/workspaces/W/flows/I/runs'],
          ['PATCH', '/api/workspaces/W/installations/I'],
          ['GET', '/api/workspaces/W/runs/I'],
          ['POST', '/api/workspaces/W/runs/I/cancel'],
        ),
        id,
        id,
      )
      .map(([[m, p], i, j]) => [m, p.replace('I', i).replace('I', j)] as const),
  );
  const routed = fc.tuple(known, ws).map(([[m, p], w]) => ({ method: m, route: p.replace('W', w) }));
  const anyRoute = fc.record({ method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'), route });
  return fc
    .record({
      target: fc.oneof({ weight: 3, arbitrary: routed }, { weight: 1, arbitrary: anyRoute }),
      query,
      headers: fc
        .record({
          authorization: usually<string | undefined>(`Bearer ${target.adminToken}`, auth(target)),
          'content-type': usually<string | undefined>(
            'application/json',
            fc.oneof(fc.constantFrom(undefined, 'application/edn', 'text/plain'), headerText),
          ),
        })
        .map(defined),
      body,
    })
    .map(({ target: t, query: q, headers, body: b }) => ({
      method: t.method,
      path: t.route + q,
      headers,
      surface: 'admin' as const,
      ...(t.method === 'GET' ? {} : { body: b }),
    }));
}

export function anyRequest(target: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 3, arbitrary: mcpRequest(target) },
    { weight: 2, arbitrary: adminRequest(target) },
  );
}

// --- sending and judging -----------------------------------------------------------------------------

export async function send(baseUrl: string, req: FuzzRequest): Promise<FuzzAnswer> {
  const started = performance.now();
  const res = await fetch(`${baseUrl}${req.path}`, {
    method: req.method,
    headers: req.headers,
    ...(req.body !== undefined
      ? { body: typeof req.body === 'string' ? req.body : Buffer.from(req.body) }
      : {}),
    signal: AbortSignal.timeout(MAX_ANSWER_MS * 5),
  });
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    text,
    ms: performance.now() - started,
  };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON-RPC 2.0 response: id, and exactly one of result or an error with an integer code and a message. */
export function isRpcResponse(v: unknown): boolean {
  if (!isObject(v) || v.jsonrpc !== '2.0' || !('id' in v)) return false;
  if (v.id !== null && typeof v.id !== 'string' && typeof v.id !== 'number') return false;
  if ('result' in v === 'error' in v) return false;
  if ('error' in v) {
    const e = v.error;
    return isObject(e) && Number.isInteger(e.code) && typeof e.message === 'string';
  }
  return true;
}

/**
 * The gateway's HTTP error body: `{code, message}`, or the draft validation report a refused flow definition gets
 * (`422 {flowSlug, valid: false, diagnostics}`, docs/admin-api.md).
 */
export function isErrorBody(v: unknown): boolean {
  if (isObject(v) && v.valid === false && Array.isArray(v.diagnostics)) return true;
  return isObject(v) && typeof v.code === 'string' && typeof v.message === 'string';
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The JSON-RPC messages of an SSE body (one per event's joined `data:` lines), or why it does not parse. */
export function sseMessages(text: string): unknown[] | string {
  const out: unknown[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''));
    if (!data.length) continue;
    const parsed = parseJson(data.join('\n'));
    if (!parsed.ok) return `SSE event data is not JSON: ${data.join('\n').slice(0, 120)}`;
    out.push(parsed.value);
  }
  return out;
}

/** Why an answer is wrong, or undefined when it is acceptable. */
export function judge(req: FuzzRequest, a: FuzzAnswer): string | undefined {
  if (a.status >= 500) return `status ${a.status}: ${a.text.slice(0, 300)}`;
  if (a.ms > MAX_ANSWER_MS) return `answered in ${Math.round(a.ms)} ms (limit ${MAX_ANSWER_MS} ms)`;
  if (req.method === 'OPTIONS' || a.status === 204 || a.status === 304) return undefined;
  if (a.text === '') {
    // Accepted notifications and bodiless statuses only.
    return a.status === 202 || a.status === 200 || a.status === 405
      ? undefined
      : `empty body with status ${a.status}`;
  }
  const type = a.contentType.toLowerCase();
  if (type.startsWith('text/event-stream')) {
    const messages = sseMessages(a.text);
    if (typeof messages === 'string') return messages;
    const bad = messages.find((m) => !isRpcResponse(m) && !isObject(m));
    return bad === undefined
      ? undefined
      : `SSE event is not a JSON-RPC message: ${JSON.stringify(bad).slice(0, 200)}`;
  }
  if (!type.includes('json')) {
    return a.status < 400 && req.surface === 'admin'
      ? undefined
      : `status ${a.status} with content-type "${type}"`;
  }
  const parsed = parseJson(a.text);
  if (!parsed.ok) return `content-type ${type} but the body is not JSON: ${a.text.slice(0, 200)}`;
  const v = parsed.value;
  if (a.status >= 400) {
    if (isErrorBody(v) || isRpcResponse(v)) return undefined;
    return `status ${a.status} without an error body: ${a.text.slice(0, 200)}`;
  }
  if (req.surface === 'mcp') {
    if (isRpcResponse(v) || (Array.isArray(v) && v.every(isRpcResponse))) return undefined;
    return `status ${a.status} but not a JSON-RPC response: ${a.text.slice(0, 200)}`;
  }
  return undefined;
}
