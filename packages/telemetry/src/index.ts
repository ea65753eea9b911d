/**
 * Traces and metrics through `@opentelemetry/api`. The Node SDK is loaded and started only when an `OTEL_*` variable
 * is set (or a test hands in its own processors/readers); otherwise every helper here returns at its first check, so
 * a gateway without telemetry pays a boolean test per call site and never loads the SDK.
 */
import {
  type Attributes,
  type AttributeValue,
  type Context,
  context,
  type Exception,
  type Histogram,
  type Link,
  metrics,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { MetricReader } from '@opentelemetry/sdk-metrics';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createInstruments, type Instruments } from './instruments.js';
import { LightSpan, startLightSpan, type TracerParts, tracerParts } from './light-span.js';

export type { Attributes, Context as TraceContext, Span } from '@opentelemetry/api';
export { SpanKind } from '@opentelemetry/api';

const SCOPE = 'flowgate';

let active = false;
let instruments: Instruments | null = null;
// Looked up once per SDK: `trace.getTracer` builds a key string and searches a map on every call.
let scopeTracer: Tracer | null = null;
// The SDK tracer's configuration, for the spans we make ourselves (light-span.ts); null leaves every span the SDK's.
let lightParts: TracerParts | null = null;

/** Whether an SDK was started in this process (spans and metrics are recorded). */
export function telemetryActive(): boolean {
  return active;
}

/** True when the environment names any `OTEL_*` setting, and the SDK is not disabled by `OTEL_SDK_DISABLED`. */
export function otelConfigured(env: Record<string, string | undefined> = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Object.entries(env).some(
    ([name, value]) => name.startsWith('OTEL_') && value !== undefined && value !== '',
  );
}

export interface TelemetryHandle {
  /** Flushes what is pending and stops the SDK. */
  shutdown(): Promise<void>;
}

export interface StartTelemetryOptions {
  /** Decides whether to start (any `OTEL_*`); the SDK itself reads its settings from `process.env`. */
  env?: Record<string, string | undefined>;
  /** `service.name` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names one. */
  serviceName?: string;
  /** The instrumentation scope's version. */
  serviceVersion?: string;
  /** Tests: where spans go, in place of the exporters the `OTEL_*` variables name. */
  spanProcessors?: SpanProcessor[];
  /** Tests: how metrics are read, in place of the exporters the `OTEL_*` variables name. */
  metricReaders?: MetricReader[];
}

const NOOP_HANDLE: TelemetryHandle = { shutdown: async () => {} };

/**
 * Starts the Node SDK from the standard `OTEL_*` variables (exporters, endpoints, protocol, sampler, resource,
 * `OTEL_METRICS_EXPORTER=prometheus` for a scrape endpoint). Null when none is set. A second call while one SDK runs
 * returns a handle that does nothing: whoever started it stops it.
 */
