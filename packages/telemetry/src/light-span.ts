/**
 * Our spans, handed to the SDK's span processors like its own.
 *
 * The SDK's span sanitizes and copies every attribute, converts every time to `[seconds, nanos]` arrays as it goes
 * and keeps a dozen bookkeeping fields; for a traced `tools/list` (one span, one event, a dozen attributes, all from
 * our code) that was a large part of what tracing cost per request (docs/performance.md). This one keeps times as
 * numbers and attributes as two arrays until a reader asks, draws its ids from a pooled random buffer, and is
 * recorded with the SDK tracer's own configuration (`tracerParts`: sampler, limits, resource, scope, span
 * processors), so a sampler, an exporter or a test's in-memory processor sees it as it sees the SDK's spans.
 */
import {
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type HrTime,
  type Link,
  SamplingDecision,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type {
  ReadableSpan,
  Sampler,
  SpanLimits,
  SpanProcessor,
  TimedEvent,
} from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

/** What a light span is recorded with: the SDK tracer's own configuration. */
export interface TracerParts {
  sampler: Sampler;
  spanProcessor: SpanProcessor;
  resource: Resource;
  scope: Scope;
  limits: SpanLimits;
}

const fn = (value: unknown, name: string) =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Record<string, unknown>)[name] === 'function';

/**
 * The SDK tracer's fields (`@opentelemetry/sdk-trace` 2.x keeps them as plain properties). Checked at runtime: a
 * version that names them differently gives null, and spans are then the SDK's own (slower, same output);
 * `light-span.test.ts` fails on such a version rather than letting the fast path go quietly.
 */
const tracerFields = z.object({
  _sampler: z.custom<Sampler>((v) => fn(v, 'shouldSample')),
  _spanProcessor: z.custom<SpanProcessor>((v) => fn(v, 'onEnd') && fn(v, 'onStart')),
  _resource: z.custom<Resource>((v) => typeof v === 'object' && v !== null && 'attributes' in v),
  instrumentationScope: z.object({ name: z.string() }).loose(),
  // Infinity (no limit) is a number zod's `number()` refuses.
  _spanLimits: z.custom<SpanLimits>((v) => typeof v === 'object' && v !== null),
});

/**
 * The one processor inside the provider's `MultiSpanProcessor` (its `_spanProcessors`), called directly: the usual
 * configuration has exactly one, and every span would otherwise go through three loops to reach it.
 */
function soleProcessor(multi: SpanProcessor): SpanProcessor | null {
  const inner = (multi as { _spanProcessors?: unknown })._spanProcessors;
  if (!Array.isArray(inner) || inner.length !== 1) return null;
  const only: unknown = inner[0];
  return fn(only, 'onEnd') && fn(only, 'onStart') ? (only as SpanProcessor) : null;
}

export function tracerParts(tracer: Tracer): TracerParts | null {
  const parsed = tracerFields.safeParse(tracer);
  if (!parsed.success) return null;
  const f = parsed.data;
  return {
    sampler: f._sampler,
    spanProcessor: soleProcessor(f._spanProcessor) ?? f._spanProcessor,
    resource: f._resource,
    scope: f.instrumentationScope as Scope,
    limits: f._spanLimits,
  };
}

// ---- ids ----------------------------------------------------------------------------------------------------

/** Char codes of a byte's two lowercase hex digits. */
const HEX_CODES = Array.from({ length: 256 }, (_, i) => [
  i.toString(16).padStart(2, '0').charCodeAt(0),
  i.toString(16).padStart(2, '0').charCodeAt(1),
]);
/** Random bytes drawn 4 KB at a time: one `getRandomValues` call per ≈ 170 spans instead of one per id. */
const pool = new Uint8Array(4096);
let poolAt = pool.length;
/** Char codes of a trace id (32) and of a span id (16), filled per id. */
const traceCodes: number[] = new Array(32).fill(0);
const spanCodes: number[] = new Array(16).fill(0);

/**
 * A random id of `bytes` bytes in lowercase hex, never all zero (invalid in W3C trace context). Built as one flat
 * string (`fromCharCode`), which the encoder reads back without flattening a concatenation first.
 */
