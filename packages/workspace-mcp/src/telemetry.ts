/**
 * Spans and metrics of MCP methods and tool calls, named after OpenTelemetry's MCP and GenAI conventions. Only names
 * the server knows (method, catalog tool, protocol version, outcome codes) become attributes: never arguments, URIs
 * of other people's data beyond the one read, or anything a client could use to smuggle text into a trace.
 */
import {
  type Attributes,
  activeRecordingSpan,
  attributeSet,
  contextValue,
  createContextKey,
  markError,
  recordBlockedCall,
  recordMcpOperation,
  type Span,
  SpanKind,
  type TraceContext,
  telemetryActive,
  withSpan,
} from '@flowgate/telemetry';
import { JsonRpcFailure } from './protocol.js';
import type { McpSurface } from './surface.js';

/** Resource URIs of this server's own scheme, bounded: anything else a client sends stays out of the trace. */
const TRACEABLE_URI = /^flowgate:\/\/[A-Za-z0-9._~/-]{1,200}$/;

/** The span's identity for one method: the target only when the surface serves a tool of that name. */
export function methodInfo(
  method: string,
  params: Record<string, unknown>,
  surface: McpSurface,
  protocolVersion: string,
  requestId: string | number,
  single: boolean,
): MethodInfo {
  const name = method === 'tools/call' && typeof params.name === 'string' ? params.name : null;
  const uri = method === 'resources/read' && typeof params.uri === 'string' ? params.uri : null;
  return {
    method,
    target: name !== null && surface.find(name) ? name : null,
    protocolVersion,
    requestId,
    resourceUri: uri !== null && TRACEABLE_URI.test(uri) ? uri : null,
    single,
  };
}

/** What an audited call tells the method span around it. */
interface CallReport {
  outcome: 'ok' | 'error' | 'blocked';
  errorType: string | null;
}

const REPORT = createContextKey('flowgate.mcp.call_report');

export interface MethodInfo {
  method: string;
  /** A tool (or prompt) name the surface serves; null for other methods or unknown names. */
  target: string | null;
  /** Null for `initialize`, which negotiates it. */
  protocolVersion: string | null;
  requestId: string | number;
  resourceUri: string | null;
  /** The request's only message (not part of a JSON-RPC batch). */
  single: boolean;
}

/**
 * Methods that only read what the caller may see, opening no spans of their own: as a request's only message they are
 * described on the request's span (`mcp.*` attributes), not a child span of their own, which halves the spans (and
 * the export work) of the most frequent requests. In a batch each still gets its own span.
 */
const FOLDED_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'ping',
]);

/** A method's span attributes, set one by one: the folded path builds no object per request. */
function setMethodAttributes(
  span: { setAttribute(key: string, value: string): unknown },
  info: MethodInfo,
): void {
  span.setAttribute('mcp.method.name', info.method);
  span.setAttribute('jsonrpc.request.id', String(info.requestId).slice(0, 64));
  if (info.protocolVersion !== null) span.setAttribute('mcp.protocol.version', info.protocolVersion);
  if (info.target !== null) {
    span.setAttribute('gen_ai.tool.name', info.target);
    if (info.method === 'tools/call') span.setAttribute('gen_ai.operation.name', 'execute_tool');
  }
  if (info.resourceUri !== null) span.setAttribute('mcp.resource.uri', info.resourceUri);
}

function methodAttributes(info: MethodInfo): Attributes {
  const attributes: Attributes = {};
  setMethodAttributes(
    {
      setAttribute(key, value) {
        attributes[key] = value;
      },
    },
    info,
  );
  return attributes;
}

type OperationKey = readonly [
  'mcp',
  string,
  string | null,
  string | null,
  CallReport['outcome'],
  string | null,
];

function buildOperationAttributes([
  ,
  method,
  protocolVersion,
  target,
  outcome,
  errorType,
]: OperationKey): Attributes {
  const built: Attributes = { 'mcp.method.name': method, 'flowgate.outcome': outcome };
  if (protocolVersion !== null) built['mcp.protocol.version'] = protocolVersion;
  if (target !== null) built['gen_ai.tool.name'] = target;
  if (errorType !== null) built['error.type'] = errorType;
  return built;
}

function recordOperation(info: MethodInfo, report: CallReport, start: number): void {
  // One shared attribute set per combination: the method is a served one, the tool one the surface serves.
  const key = [
    'mcp',
    info.method,
    info.protocolVersion,
    info.target,
    report.outcome,
    report.errorType,
  ] as const;
  recordMcpOperation(attributeSet(key, buildOperationAttributes), (performance.now() - start) / 1000);
}

