import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTelemetry, type TelemetryHandle } from '@flowgate/telemetry';
import { type Context, context, SpanKind, trace } from '@opentelemetry/api';
import { type DataPoint, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { mcpPost, rpc } from './support/mcp.js';
import { installFlow } from './support/runs.js';

/**
 * OpenTelemetry end to end with the SDK's in-memory exporters: one `call_flow_tool` over HTTP with a `traceparent`
 * is one trace (request → auth → MCP method → tool → run → steps, and the step's outbound request carries it), no
 * argument value or connection secret reaches any span or metric attribute, and the counters move.
 */

const WS = 'ws-otel';
const INPUT_CANARY = 'inputcanaryK3n9Vq2Lm8Xw';
const CONN_SECRET = 'conncanaryR7t2Yp5Hs1Dz';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_SPAN}-01`;

const TRACED_FLOW = `{:slug :traced
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs [{:name :note :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "traced_call" :invocation :default}]}
 :flow (let [r (flow/step :http :fetch {:connection :api :method :get :path "/hook"})]
         (flow/step :function :shape {:code (fn [x] {:ok true :note (:note x)}) :input (flow/input)}))}`;

/** A reader the test collects from on demand. */
class TestMetricReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const spans = new InMemorySpanExporter();
const reader = new TestMetricReader();
let telemetry: TelemetryHandle | null;
let gw: TestGateway;
let full: ServiceAccountKey;
let readOnly: ServiceAccountKey;
const outbound: IncomingHttpHeaders[] = [];
const upstream = createServer((req, res) => {
  outbound.push(req.headers);
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ok: true }));
});

beforeAll(async () => {
  telemetry = await startTelemetry({
    spanProcessors: [new SimpleSpanProcessor(spans)],
    metricReaders: [reader],
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true', FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true' });
  await gw.createWorkspace(WS, 'Telemetry');
  full = await gw.mintKey(WS, ['workspace.full'], 'full');
  readOnly = await gw.mintKey(WS, ['flows.read'], 'reader');
  const { connectionId } = await gw.createConnection(WS, {
    name: 'hook-api',
    type: 'http-api',
    baseUrl: upstreamUrl,
    auth: { type: 'bearer', secret: CONN_SECRET },
  });
  await installFlow(gw, WS, 'traced', TRACED_FLOW, { api: connectionId });
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  await telemetry?.shutdown();
});

const callFlowTool = (token: string, headers: Record<string, string> = {}) =>
  mcpPost(gw.mcpUrl(WS), {
    token,
    protocolVersion: '2025-06-18',
    headers,
    body: rpc('tools/call', {
      name: 'call_flow_tool',
      arguments: {
        flow_slug: 'traced',
        tool_name: 'traced_call',
        input: { note: INPUT_CANARY },
        wait_ms: 15_000,
      },
    }),
  });

async function spansUntil(accept: (all: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  const until = Date.now() + 10_000;
  for (;;) {
    const all = spans.getFinishedSpans();
    if (accept(all)) return all;
    if (Date.now() > until) throw new Error(`spans never matched: ${all.map((s) => s.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const one = (all: ReadableSpan[], name: string) => {
  const found = all.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0] as ReadableSpan;
};

/** The `authenticate` event on a request's span: when it started, how long it took, which principal. */
function authEvent(http: ReadableSpan) {
  const events = http.events.filter((e) => e.name === 'authenticate');
  expect(events).toHaveLength(1);
  const event = events[0]!;
  expect(typeof event.attributes?.['flowgate.duration_ms']).toBe('number');
  // Within the request's span.
  const at = (t: [number, number]) => t[0] * 1e9 + t[1];
  expect(at(event.time)).toBeGreaterThanOrEqual(at(http.startTime));
  expect(at(event.time)).toBeLessThanOrEqual(at(http.endTime));
  return event;
}

async function collect(): Promise<ResourceMetrics> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  return resourceMetrics;
}

