/**
 * `flowgate mcp doctor`: the setup check a user runs once. initialize, notifications/initialized and tools/list
 * under the same narrowing a client would use — never a tool call — and on failure the stage that failed,
 * the HTTP status and a hint.
 */
import { type Capability, GRANTED_BY_FULL } from '@flowgate/auth';
import {
  CATALOG,
  evaluateTool,
  LATEST_PROTOCOL_VERSION,
  OPEN_WORKSPACE_POLICY,
  parseNarrowingHeaders,
  TOOLSETS,
} from '@flowgate/workspace-mcp';
import { insecureApiUrlProblem, mcpEndpoint, readToken } from './credentials.js';
import {
  checkNarrowing,
  describeFlags,
  type NarrowingFlags,
  narrowingHeaders,
  type RawNarrowingOptions,
} from './narrowing-flags.js';
import {
  decodeMessages,
  describeHttpFailure,
  postMcp,
  UpstreamFailure,
  type UpstreamTarget,
} from './upstream.js';

export type DoctorStage = 'config' | 'connect' | 'initialize' | 'list';

export interface DoctorInput {
  apiUrl: string;
  workspaceId: string;
  tokenEnvVar: string;
  env: Record<string, string | undefined>;
  narrowing: RawNarrowingOptions;
  timeoutMs: number;
  fetch: typeof fetch;
  /** Send the key over plain http:// to a host that is not this machine. */
  allowInsecureHttp?: boolean;
}

export interface DoctorFailure {
  stage: DoctorStage;
  httpStatus: number | null;
  /** The server's error code or JSON-RPC error code, when there was one. */
  code: string | number | null;
  message: string;
  hint: string;
}

export interface DoctorReport {
  ok: boolean;
  endpoint: string | null;
  workspaceId: string;
  token: { envVar: string; kind: 'api-key' | 'jwt' | null; keyId: string | null };
  narrowing: NarrowingFlags | null;
  /** The X-MCP-* headers sent (never Authorization). */
  headers: Record<string, string>;
  server: { name: string | null; version: string | null } | null;
  protocolVersion: string | null;
  tools: string[];
  toolCount: number;
  policy: {
    /** Toolsets with at least one listed tool. */
    activeToolsets: string[];
    /** Catalog tools the narrowing hides, with the blocker reasons the server would report. */
    hiddenByNarrowing: Array<{ tool: string; reasons: string[] }>;
    /**
     * Catalog tools the narrowing allows but the server did not list: the key lacks their capabilities, or workspace
     * policy disables them.
     */
    hiddenByKeyOrWorkspace: Array<{ tool: string; needs: string[] }>;
  } | null;
  warnings: string[];
  failure: DoctorFailure | null;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const MAX_LIST_PAGES = 20;

class StageError extends Error {
  constructor(readonly failure: DoctorFailure) {
    super(failure.message);
  }
}

export async function runDoctor(input: DoctorInput): Promise<DoctorReport> {
  const report: DoctorReport = {
    ok: false,
    endpoint: null,
    workspaceId: input.workspaceId,
    token: { envVar: input.tokenEnvVar, kind: null, keyId: null },
    narrowing: null,
    headers: {},
    server: null,
    protocolVersion: null,
    tools: [],
    toolCount: 0,
    policy: null,
    warnings: [],
    failure: null,
  };
  const configFailure = (message: string, hint: string): DoctorReport => {
    report.failure = { stage: 'config', httpStatus: null, code: null, message, hint };
    return report;
  };

  try {
    report.endpoint = mcpEndpoint(input.apiUrl, input.workspaceId);
  } catch {
    return configFailure('the API URL is not a valid http(s) URL', 'pass --api-url or set FLOWGATE_API_URL');
  }
  const insecure = input.allowInsecureHttp ? null : insecureApiUrlProblem(input.apiUrl);
  if (insecure) {
    return configFailure(insecure, 'point --api-url at the https:// address of the gateway');
  }
  const narrowing = checkNarrowing(input.narrowing);
  if (!narrowing.ok) {
    return configFailure(`unknown narrowing names:\n${narrowing.message}`, 'use only the valid names listed');
  }
  report.narrowing = narrowing.flags;
  report.headers = narrowingHeaders(narrowing.flags);
  const token = readToken(input.env, input.tokenEnvVar);
  if (!token.ok) {
    return configFailure(
      token.message,
      'create a key with `flowgate service-accounts keys create` and export it',
    );
  }
  report.token = { envVar: input.tokenEnvVar, kind: token.kind, keyId: token.keyId };

  const target: UpstreamTarget = {
    endpoint: report.endpoint,
    token: token.token,
    tokenEnvVar: input.tokenEnvVar,
    workspaceId: input.workspaceId,
    headers: report.headers,
    timeoutMs: input.timeoutMs,
    fetch: input.fetch,
    userAgent: 'flowgate-mcp-doctor',
  };

  try {
    const init = await exchange(
      target,
      'initialize',
      1,
      {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'flowgate-mcp-doctor', version: '1' },
      },
      null,
    );
    const version = init.protocolVersion;
    if (typeof version !== 'string') {
      throw new StageError({
        stage: 'initialize',
        httpStatus: null,
        code: null,
        message: 'the initialize result carries no protocolVersion',
        hint: 'something other than a Flowgate MCP endpoint answered: check --api-url',
      });
    }
    report.protocolVersion = version;
    const info = isObject(init.serverInfo) ? init.serverInfo : {};
    report.server = {
      name: typeof info.name === 'string' ? info.name : null,
      version: typeof info.version === 'string' ? info.version : null,
    };
    await notify(target, 'notifications/initialized', version);

    const tools: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await exchange(target, 'tools/list', 2 + page, cursor ? { cursor } : {}, version);
      const listed = Array.isArray(result.tools) ? result.tools : [];
      for (const t of listed) if (isObject(t) && typeof t.name === 'string') tools.push(t.name);
      cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    report.tools = tools;
    report.toolCount = tools.length;
  } catch (error) {
    if (error instanceof StageError) {
      report.failure = error.failure;
      return report;
    }
    throw error;
  }