function randomId(bytes: 8 | 16): string {
  const codes = bytes === 16 ? traceCodes : spanCodes;
  let any = 0;
  do {
    if (poolAt + bytes > pool.length) {
      crypto.getRandomValues(pool);
      poolAt = 0;
    }
    any = 0;
    for (let i = 0; i < bytes; i++) {
      const b = pool[poolAt++] as number;
      any |= b;
      const hex = HEX_CODES[b] as number[];
      codes[2 * i] = hex[0] as number;
      codes[2 * i + 1] = hex[1] as number;
    }
  } while (any === 0);
  return String.fromCharCode.apply(null, codes);
}

// ---- times --------------------------------------------------------------------------------------------------

/** Epoch milliseconds (fractional) as OTel's `[seconds, nanoseconds]`. */
export function hrTimeOf(epochMs: number): HrTime {
  const seconds = Math.floor(epochMs / 1000);
  const nanos = Math.min(999_999_999, Math.round((epochMs - seconds * 1000) * 1e6));
  return [seconds, nanos];
}

function epochMsOf(time: TimeInput | undefined, offset: number): number {
  if (time === undefined) return performance.timeOrigin + performance.now() + offset;
  if (typeof time === 'number') {
    // A `performance.now()` reading (what our code passes), as the SDK reads numbers no later than now; else epoch ms.
    return time <= performance.now() ? performance.timeOrigin + time + offset : time;
  }
  if (time instanceof Date) return time.getTime();
  return time[0] * 1000 + time[1] / 1e6;
}

// ---- the span -----------------------------------------------------------------------------------------------

// Frozen: a reader that pushes to a span's shared empty list fails loudly instead of filling every span's.
const NONE = Object.freeze([]) as unknown as never[];
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

const isAttributeValue = (value: unknown): value is AttributeValue =>
  typeof value === 'string' ||
  typeof value === 'number' ||
  typeof value === 'boolean' ||
  (Array.isArray(value) &&
    value.every((v) => v == null || ['string', 'number', 'boolean'].includes(typeof v)));

/**
 * Recording span (both the API's `Span` and the SDK's `ReadableSpan`). Times are epoch milliseconds until read as
 * `HrTime`; the getters are on the prototype (a class), never on a per-request object literal (docs/performance.md).
 */
export class LightSpan implements Span, ReadableSpan {
  /**
   * Attribute keys and values side by side: an object given a dozen keys one by one can turn into a dictionary,
   * slow to enumerate for the encoder; `attributes` builds the object for other readers.
   */
  readonly attributeKeys: string[] = [];
  readonly attributeValues: AttributeValue[] = [];
  // Most spans have neither: one shared empty list each until the first is added.
  links: Link[] = NONE;
  events: TimedEvent[] = NONE;
  status: SpanStatus = UNSET;
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  private endMs = -1;
  /** Epoch ms of the start; also the span's clock correction (the SDK's: `Date.now()` against `performance`). */
  private readonly startMs: number;
  private readonly offset: number;

  constructor(
    public name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    private readonly parts: TracerParts,
    attributes: Attributes | undefined,
    links: Link[] | undefined,
  ) {
    const now = performance.now();
    const wall = Date.now();
    this.offset = wall - (performance.timeOrigin + now);
    this.startMs = performance.timeOrigin + now + this.offset;
    if (attributes) this.setAttributes(attributes);
    if (links?.length)
      this.links = links.map((l) => ({
        context: l.context,
        ...(l.attributes ? { attributes: l.attributes } : {}),
      }));
  }

  get attributes(): Attributes {
    const attributes: Attributes = {};
    for (let i = 0; i < this.attributeKeys.length; i++)
      attributes[this.attributeKeys[i] as string] = this.attributeValues[i];
    return attributes;
  }
  get resource(): Resource {
    return this.parts.resource;
  }
  get instrumentationScope(): Scope {
    return this.parts.scope;
  }
  get startTime(): HrTime {
    return hrTimeOf(this.startMs);
  }
  get endTime(): HrTime {
    return this.endMs < 0 ? [0, 0] : hrTimeOf(this.endMs);
  }
  get duration(): HrTime {
    if (this.endMs < 0) return [-1, -1];
    const ms = Math.max(0, this.endMs - this.startMs);
    const seconds = Math.floor(ms / 1000);
    return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
  }
  get ended(): boolean {
    return this.endMs >= 0;
  }
  /** Start and end in epoch ms, for the encoder (no `HrTime` arrays). */
  get startEpochMs(): number {
    return this.startMs;
  }
  get endEpochMs(): number {
    return this.endMs;
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (value == null || this.endMs >= 0 || key.length === 0 || !isAttributeValue(value)) return this;
    const limit = this.parts.limits.attributeValueLengthLimit ?? Number.POSITIVE_INFINITY;
    const kept = typeof value === 'string' && value.length > limit ? value.slice(0, limit) : value;
    const at = this.attributeKeys.indexOf(key);
    if (at >= 0) this.attributeValues[at] = kept;
    else if (this.attributeKeys.length >= (this.parts.limits.attributeCountLimit ?? 128))
      this.droppedAttributesCount++;
    else {
      this.attributeKeys.push(key);
      this.attributeValues.push(kept);
    }
    return this;
  }