function points(metrics: ResourceMetrics, name: string): DataPoint<unknown>[] {
  return metrics.scopeMetrics.flatMap((s) =>
    s.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as DataPoint<unknown>[]),
  );
}

/** Sum of counter points whose attributes include `match`. */
function counted(metrics: ResourceMetrics, name: string, match: Record<string, unknown> = {}): number {
  return points(metrics, name)
    .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    .reduce((n, p) => n + (p.value as number), 0);
}

/** Count of histogram points whose attributes include `match`. */
function observed(metrics: ResourceMetrics, name: string, match: Record<string, unknown>): number {
  return points(metrics, name)
    .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    .reduce((n, p) => n + (p.value as { count: number }).count, 0);
}

describe('OpenTelemetry', () => {
  it('traces one call_flow_tool from the incoming traceparent to the run, its steps and the outbound request', async () => {
    spans.reset();
    outbound.length = 0;
    const answer = await callFlowTool(full.apiKey, { traceparent: TRACEPARENT });
    expect(answer.status).toBe(200);
    const out = (answer.json as { result: { structuredContent: { run: { status: string } } } }).result
      .structuredContent;
    expect(out.run.status).toBe('completed');

    const all = await spansUntil((s) => s.some((x) => x.name === 'run traced'));
    const traced = all.filter((s) => s.spanContext().traceId === TRACE_ID);

    const http = one(traced, 'POST /api/workspaces/:ws/mcp');
    expect(http.kind).toBe(SpanKind.SERVER);
    expect(parentOf(http)).toBe(PARENT_SPAN);
    expect(http.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/workspaces/:ws/mcp',
      'http.response.status_code': 200,
    });

    // Authentication (a leaf step: no span under it) is an event on the request's span, not a span of its own.
    expect(traced.filter((s) => s.name === 'authenticate')).toEqual([]);
    const auth = authEvent(http);
    expect(auth.attributes?.['flowgate.principal.kind']).toBe('service_account');

    const method = one(traced, 'tools/call call_flow_tool');
    expect(method.kind).toBe(SpanKind.SERVER);
    expect(parentOf(method)).toBe(http.spanContext().spanId);
    expect(method.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': '2025-06-18',
      'gen_ai.tool.name': 'call_flow_tool',
      'gen_ai.operation.name': 'execute_tool',
      'flowgate.outcome': 'ok',
    });
    // Stateless Streamable HTTP: no session to name.
    expect(method.attributes['mcp.session.id']).toBeUndefined();

    const tool = one(traced, 'execute_tool call_flow_tool');
    expect(parentOf(tool)).toBe(method.spanContext().spanId);

    // The run continues the trace of the tool call that started it, and links to it.
    const run = one(traced, 'run traced');
    expect(parentOf(run)).toBe(tool.spanContext().spanId);
    expect(run.links.map((l) => l.context.spanId)).toEqual([tool.spanContext().spanId]);
    expect(run.attributes).toMatchObject({
      'flowgate.flow.slug': 'traced',
      'flowgate.run.status': 'completed',
      'gen_ai.tool.name': 'traced_call',
    });

    const step = one(traced, 'step http');
    expect(parentOf(step)).toBe(run.spanContext().spanId);
    expect(step.attributes).toMatchObject({ 'flowgate.step.id': 'fetch', 'flowgate.step.type': 'http' });

    // The step's outbound request carries the step's own context.
    expect(outbound).toHaveLength(1);
    expect(outbound[0]?.traceparent).toBe(`00-${TRACE_ID}-${step.spanContext().spanId}-01`);

    // Database statements: text with placeholders, inside the trace of the run that issued them.
    const statements = traced.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    expect(statements.length).toBeGreaterThan(0);
    // The query builder's statements too: the run's insert (whose parameters hold the canary input) under the tool.
    const insert = statements.filter((s) =>
      /^insert into "runs"/.test(String(s.attributes['db.query.text'])),
    );
    expect(insert.map((s) => [s.name, parentOf(s)])).toEqual([['INSERT', tool.spanContext().spanId]]);
    for (const s of statements) {
      expect(s.kind).toBe(SpanKind.CLIENT);
      expect(typeof s.attributes['db.query.text']).toBe('string');
    }

    // Nothing the caller sent as arguments, and no connection secret, in any span.
    const everything = JSON.stringify(
      all.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, links: s.links })),
    );
    expect(everything).not.toContain(INPUT_CANARY);
    expect(everything).not.toContain(CONN_SECRET);
    expect(everything).not.toContain(full.apiKey);
  });

  it('starts a new trace when no traceparent is sent', async () => {
    spans.reset();
    const answer = await callFlowTool(full.apiKey);
    expect(answer.status).toBe(200);
    const all = await spansUntil((s) => s.some((x) => x.name === 'run traced'));
    const http = one(all, 'POST /api/workspaces/:ws/mcp');
    expect(http.spanContext().traceId).not.toBe(TRACE_ID);
    expect(parentOf(http)).toBeUndefined();
    expect(one(all, 'run traced').spanContext().traceId).toBe(http.spanContext().traceId);
  });

  it('gives initialize its own MCP span under the request', async () => {
    spans.reset();
    const answer = await mcpPost(gw.mcpUrl(WS), {
      token: full.apiKey,
      protocolVersion: null,
      body: rpc('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'otel-test', version: '1.0.0' },
      }),
    });
    expect(answer.status).toBe(200);
    const all = await spansUntil((s) => s.some((x) => x.name === 'POST /api/workspaces/:ws/mcp'));
    const http = one(all, 'POST /api/workspaces/:ws/mcp');
    const init = one(all, 'initialize');
    expect(parentOf(init)).toBe(http.spanContext().spanId);
    expect(init.attributes).toMatchObject({ 'mcp.method.name': 'initialize', 'flowgate.outcome': 'ok' });
    expect(JSON.stringify(init.attributes)).not.toContain('otel-test');
  });

  it('describes a lone tools/list on the request span, and gives each method of a batch its own span', async () => {
    // Scopes opened for the active context (async-context propagation on Node), by the trace they belong to.
    const manager = (
      context as unknown as { _getContextManager(): { with(ctx: Context): unknown } }
    )._getContextManager();
    const scopes = vi.spyOn(manager, 'with');
    const scopesOf = (traceId: string) =>
      scopes.mock.calls.filter(([ctx]) => trace.getSpan(ctx)?.spanContext().traceId === traceId).length;
    spans.reset();
    const list = await mcpPost(gw.mcpUrl(WS), {
      token: full.apiKey,
      protocolVersion: '2025-06-18',
      body: rpc('tools/list', {}, 'list-1'),
    });
    expect(list.status).toBe(200);
    const finished = await spansUntil((s) => s.some((x) => x.name === 'POST /api/workspaces/:ws/mcp'));
    const http = one(finished, 'POST /api/workspaces/:ws/mcp');
    // The request's trace is its one span: the authentication is an event on it, and the method opens none.
    // (Filtered by trace: the run worker's own polling statements may land in between.)
    const lone = finished.filter((s) => s.spanContext().traceId === http.spanContext().traceId);
    expect(lone.map((s) => s.name)).toEqual(['POST /api/workspaces/:ws/mcp']);
    expect(http.events.map((e) => e.name)).toEqual(['authenticate']);
    expect(authEvent(http).attributes?.['flowgate.principal.kind']).toBe('service_account');
    // The MCP endpoint carries the request's span explicitly: a lone list makes nothing active.
    expect(scopesOf(http.spanContext().traceId)).toBe(0);
    expect(http.attributes).toMatchObject({
      'mcp.method.name': 'tools/list',
      'mcp.protocol.version': '2025-06-18',
      'jsonrpc.request.id': 'list-1',
      'flowgate.outcome': 'ok',
      'http.response.status_code': 200,
    });

    spans.reset();
    const batch = await mcpPost(gw.mcpUrl(WS), {
      token: full.apiKey,
      protocolVersion: '2025-03-26',
      body: [rpc('tools/list', {}, 'b-1'), rpc('ping', {}, 'b-2')],
    });
    expect(batch.status).toBe(200);
    const all = await spansUntil((s) => s.some((x) => x.name === 'POST /api/workspaces/:ws/mcp'));
    const request = one(all, 'POST /api/workspaces/:ws/mcp');
    expect(request.attributes['mcp.method.name']).toBeUndefined();
    for (const [name, id] of [
      ['tools/list', 'b-1'],
      ['ping', 'b-2'],
    ] as const) {
      const method = one(all, name);
      expect(parentOf(method)).toBe(request.spanContext().spanId);
      expect(method.attributes).toMatchObject({ 'mcp.method.name': name, 'jsonrpc.request.id': id });
    }
    // Each method of the batch is active for what it awaits.
    expect(scopesOf(request.spanContext().traceId)).toBe(2);
    scopes.mockRestore();
  });

  it('counts requests by method, tool and outcome, auth failures, blocked calls and runs', async () => {
    const before = await collect();
    const base = {
      calls: observed(before, 'mcp.server.operation.duration', {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'call_flow_tool',
        'flowgate.outcome': 'ok',
      }),
      blocked: counted(before, 'flowgate.tool.blocked_calls', {
        'gen_ai.tool.name': 'call_flow_tool',
        'flowgate.block.reason': 'missing_service_account_capabilities',
      }),
      authFailures: counted(before, 'flowgate.auth.failures', { 'error.type': 'invalid_token' }),
      started: counted(before, 'flowgate.runs.started'),
      completed: counted(before, 'flowgate.runs.ended', { 'flowgate.run.status': 'completed' }),
    };

    expect((await callFlowTool(full.apiKey)).status).toBe(200);
    const blocked = await callFlowTool(readOnly.apiKey);
    expect(blocked.status).toBe(200);
    expect((blocked.json as { result: { isError: boolean } }).result.isError).toBe(true);
    expect((await callFlowTool('fg_not_a_real_key_0123456789')).status).toBe(401);
    // The run's end is recorded by the worker right after the waiting caller is answered.
    await spansUntil(() => true);
    await new Promise((r) => setTimeout(r, 200));

    const after = await collect();
    expect(
      observed(after, 'mcp.server.operation.duration', {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'call_flow_tool',
        'flowgate.outcome': 'ok',
      }),
    ).toBe(base.calls + 1);
    expect(
      observed(after, 'mcp.server.operation.duration', {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'call_flow_tool',
        'flowgate.outcome': 'blocked',
        'error.type': 'tool_blocked',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      counted(after, 'flowgate.tool.blocked_calls', {
        'gen_ai.tool.name': 'call_flow_tool',
        'flowgate.block.reason': 'missing_service_account_capabilities',
      }),
    ).toBe(base.blocked + 1);
    expect(counted(after, 'flowgate.auth.failures', { 'error.type': 'invalid_token' })).toBe(
      base.authFailures + 1,
    );
    expect(counted(after, 'flowgate.runs.started')).toBe(base.started + 1);
    expect(counted(after, 'flowgate.runs.ended', { 'flowgate.run.status': 'completed' })).toBe(
      base.completed + 1,
    );
    expect(
      observed(after, 'http.server.request.duration', {
        'http.route': '/api/workspaces/:ws/mcp',
        'http.response.status_code': 401,
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(points(after, 'flowgate.runs.queue.depth').map((p) => p.value)).toEqual([0]);

    const everything = JSON.stringify(after);
    expect(everything).not.toContain(INPUT_CANARY);
    expect(everything).not.toContain(CONN_SECRET);
  });
});