  report.policy = derivePolicy(report.tools, report.headers);
  const hidden = report.policy.hiddenByKeyOrWorkspace;
  if (hidden.length > 0) {
    report.warnings.push(
      `hidden by the key's capabilities or workspace policy: ${hidden
        .map(
          (h) => `${h.tool} (needs ${h.needs.join(', ') || 'no capability: disabled by workspace policy'})`,
        )
        .join('; ')}`,
    );
  }
  if (report.toolCount === 0) {
    report.failure = {
      stage: 'list',
      httpStatus: null,
      code: null,
      message: 'tools/list answered with no tools: a client would see nothing to call',
      hint: emptyListHint(report.policy, narrowing.flags),
    };
    return report;
  }
  report.ok = true;
  return report;
}

/** One request; any failure becomes a StageError naming the stage. */
async function exchange(
  target: UpstreamTarget,
  method: string,
  id: number,
  params: Json,
  protocolVersion: string | null,
): Promise<Json> {
  const stage: DoctorStage = method === 'initialize' ? 'initialize' : 'list';
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
  const answer = await send(target, body, protocolVersion, stage);
  const messages = decodeMessages(answer);
  const response = messages?.find((m): m is Json => isObject(m) && m.id === id);
  if (response && isObject(response.error)) {
    const err = response.error;
    throw new StageError({
      stage,
      httpStatus: answer.status,
      code: typeof err.code === 'number' ? err.code : null,
      message: `${method} failed: ${typeof err.message === 'string' ? err.message.slice(0, 300) : 'error'}`,
      hint:
        stage === 'initialize'
          ? 'the server refused initialize; check that --api-url points at a Flowgate gateway of a compatible version'
          : 'the server refused tools/list; run again, and report it with `send_feedback` if it persists',
    });
  }
  if (answer.status >= 200 && answer.status < 300 && response && isObject(response.result))
    return response.result;
  if (answer.status >= 200 && answer.status < 300) {
    throw new StageError({
      stage,
      httpStatus: answer.status,
      code: null,
      message: `${method}: the answer is not a JSON-RPC response (${answer.contentType || 'no content type'})`,
      hint: `something other than a Flowgate MCP endpoint answered at ${target.endpoint}: check --api-url`,
    });
  }
  const failure = describeHttpFailure(answer, target);
  throw new StageError({
    stage,
    httpStatus: failure.status,
    code: failure.upstreamCode,
    message: `${method}: ${failure.summary}`,
    hint: failure.hint,
  });
}

async function notify(target: UpstreamTarget, method: string, protocolVersion: string): Promise<void> {
  const answer = await send(
    target,
    JSON.stringify({ jsonrpc: '2.0', method }),
    protocolVersion,
    'initialize',
  );
  if (answer.status >= 200 && answer.status < 300) return;
  const failure = describeHttpFailure(answer, target);
  throw new StageError({
    stage: 'initialize',
    httpStatus: failure.status,
    code: failure.upstreamCode,
    message: `${method}: ${failure.summary}`,
    hint: failure.hint,
  });
}

async function send(
  target: UpstreamTarget,
  body: string,
  protocolVersion: string | null,
  stage: DoctorStage,
) {
  try {
    return await postMcp(target, body, protocolVersion);
  } catch (error) {
    if (!(error instanceof UpstreamFailure)) throw error;
    const hint =
      error.kind === 'timeout'
        ? 'the server accepted the connection but did not answer in time; check the gateway, or raise --timeout'
        : error.kind === 'too_large'
          ? 'the answer was unexpectedly large; something other than a Flowgate gateway may be answering'
          : 'start the gateway (`flowgate dev` or `flowgate serve`) or fix --api-url / FLOWGATE_API_URL';
    throw new StageError({
      stage: error.kind === 'too_large' ? stage : 'connect',
      httpStatus: null,
      code: error.kind,
      message: error.message,
      hint,
    });
  }
}