/** A folded method's outcome on the request's span (when it records) and its duration metric. */
function foldDone(info: MethodInfo, span: Span | null, report: CallReport, start: number): void {
  span?.setAttribute('flowgate.outcome', report.outcome);
  recordOperation(info, report, start);
}

function foldFailed(
  info: MethodInfo,
  span: Span | null,
  report: CallReport,
  start: number,
  error: unknown,
): never {
  report.outcome = 'error';
  report.errorType = error instanceof JsonRpcFailure ? String(error.code) : '_OTHER';
  if (error instanceof JsonRpcFailure) span?.setAttribute('rpc.response.status_code', report.errorType);
  foldDone(info, span, report, start);
  throw error;
}

/**
 * A folded method: its attributes and outcome on the request's span, and its duration metric; the metric alone under
 * a request span that is not sampled. Not async: an answer the method gives synchronously (a cached list) is given
 * back as it is, with no closure made; a promise gets one `then`.
 */
function foldMethod<T>(info: MethodInfo, span: Span | null, run: () => T | Promise<T>): T | Promise<T> {
  const report: CallReport = { outcome: 'ok', errorType: null };
  const start = performance.now();
  if (span) setMethodAttributes(span, info);
  let result: T | Promise<T>;
  try {
    result = run();
  } catch (error) {
    return foldFailed(info, span, report, start, error);
  }
  if (!(result instanceof Promise)) {
    foldDone(info, span, report, start);
    return result;
  }
  return result.then(
    (value) => {
      foldDone(info, span, report, start);
      return value;
    },
    (error: unknown) => foldFailed(info, span, report, start, error),
  );
}

/**
 * Runs one MCP method inside its span (under `parent`, the request's context, else the active one), and records
 * `mcp.server.operation.duration` by method, tool and outcome. The method span is active for what it awaits.
 * Without telemetry it is `run()` itself: no description built, no promise of its own (a list answered from cache
 * returns synchronously).
 */
export function traceMethod<T>(
  describe: () => MethodInfo,
  run: () => T | Promise<T>,
  parent?: TraceContext,
): T | Promise<T> {
  if (!telemetryActive()) return run();
  const info = describe();
  if (info.single && FOLDED_METHODS.has(info.method)) {
    const request = activeRecordingSpan(parent);
    // With the request's context given, no recording span there means it is not sampled: neither is the method.
    if (request || parent) return foldMethod(info, request, run);
  }
  return spannedMethod(info, run, parent);
}

async function spannedMethod<T>(
  info: MethodInfo,
  run: () => T | Promise<T>,
  parent?: TraceContext,
): Promise<T> {
  const report: CallReport = { outcome: 'ok', errorType: null };
  const start = performance.now();
  try {
    return await withSpan(
      info.target === null ? info.method : `${info.method} ${info.target}`,
      {
        kind: SpanKind.SERVER,
        attributes: methodAttributes(info),
        values: [[REPORT, report]],
        ...(parent ? { parent } : {}),
      },
      async (span) => {
        try {
          const result = await run();
          if (report.outcome !== 'ok') {
            span?.setAttribute('flowgate.outcome', report.outcome);
            markError(span, report.errorType ?? 'tool_error');
          } else span?.setAttribute('flowgate.outcome', 'ok');
          return result;
        } catch (error) {
          report.outcome = 'error';
          if (error instanceof JsonRpcFailure) {
            report.errorType = String(error.code);
            span?.setAttribute('rpc.response.status_code', String(error.code));
          } else report.errorType = '_OTHER';
          span?.setAttribute('flowgate.outcome', 'error');
          throw error;
        }
      },
    );
  } finally {
    recordOperation(info, report, start);
  }
}

/**
 * An audited call's verdict (audited.ts), for the method span around it and the blocked-calls counter: a tool call
 * answered with an error result or a block is not an ok span although the method returned.
 */
export function reportCall(
  tool: string | null,
  outcome: CallReport['outcome'],
  errorCode: string | null,
  blockerReasons: readonly string[],
): void {
  const report = contextValue<CallReport>(REPORT);
  if (!report) return;
  report.outcome = outcome;
  report.errorType = outcome === 'ok' ? null : (errorCode ?? 'tool_error');
  if (outcome === 'blocked' && tool !== null) {
    for (const reason of new Set(blockerReasons)) recordBlockedCall(tool, reason);
  }
}

/** The tool's own execution (under the method span): `execute_tool {name}`. */
export function traceToolExecution<T>(tool: string, run: () => Promise<T>): Promise<T> {
  return withSpan(
    `execute_tool ${tool}`,
    { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool } },
    () => run(),
  );
}