  setAttributes(attributes: Attributes): this {
    const keys = Object.keys(attributes);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const value = attributes[key];
      if (value !== undefined) this.setAttribute(key, value);
    }
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    let attributes: Attributes | undefined;
    if (isTimeInput(attributesOrTime)) time = attributesOrTime;
    else attributes = attributesOrTime;
    this.pushEvent(name, attributes ?? {}, epochMsOf(time, this.offset));
    return this;
  }

  /** An event that started at `startedAt` (a `performance.now()` reading), for a leaf step's record. */
  addStepEvent(name: string, attributes: Attributes, startedAt: number): void {
    this.pushEvent(name, attributes, performance.timeOrigin + startedAt + this.offset);
  }

  private pushEvent(name: string, attributes: Attributes, epochMs: number): void {
    if (this.endMs >= 0) return;
    if (this.events === NONE) this.events = [];
    if (this.events.length >= (this.parts.limits.eventCountLimit ?? 128)) {
      this.events.shift();
      this.droppedEventsCount++;
    }
    this.events.push({ name, attributes, time: hrTimeOf(epochMs), droppedAttributesCount: 0 });
  }

  addLink(link: Link): this {
    if (this.endMs >= 0) return this;
    if (this.links === NONE) this.links = [];
    this.links.push(link);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const l of links) this.addLink(l);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.endMs >= 0 || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK)
      return this;
    this.status =
      status.code === SpanStatusCode.ERROR && typeof status.message === 'string'
        ? { code: status.code, message: status.message }
        : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (this.endMs < 0) this.name = name;
    return this;
  }

  isRecording(): boolean {
    return this.endMs < 0;
  }

  /** The exception's type only: its message may quote input, and a stack never leaves the process. */
  recordException(exception: Exception, time?: TimeInput): void {
    const type =
      typeof exception === 'string'
        ? 'Error'
        : (exception.code !== undefined ? String(exception.code) : exception.name) || 'Error';
    this.addEvent('exception', { 'exception.type': type }, time);
  }

  end(time?: TimeInput): void {
    if (this.endMs >= 0) return;
    this.endMs = Math.max(this.startMs, epochMsOf(time, this.offset));
    const processor = this.parts.spanProcessor;
    processor.onEnding?.(this);
    processor.onEnd(this);
  }
}

function isTimeInput(value: unknown): value is TimeInput {
  return (
    typeof value === 'number' ||
    value instanceof Date ||
    (Array.isArray(value) && value.length === 2 && typeof value[0] === 'number')
  );
}

/**
 * A span under `parent` with the SDK's sampling decision: a light span when recorded, the API's non-recording span
 * (carrying the ids, so its children and outgoing `traceparent` continue the trace) when the sampler drops it.
 */
export function startLightSpan(
  parts: TracerParts,
  name: string,
  parent: Context,
  kind: SpanKind = SpanKind.INTERNAL,
  attributes?: Attributes,
  links?: Link[],
): Span {
  const above = trace.getSpanContext(parent);
  const valid = above !== undefined && trace.isSpanContextValid(above);
  const traceId = valid ? above.traceId : randomId(16);
  const spanId = randomId(8);
  const sampling = parts.sampler.shouldSample(parent, traceId, name, kind, attributes ?? {}, links ?? []);
  const traceState = sampling.traceState ?? (valid ? above.traceState : undefined);
  const context: SpanContext = {
    traceId,
    spanId,
    traceFlags:
      sampling.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
    traceState,
  };
  if (sampling.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(context);
  const merged = sampling.attributes ? { ...attributes, ...sampling.attributes } : attributes;
  const span = new LightSpan(name, kind, context, valid ? above : undefined, parts, merged, links);
  parts.spanProcessor.onStart(span, parent);
  return span;
}