export async function startTelemetry(options: StartTelemetryOptions = {}): Promise<TelemetryHandle | null> {
  const explicit = options.spanProcessors !== undefined || options.metricReaders !== undefined;
  if (!explicit && !otelConfigured(options.env ?? process.env)) return null;
  if (active) return NOOP_HANDLE;
  // Loaded only here: without telemetry the SDK (and its exporters) never enter the process.
  const { NodeSDK, ScopedContextManager, otlpProtobufSpanProcessor, wantsOtlpProtobufTraces } = await import(
    './node-sdk.js'
  );
  const named =
    Boolean(process.env.OTEL_SERVICE_NAME) ||
    /(^|,)\s*service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    // The operator's OTEL_SERVICE_NAME (or service.name resource attribute) wins over the default.
    ...(named ? {} : { serviceName: options.serviceName ?? 'flowgate' }),
    instrumentations: [],
    // Propagation across awaits only while a span is active somewhere (context-manager.ts).
    contextManager: new ScopedContextManager(),
    // The default exporter (OTLP over http/protobuf), decided from what the SDK reads (process.env), is ours: spans
    // encoded as they end and batched as bytes (encoding-processor.ts); any other choice is the SDK's.
    ...(options.spanProcessors
      ? { spanProcessors: options.spanProcessors }
      : wantsOtlpProtobufTraces(process.env)
        ? { spanProcessors: [otlpProtobufSpanProcessor(process.env)] }
        : {}),
    ...(options.metricReaders ? { metricReaders: options.metricReaders } : {}),
  });
  sdk.start();
  active = true;
  scopeTracer = trace.getTracer(SCOPE, options.serviceVersion);
  lightParts = tracerParts(scopeTracer);
  // Instruments come from the meter provider the SDK just registered (the metrics API has no proxy meter).
  instruments = createInstruments(metrics.getMeter(SCOPE, options.serviceVersion));
  return {
    async shutdown() {
      recordPending();
      active = false;
      instruments = null;
      scopeTracer = null;
      lightParts = null;
      attributeSets = { children: new Map() };
      attributeSetCount = 0;
      await sdk.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}

function tracer(): Tracer {
  scopeTracer ??= trace.getTracer(SCOPE);
  return scopeTracer;
}

/** `error.type` for a thrown value: its stable code when it has one, else its class name. */
export function errorType(error: unknown): string {
  if (error && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0 && code.length <= 64) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name.length > 0) return name.slice(0, 64);
  }
  return '_OTHER';
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** Parent context; the active one by default. */
  parent?: Context;
  /** Values the callee reads back from the active context (e.g. an outcome it reports to the span's owner). */
  values?: ReadonlyArray<readonly [symbol, unknown]>;
  /**
   * False for a leaf step (nothing under it opens spans of its own): `fn` runs without making it the active
   * context, which spares an AsyncLocalStorage entry per call, and under a recording span the step is recorded as an
   * event on that span (its name, start time, attributes, `flowgate.duration_ms`, `error.type` when it throws)
   * rather than a span of its own: no span to create, process and export for work that does no I/O of its own.
   * Without a recording parent it is a span as usual. `values` need an active context and are ignored then.
   */
  activate?: boolean;
  /**
   * With `activate: false`: false keeps the step a span of its own under a recording parent too (a leaf that does I/O:
   * a database statement), still never made the active context.
   */
  fold?: boolean;
}

/**
 * Runs `fn` inside a span (active for everything it awaits). A throw marks the span with `error.type` and rethrows;
 * without telemetry `fn` runs alone. Not itself async, so it adds no promise of its own: without telemetry or under
 * an unsampled parent the answer is `fn`'s promise, and a leaf folded into an event has only its event's wrapper.
 */
export function withSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | null) => Promise<T>,
): Promise<T> {
  if (!active) return settle(fn);
  const parent = options.parent ?? context.active();
  // No span of its own under an unsampled local parent, which stays the active one for what `fn` opens.
  const above = trace.getSpan(parent);
  if (unsampledLocal(above)) {
    if (!options.values?.length) return settle(fn);
    let ctx = parent;
    for (const [key, value] of options.values) ctx = ctx.setValue(key, value);
    return settle(() => context.with(ctx, () => fn(null)));
  }
  if (options.activate === false && options.fold !== false && above?.isRecording())
    return withLeafEvent(name, above, options, fn);
  return withNewSpan(name, options, parent, fn);
}

/** `fn(null)`, a synchronous throw as a rejection (what an async wrapper would have made of it). */
function settle<T>(fn: (span: null) => Promise<T>): Promise<T> {
  try {
    return fn(null);
  } catch (error) {
    return Promise.reject(error);
  }
}

async function withNewSpan<T>(
  name: string,
  options: SpanOptions,
  parent: Context,
  fn: (span: Span | null) => Promise<T>,
): Promise<T> {
  const span = startSpan(name, options, parent);
  try {
    if (options.activate === false) return await fn(span);
    let ctx = trace.setSpan(parent, span);
    for (const [key, value] of options.values ?? []) ctx = ctx.setValue(key, value);
    return await context.with(ctx, () => fn(span));
  } catch (error) {
    markError(span, errorType(error));
    throw error;
  } finally {
    span.end();
  }
}

/**
 * A span its caller ends (`span.end()`) and never makes the active context: what a request that hands its span to
 * what runs under it explicitly (the MCP endpoints) opens, without `withSpan`'s async wrapper. Null without
 * telemetry, and under a local parent that is not sampled (as `withSpan` skips such children).
 */