const ALL_CAPABILITIES: ReadonlySet<Capability> = new Set(GRANTED_BY_FULL);

/**
 * What the tool list says about the effective policy, without calling a tool: the narrowing is evaluated
 * locally with the server's own policy code under full capabilities, so a catalog tool that it allows but
 * the server did not list is hidden by the key or by workspace policy.
 */
function derivePolicy(
  listed: string[],
  headers: Record<string, string>,
): NonNullable<DoctorReport['policy']> {
  const parsed = parseNarrowingHeaders({
    toolsets: headers['X-MCP-Toolsets'] ?? null,
    tools: headers['X-MCP-Tools'] ?? null,
    excludeTools: headers['X-MCP-Exclude-Tools'] ?? null,
    readOnly: headers['X-MCP-Readonly'] ?? null,
  });
  const hiddenByNarrowing: Array<{ tool: string; reasons: string[] }> = [];
  const hiddenByKeyOrWorkspace: Array<{ tool: string; needs: string[] }> = [];
  const activeToolsets = new Set<string>();
  for (const tool of CATALOG) {
    if (listed.includes(tool.name)) {
      for (const ts of tool.toolsets) activeToolsets.add(ts);
      continue;
    }
    const evaluation = parsed.ok
      ? evaluateTool(tool, {
          capabilities: ALL_CAPABILITIES,
          narrowing: parsed.narrowing,
          workspacePolicy: OPEN_WORKSPACE_POLICY,
        })
      : { visible: true, blockers: [] };
    if (!evaluation.visible) {
      hiddenByNarrowing.push({ tool: tool.name, reasons: evaluation.blockers.map((b) => b.reason) });
    } else {
      hiddenByKeyOrWorkspace.push({ tool: tool.name, needs: [...tool.capabilities] });
    }
  }
  return {
    activeToolsets: TOOLSETS.filter((ts) => activeToolsets.has(ts)),
    hiddenByNarrowing,
    hiddenByKeyOrWorkspace,
  };
}

function emptyListHint(policy: NonNullable<DoctorReport['policy']>, flags: NarrowingFlags): string {
  const blocked = policy.hiddenByKeyOrWorkspace;
  if (blocked.length === 0) {
    return `the narrowing (${describeFlags(flags)}) leaves no tool of this server's catalog; widen --toolsets or --tools`;
  }
  const needs = [...new Set(blocked.flatMap((b) => b.needs))];
  return needs.length > 0
    ? `the key lacks the capabilities the selected tools need (${needs.join(', ')}), or workspace policy disables them; grant them with \`flowgate service-accounts update <id> --capability …\` or widen the narrowing`
    : 'workspace policy disables every selected tool; check `flowgate mcp-policy set`';
}

/** Human report for the terminal. */
export function renderDoctorReport(report: DoctorReport): string {
  const rows: Array<[string, string]> = [];
  rows.push(['endpoint', report.endpoint ?? '-']);
  const tokenKind =
    report.token.kind === 'api-key'
      ? ` (API key id ${report.token.keyId})`
      : report.token.kind === 'jwt'
        ? ' (JWT)'
        : '';
  rows.push(['token', `$${report.token.envVar}${tokenKind}`]);
  if (report.narrowing) rows.push(['narrowing', describeFlags(report.narrowing)]);
  const headerList = Object.entries(report.headers).map(([k, v]) => `${k}: ${v}`);
  if (headerList.length) rows.push(['headers', headerList.join(', ')]);
  if (report.server)
    rows.push(['server', [report.server.name, report.server.version].filter(Boolean).join(' ') || '-']);
  if (report.protocolVersion) rows.push(['protocol version', report.protocolVersion]);
  if (report.policy) {
    rows.push([`tools (${report.toolCount})`, report.tools.join(', ') || '-']);
    rows.push(['active toolsets', report.policy.activeToolsets.join(', ') || '-']);
    if (report.policy.hiddenByNarrowing.length) {
      rows.push([
        'hidden by narrowing',
        report.policy.hiddenByNarrowing.map((h) => `${h.tool} (${h.reasons.join(', ')})`).join('; '),
      ]);
    }
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  let out = `Flowgate MCP doctor\n${rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join('\n')}\n`;
  for (const w of report.warnings) out += `warning: ${w}\n`;
  if (report.failure) {
    const f = report.failure;
    const status = f.httpStatus !== null ? ` (HTTP ${f.httpStatus})` : '';
    out += `FAILED at stage ${f.stage}${status}: ${f.message}\nhint: ${f.hint}\n`;
  } else {
    out += `OK: a client with these settings sees ${report.toolCount} tool${report.toolCount === 1 ? '' : 's'}\n`;
  }
  return out;
}