export function startDetachedSpan(
  name: string,
  options: Omit<SpanOptions, 'values' | 'activate' | 'fold'>,
): Span | null {
  if (!active) return null;
  const parent = options.parent ?? context.active();
  if (unsampledLocal(trace.getSpan(parent))) return null;
  if (lightParts)
    return startLightSpan(lightParts, name, parent, options.kind, options.attributes, options.links);
  return tracer().startSpan(name, options, parent);
}

/** A light span (light-span.ts) where the SDK tracer's configuration could be read, else the SDK's own. */
function startSpan(name: string, options: SpanOptions, parent: Context): Span {
  if (lightParts)
    return startLightSpan(lightParts, name, parent, options.kind, options.attributes, options.links);
  return tracer().startSpan(name, options, parent);
}

/**
 * Under a local span that is not sampled, children would not be either (parent-based sampling), so none is created.
 * A remote parent (an incoming or stored traceparent) always gets one.
 */
function unsampledLocal(above: Span | undefined): boolean {
  return above !== undefined && !above.isRecording() && !above.spanContext().isRemote;
}

/**
 * A leaf step recorded on its parent span: what the step sets on its `Span` becomes the attributes of one event
 * named after it, added when it ends. Links and the status are the parent's business (a refused token is a 401
 * answer, not a failed request), so they are not forwarded.
 */
class LeafEvent implements Span {
  attributes: Attributes | undefined;
  readonly start = performance.now();

  constructor(
    public name: string,
    private readonly parent: Span,
    attributes: Attributes | undefined,
  ) {
    if (attributes) this.attributes = { ...attributes };
  }

  spanContext(): SpanContext {
    return this.parent.spanContext();
  }
  setAttribute(key: string, value: AttributeValue): this {
    if (this.attributes) this.attributes[key] = value;
    else this.attributes = { [key]: value };
    return this;
  }
  setAttributes(attributes: Attributes): this {
    this.attributes = { ...this.attributes, ...attributes };
    return this;
  }
  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    this.parent.addEvent(name, attributesOrTime, time);
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(_status: SpanStatus): this {
    return this;
  }
  updateName(name: string): this {
    this.name = name;
    return this;
  }
  end(): void {}
  isRecording(): boolean {
    return true;
  }
  recordException(exception: Exception, time?: TimeInput): void {
    this.parent.recordException(exception, time);
  }

  finish(): void {
    recordStep(this.parent, this.name, this.attributes ?? {}, this.start);
  }
}

/**
 * A step that ran from `startedAt` (a `performance.now()` reading) until now, recorded as an event on `span` (its
 * name, start, `attributes` and `flowgate.duration_ms`): what `withSpan` does for a leaf step, for a caller that
 * holds the recording span already and has nothing to wrap (the request's authentication). Takes `attributes`.
 */
export function recordStep(span: Span, name: string, attributes: Attributes, startedAt: number): void {
  attributes['flowgate.duration_ms'] = Math.round((performance.now() - startedAt) * 1000) / 1000;
  if (span instanceof LightSpan) span.addStepEvent(name, attributes, startedAt);
  // A `performance.now()` value is a time the SDK converts with its own clock, as for span start times.
  else span.addEvent(name, attributes, startedAt);
}

/** Not async: one `then` on the step's promise instead of an async frame around it (every traced request has one). */
function withLeafEvent<T>(
  name: string,
  parent: Span,
  options: SpanOptions,
  fn: (span: Span | null) => Promise<T>,
): Promise<T> {
  const leaf = new LeafEvent(name, parent, options.attributes);
  const failed = (error: unknown): Promise<never> => {
    leaf.setAttribute('error.type', errorType(error));
    leaf.finish();
    return Promise.reject(error);
  };
  let running: Promise<T>;
  try {
    running = fn(leaf);
  } catch (error) {
    return failed(error);
  }
  return running.then((value) => {
    leaf.finish();
    return value;
  }, failed);
}

/**
 * The span of `parent` (the active context by default) when it records, e.g. the HTTP request's span; null without
 * telemetry or without one.
 */
export function activeRecordingSpan(parent?: Context): Span | null {
  if (!active) return null;
  const span = trace.getSpan(parent ?? context.active());
  return span?.isRecording() ? span : null;
}

/** The API's key for a context's span (`trace.setSpan`): `createContextKey` is `Symbol.for` of its description. */
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

/**
 * `parent` with `span` as its span, without the copy of the parent's entries the API's context makes on every
 * `setValue`: what every traced request builds once. Any other change gives the API's own context.
 */
class SpanInContext implements Context {
  constructor(
    private readonly parent: Context,
    private readonly span: Span,
  ) {}
  getValue(key: symbol): unknown {
    return key === SPAN_KEY ? this.span : this.parent.getValue(key);
  }
  setValue(key: symbol, value: unknown): Context {
    return trace.setSpan(this.parent, this.span).setValue(key, value);
  }
  deleteValue(key: symbol): Context {
    return trace.setSpan(this.parent, this.span).deleteValue(key);
  }
}

/** Whether the API reads a context's span under `SPAN_KEY` (checked once, else `trace.setSpan` is used). */
let spanKeyHolds: boolean | undefined;

/**
 * The context of `span` under `parent`: what a request that carries its span explicitly (rather than making it
 * active for everything it awaits) hands to the code that opens spans under it.
 */
export function contextWithSpan(parent: Context, span: Span): Context {
  spanKeyHolds ??= trace.getSpan(new SpanInContext(ROOT_CONTEXT, span)) === span;
  return spanKeyHolds ? new SpanInContext(parent, span) : trace.setSpan(parent, span);
}

/** A value `withSpan` put in the active context; undefined without telemetry. */
export function contextValue<T>(key: symbol): T | undefined {
  return active ? (context.active().getValue(key) as T | undefined) : undefined;
}

export { createContextKey } from '@opentelemetry/api';

/** Marks a span failed with a stable `error.type` (never the message: it may quote input). */
export function markError(span: Span | null, type: string): void {
  if (!span) return;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Where an incoming request's headers are read (a Hono request, or any object with `header(name)`). */
export interface HeaderSource {
  header(name: string): string | undefined;
}

const HEADER_GETTER = {
  get: (carrier: HeaderSource, key: string) => carrier.header(key),
  keys: () => ['traceparent', 'tracestate', 'baggage'],
};

/**
 * The context named by an incoming request's `traceparent`/`tracestate`/`baggage` headers, else the root: a request
 * served continues only what its caller sent, never a context left active in the process.
 */
export function extractContext(headers: HeaderSource): Context {
  // Most requests carry no trace context: skip the propagators (and their parsing) for them.
  if (headers.header('traceparent') === undefined && headers.header('baggage') === undefined)
    return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers, HEADER_GETTER);
}

/** W3C trace context headers for the active span, to send on an outbound request; empty without telemetry. */
export function traceHeaders(): Record<string, string> {
  if (!active) return {};
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}

/** The active span's `traceparent`, to store with work that continues elsewhere (a run); null without one. */
export function currentTraceparent(): string | null {
  if (!active) return null;
  if (!trace.getActiveSpan()) return null;
  return traceHeaders().traceparent ?? null;
}

/** The span context a stored `traceparent` names, as a parent and a link; null when absent or malformed. */
export function storedTraceContext(traceparent: string | null): { parent: Context; links: Link[] } | null {
  if (!active || !traceparent) return null;
  const parent = propagation.extract(context.active(), { traceparent });
  const spanContext = trace.getSpanContext(parent);
  if (!spanContext) return null;
  return { parent, links: [{ context: spanContext }] };
}

// ---- metrics ------------------------------------------------------------------------------------------------

/** Attribute sets kept for reuse; beyond this many, sets are built per call again. */
const MAX_ATTRIBUTE_SETS = 512;
type AttributeKeyPart = string | number | null;
interface SetTree {
  children: Map<AttributeKeyPart, SetTree>;
  set?: Attributes;
}
let attributeSets: SetTree = { children: new Map() };
let attributeSetCount = 0;

/**
 * One frozen attribute set per key (`parts`, which must name every value `build` puts in it, first of them what
 * the set is for): a measurement recorded per request then allocates no attribute object. `build` gets the parts, so
 * a caller passes a function of its module rather than a closure made per call. The key is looked up part
 * by part (strings from code and small numbers, whose hashes V8 keeps), not joined into a string that is hashed
 * anew on every request. Bounded, so an unexpected spread of values cannot grow it.
 */
export function attributeSet<P extends readonly AttributeKeyPart[]>(
  parts: P,
  build: (parts: P) => Attributes,
): Attributes {
  let node = attributeSets;
  for (const part of parts) {
    let next = node.children.get(part);
    if (!next) {
      if (attributeSetCount >= MAX_ATTRIBUTE_SETS) return Object.freeze(build(parts));
      next = { children: new Map() };
      node.children.set(part, next);
    }
    node = next;
  }
  if (node.set) return node.set;
  const made = Object.freeze(build(parts));
  if (attributeSetCount < MAX_ATTRIBUTE_SETS) {
    node.set = made;
    attributeSetCount++;
  }
  return made;
}

/** One HTTP request served (rate and duration by route and status). */
export function recordHttpRequest(attributes: Attributes, seconds: number): void {
  if (instruments) recordAfterTurn(instruments.httpDuration, seconds, attributes);
}

/** One MCP method served (rate and duration by method, tool and outcome). */
export function recordMcpOperation(attributes: Attributes, seconds: number): void {
  if (instruments) recordAfterTurn(instruments.mcpDuration, seconds, attributes);
}

/** Measurements waiting for the end of this turn of the event loop, side by side. */
const pendingHistograms: Histogram[] = [];
const pendingValues: number[] = [];
const pendingSets: Attributes[] = [];
/** Past this many (a turn that served that many requests), a measurement is recorded at once. */
const MAX_PENDING = 4096;

/**
 * A per-request duration, recorded with the others of this turn of the event loop right after it, as the spans are
 * encoded (encoding-processor.ts): one pass through the metrics SDK for many requests keeps it warm. A reader
 * collecting later in the turn (a scrape, an export) sees them from the next turn on.
 */
function recordAfterTurn(histogram: Histogram, value: number, attributes: Attributes): void {
  if (pendingHistograms.length >= MAX_PENDING) {
    histogram.record(value, attributes);
    return;
  }
  pendingHistograms.push(histogram);
  pendingValues.push(value);
  pendingSets.push(attributes);
  if (pendingHistograms.length === 1) setImmediate(recordPending);
}

function recordPending(): void {
  for (let i = 0; i < pendingHistograms.length; i++)
    (pendingHistograms[i] as Histogram).record(pendingValues[i] as number, pendingSets[i]);
  pendingHistograms.length = 0;
  pendingValues.length = 0;
  pendingSets.length = 0;
}

/** A bearer token refused, by the code answered (`unauthorized`, `invalid_token`, `token_in_query`). */
export function recordAuthFailure(reason: string): void {
  instruments?.authFailures.add(1, { 'error.type': reason });
}

/** A tool call refused by policy or narrowing, once per blocker code. */
export function recordBlockedCall(tool: string, reason: string): void {
  instruments?.blockedCalls.add(1, { 'gen_ai.tool.name': tool, 'flowgate.block.reason': reason });
}

export function recordRunStarted(): void {
  instruments?.runsStarted.add(1);
}

/** A run ended (`completed`, `failed`, `timed-out`, `cancelled`). */
export function recordRunEnded(status: string): void {
  instruments?.runsEnded.add(1, { 'flowgate.run.status': status });
}

/** Runs a worker claimed whose previous holder's lease had expired. */
export function recordLeaseTakeovers(count: number): void {
  if (count > 0) instruments?.leaseTakeovers.add(count);
}

/**
 * Reports the run queue's depth through `read` whenever metrics are collected; returns the unsubscribe. Nothing is
 * registered (or read) without telemetry.
 */
export function observeQueueDepth(read: () => Promise<number>): () => void {
  if (!instruments) return () => {};
  const gauge = instruments.queueDepth;
  const callback = async (result: { observe(value: number): void }) => {
    try {
      result.observe(await read());
    } catch {
      // A failed read skips one observation; the next collection tries again.
    }
  };
  gauge.addCallback(callback);
  return () => gauge.removeCallback(callback);
}
