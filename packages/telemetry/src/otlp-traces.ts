/**
 * OTLP/protobuf encoding of finished spans (`ExportTraceServiceRequest`), in one pass into one buffer.
 *
 * The SDK's own serializer cost ≈ 18 µs per span of a traced `tools/list` in the profile (a size-estimating pass,
 * then the writing pass, each encoding every attribute key and name again): the largest single part of what tracing
 * every request cost (`pnpm bench --only tools-list`). This writes the same bytes — the same fields in the same
 * order, checked against the SDK's serializer in otlp-traces.test.ts — in one pass, with attribute keys and span and
 * event names kept encoded (they come from code, so there are few of them) and lengths reserved at the size a
 * message usually needs. Web APIs only (Uint8Array, TextEncoder): the gateway's modules stay runtime-neutral.
 */
import type { Attributes, AttributeValue, HrTime, Link, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { LightSpan } from './light-span.js';

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** Encoded names (attribute keys, span and event names): bounded, names only, so request values never fill it. */
const MAX_NAMES = 2048;
const MAX_NAME_LENGTH = 256;
const names = new Map<string, Uint8Array>();
const utf8 = new TextEncoder();
/** Eight bytes to write a double through, little-endian as protobuf wants it whatever the platform's order. */
const scratch = new DataView(new ArrayBuffer(8));

/** Each char code's hex digit value (either case); 0 for anything else, which a valid id never holds. */
const NIBBLES = new Uint8Array(65536);
for (let i = 0; i < 10; i++) NIBBLES[48 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLES[97 + i] = 10 + i;
  NIBBLES[65 + i] = 10 + i;
}

class Writer {
  buf: Uint8Array;
  pos = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
  }

  ensure(extra: number): void {
    if (this.pos + extra > this.buf.length) this.grow(extra);
  }

  /** Out of `ensure`, so the check inlines where it is called. */
  private grow(extra: number): void {
    let size = this.buf.length * 2;
    while (size < this.pos + extra) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }

  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    // Outside uint32: 64-bit two's complement, as int64 is on the wire.
    const abs = Math.abs(value);
    let low = abs >>> 0;
    let high = (abs / 0x100000000) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low & 0x7f;
  }

  tag(field: number, wireType: number): void {
    const tag = (field << 3) | wireType;
    // Every tag of these messages but one (a span's flags, field 16) is one byte.
    if (tag < 0x80) {
      this.ensure(1);
      this.buf[this.pos++] = tag;
    } else this.varint(tag);
  }

  /** Little-endian 32 bits. */
  fixed32(value: number): void {
    this.ensure(4);
    const buf = this.buf;
    buf[this.pos++] = value & 0xff;
    buf[this.pos++] = (value >>> 8) & 0xff;
    buf[this.pos++] = (value >>> 16) & 0xff;
    buf[this.pos++] = (value >>> 24) & 0xff;
  }

  /** Nanoseconds since the epoch as fixed64, exactly (seconds × 1e9 exceeds 2^53, so it is split in 16-bit parts). */
  time(hr: HrTime): void {
    this.timeParts(hr[0], hr[1]);
  }

  /** Epoch milliseconds (fractional, a light span's times) as `time` writes them. */
  epochMs(ms: number): void {
    const seconds = Math.floor(ms / 1000);
    this.timeParts(seconds, Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6)));
  }

  timeParts(seconds: number, nanos: number): void {
    const lowPart = (seconds & 0xffff) * 1e9;
    const highPart = ((seconds / 0x10000) >>> 0) * 1e9;
    const low = (lowPart >>> 0) + (((highPart & 0xffff) * 0x10000) >>> 0) + nanos;
    const high =
      Math.floor(lowPart / 0x100000000) + ((highPart / 0x10000) >>> 0) + Math.floor(low / 0x100000000);
    this.fixed32(low >>> 0);
    this.fixed32(high >>> 0);
  }

  double(value: number): void {
    scratch.setFloat64(0, value, true);
    this.ensure(8);
    for (let i = 0; i < 8; i++) this.buf[this.pos++] = scratch.getUint8(i);
  }

  string(value: string): void {
    // Short ASCII (most values) is copied here: a native encode per string costs more than the copy.
    const chars = value.length;
    if (chars < 0x80) {
      this.ensure(chars + 1);
      const buf = this.buf;
      const start = this.pos;
      buf[start] = chars;
      let i = 0;
      for (; i < chars; i++) {
        const code = value.charCodeAt(i);
        if (code > 0x7f) break;
        buf[start + 1 + i] = code;
      }
      if (i === chars) {
        this.pos = start + 1 + chars;
        return;
      }
    }
    this.bytes(utf8.encode(value));
  }

  /** A string from code (a key or a name): its length and bytes are kept after the first time, copied in one go. */
  name(value: string): void {
    const prefixed = names.get(value);
    if (prefixed) {
      this.raw(prefixed);
      return;
    }
    const bytes = utf8.encode(value);
    if (names.size < MAX_NAMES && value.length <= MAX_NAME_LENGTH) {
      const head = new Writer(bytes.length + 5);
      head.bytes(bytes);
      names.set(value, head.buf.slice(0, head.pos));
    }
    this.bytes(bytes);
  }

  /** A trace or span id (lowercase hex, as the SDK makes and checks them) as bytes. */
  id(hex: string): void {
    const length = hex.length >>> 1;
    this.varint(length);
    this.ensure(length);
    const buf = this.buf;
    const pos = this.pos;
    for (let i = 0; i < length; i++) {
      buf[pos + i] =
        ((NIBBLES[hex.charCodeAt(2 * i)] as number) << 4) | (NIBBLES[hex.charCodeAt(2 * i + 1)] as number);
    }
    this.pos = pos + length;
  }

  /** What another writer wrote. */
  append(other: Writer): void {
    this.ensure(other.pos);
    this.buf.set(other.buf.subarray(0, other.pos), this.pos);
    this.pos += other.pos;
  }

  /** Bytes already encoded (a length and its content). */
  raw(value: Uint8Array): void {
    const length = value.length;
    this.ensure(length);
    const buf = this.buf;
    const pos = this.pos;
    // A native copy costs a call, which only a few bytes are cheaper without (copied in the loop up to 32 bytes,
    // encoding a request span took ≈ 20% longer).
    if (length > 8) buf.set(value, pos);
    else for (let i = 0; i < length; i++) buf[pos + i] = value[i] as number;
    this.pos = pos + length;
  }

  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /**
   * Opens a length-delimited field, reserving `reserved` bytes for its length: 1 for small messages, 2 for a span
   * (usually 128 bytes to 16 KB), 3 for a batch's groups, so `close` rarely has to move what was written.
   */
  open(reserved = 1): number {
    this.ensure(reserved);
    const at = this.pos;
    this.pos += reserved;
    return at * 4 + reserved;
  }

  /** Closes what `open` started: writes the length, moving the content when it took another number of bytes. */
  close(opened: number): void {
    const reserved = opened & 3;
    const at = (opened - reserved) / 4;
    const length = this.pos - at - reserved;
    if (length < 0x80 && reserved === 1) {
      this.buf[at] = length;
      return;
    }
    let size = 1;
    for (let v = length >>> 7; v > 0; v >>>= 7) size++;
    if (size !== reserved) {
      this.ensure(size - reserved);
      this.buf.copyWithin(at + size, at + reserved, this.pos);
      this.pos += size - reserved;
    }
    let v = length;
    let p = at;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
  }
}

function anyValue(w: Writer, value: unknown): void {
  if (typeof value === 'string') {
    w.tag(1, 2);
    w.string(value);
  } else if (typeof value === 'boolean') {
    w.tag(2, 0);
    w.varint(value ? 1 : 0);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
      w.tag(3, 0);
      w.varint(value);
    } else {
      w.tag(4, 1);
      w.double(value);
    }
  } else if (value instanceof Uint8Array) {
    w.tag(7, 2);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    w.tag(5, 2);
    const list = w.open();
    for (const item of value) {
      w.tag(1, 2);
      const at = w.open();
      anyValue(w, item);
      w.close(at);
    }
    w.close(list);
  } else if (value !== null && typeof value === 'object') {
    w.tag(6, 2);
    const list = w.open();
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      w.tag(1, 2);
      const at = w.open();
      keyValue(w, key, (value as Record<string, unknown>)[key]);
      w.close(at);
    }
    w.close(list);
  }
  // Anything else (undefined, a function) is an empty AnyValue, as the SDK's serializer writes it.
}

function keyValue(w: Writer, key: string, value: unknown): void {
  w.tag(1, 2);
  w.name(key);
  w.tag(2, 2);
  const at = w.open();
  anyValue(w, value);
  w.close(at);
}

/**
 * Encoded attributes by field, key and value — the field's tag, the `KeyValue`'s length and its content, copied in one
 * go — for values that repeat: most of a span's attributes are the same pairs request after request (method, route,
 * status, MCP method, protocol version, outcome). Bounded per field and key, so a key whose values vary (a request
 * id) stops being kept after a few, and in all.
 */
const MAX_PAIR_KEYS = 256;
const MAX_VALUES_PER_KEY = 32;
const MAX_CACHED_STRING = 128;
type PairCache = Map<string, Map<string | number | boolean, Uint8Array>>;
/** By field number: resource attributes (1), an event's (3), a link's (4), a span's (9). */
const pairsByField: PairCache[] = [];
const pairWriter = new Writer(256);

function cachedPair(field: number, key: string, value: AttributeValue | undefined): Uint8Array | undefined {
  if (
    !(typeof value === 'string' && value.length <= MAX_CACHED_STRING) &&
    !(typeof value === 'number' && Number.isInteger(value)) &&
    typeof value !== 'boolean'
  )
    return undefined;
  let pairs = pairsByField[field];
  if (!pairs) {
    pairs = new Map();
    pairsByField[field] = pairs;
  }
  let byValue = pairs.get(key);
  if (!byValue) {
    if (pairs.size >= MAX_PAIR_KEYS || key.length > MAX_NAME_LENGTH) return undefined;
    byValue = new Map();
    pairs.set(key, byValue);
  }
  const known = byValue.get(value);
  if (known || byValue.size >= MAX_VALUES_PER_KEY) return known;
  pairWriter.pos = 0;
  pairWriter.tag(field, 2);
  const at = pairWriter.open(2);
  keyValue(pairWriter, key, value);
  pairWriter.close(at);
  const made = pairWriter.buf.slice(0, pairWriter.pos);
  byValue.set(value, made);
  return made;
}

function attribute(w: Writer, key: string, value: AttributeValue | undefined, field: number): void {
  const cached = cachedPair(field, key, value);
  if (cached) {
    w.raw(cached);
    return;
  }
  w.tag(field, 2);
  const at = w.open();
  keyValue(w, key, value);
  w.close(at);
}

function attributeArrays(
  w: Writer,
  keys: readonly string[],
  values: readonly AttributeValue[],
  field: number,
): void {
  for (let i = 0; i < keys.length; i++) attribute(w, keys[i] as string, values[i], field);
}

function attributes(w: Writer, attrs: Attributes | undefined, field: number): void {
  if (!attrs) return;
  // Own enumerable keys in insertion order, as `for…in` with `hasOwnProperty` gives them, without the prototype walk.
  const keys = Object.keys(attrs);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    attribute(w, key, attrs[key], field);
  }
}

function flags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

function event(w: Writer, e: TimedEvent): void {
  const at = w.open();
  w.tag(1, 1);
  w.time(e.time);
  w.tag(2, 2);
  w.name(e.name);
  attributes(w, e.attributes, 3);
  w.tag(4, 0);
  w.varint(e.droppedAttributesCount ?? 0);
  w.close(at);
}

/** Fields 1–3 of a span and of a link alike: trace id, span id, trace state when there is one. */
function identity(w: Writer, ctx: SpanContext): void {
  w.tag(1, 2);
  w.id(ctx.traceId);
  w.tag(2, 2);
  w.id(ctx.spanId);
  const state = ctx.traceState?.serialize();
  if (state) {
    w.tag(3, 2);
    w.string(state);
  }
}

function link(w: Writer, l: Link & { droppedAttributesCount?: number }): void {
  const at = w.open();
  const ctx = l.context;
  identity(w, ctx);
  attributes(w, l.attributes, 4);
  w.tag(5, 0);
  w.varint(l.droppedAttributesCount ?? 0);
  w.tag(6, 5);
  w.fixed32(flags(ctx.traceFlags, ctx.isRemote));
  w.close(at);
}

function span(w: Writer, s: ReadableSpan): void {
  const at = w.open(2);
  const ctx = s.spanContext();
  // A light span's times are numbers and its attributes arrays (light-span.ts): nothing to convert or enumerate.
  const light = s instanceof LightSpan ? s : null;
  identity(w, ctx);
  const parent = s.parentSpanContext;
  if (parent?.spanId) {
    w.tag(4, 2);
    w.id(parent.spanId);
  }
  w.tag(5, 2);
  w.name(s.name);
  // The API's kinds start at 0 (INTERNAL); OTLP's at 1, 0 being unspecified.
  const kind = s.kind == null ? 0 : s.kind + 1;
  if (kind !== 0) {
    w.tag(6, 0);
    w.varint(kind);
  }
  w.tag(7, 1);
  if (light) w.epochMs(light.startEpochMs);
  else w.time(s.startTime);
  w.tag(8, 1);
  if (light) w.epochMs(light.endEpochMs);
  else w.time(s.endTime);
  if (light) attributeArrays(w, light.attributeKeys, light.attributeValues, 9);
  else attributes(w, s.attributes, 9);
  w.tag(10, 0);
  w.varint(s.droppedAttributesCount);
  for (const e of s.events) {
    w.tag(11, 2);
    event(w, e);
  }
  w.tag(12, 0);
  w.varint(s.droppedEventsCount);
  for (const l of s.links) {
    w.tag(13, 2);
    link(w, l);
  }
  w.tag(14, 0);
  w.varint(s.droppedLinksCount);
  w.tag(15, 2);
  const status = w.open();
  if (s.status.message) {
    w.tag(2, 2);
    w.string(s.status.message);
  }
  w.tag(3, 0);
  w.varint(s.status.code);
  w.close(status);
  w.tag(16, 5);
  w.fixed32(flags(ctx.traceFlags, parent?.isRemote));
  w.close(at);
}

function scope(w: Writer, sc: Scope & { attributes?: Attributes; droppedAttributesCount?: number }): void {
  w.tag(1, 2);
  const at = w.open();
  w.tag(1, 2);
  w.name(sc.name);
  if (sc.version) {
    w.tag(2, 2);
    w.name(sc.version);
  }
  attributes(w, sc.attributes, 3);
  if (sc.droppedAttributesCount) {
    w.tag(4, 0);
    w.varint(sc.droppedAttributesCount);
  }
  w.close(at);
}

function resource(w: Writer, r: Resource): void {
  w.tag(1, 2);
  const at = w.open();
  attributes(w, r.attributes, 1);
  w.tag(2, 0);
  w.varint(0);
  w.close(at);
}

/** Whether a resource's group has spans in this batch (a reused batch keeps the groups of earlier ones, empty). */
function holdsSpans(byScope: ReadonlyMap<Scope, Writer>): boolean {
  for (const w of byScope.values()) if (w.pos > 0) return true;
  return false;
}

/** A batch whose buffers grew past this is not reused: one unusual batch does not stay in memory for good. */
const MAX_REUSED_BYTES = 1 << 20;

/**
 * Spans encoded as they are added, grouped by resource and then instrumentation scope (by identity), until `encode`
 * writes the `ExportTraceServiceRequest` around them: a batch holds bytes, not span objects, so a span is garbage
 * soon after it ends instead of surviving into the old generation while it waits for the export
 * (encoding-processor.ts). Reusable (`reset`): a new batch's buffers, grown from 8 KB and copied into a request, are
 * a few hundred KB outside the heap per batch, which V8 counts towards its next full collection.
 */
export class TraceBatch {
  private readonly groups = new Map<Resource, Map<Scope, Writer>>();
  private readonly out = new Writer(8192);
  /** Spans added. */
  count = 0;

  add(s: ReadableSpan): void {
    let byScope = this.groups.get(s.resource);
    if (!byScope) {
      byScope = new Map();
      this.groups.set(s.resource, byScope);
    }
    let w = byScope.get(s.instrumentationScope);
    if (!w) {
      w = new Writer(8192);
      byScope.set(s.instrumentationScope, w);
    }
    w.tag(2, 2);
    span(w, s);
    this.count++;
  }

  /** The resources of the spans in it (an exporter waits for their asynchronous attributes first). */
  resources(): Resource[] {
    const found: Resource[] = [];
    for (const [r, byScope] of this.groups) if (holdsSpans(byScope)) found.push(r);
    return found;
  }

  /**
   * The whole request: resource and scope of each group around its spans' bytes. A view of the batch's own buffer,
   * valid until the batch is reset.
   */
  encode(): Uint8Array {
    let size = 1024;
    for (const byScope of this.groups.values()) for (const w of byScope.values()) size += w.pos + 256;
    const w = this.out;
    w.pos = 0;
    w.ensure(size);
    for (const [r, byScope] of this.groups) {
      if (!holdsSpans(byScope)) continue;
      w.tag(1, 2);
      const resourceSpans = w.open(3);
      resource(w, r);
      for (const [sc, spans] of byScope) {
        if (spans.pos === 0) continue;
        w.tag(2, 2);
        const scopeSpans = w.open(3);
        scope(w, sc);
        w.append(spans);
        if (sc.schemaUrl) {
          w.tag(3, 2);
          w.string(sc.schemaUrl);
        }
        w.close(scopeSpans);
      }
      if (r.schemaUrl) {
        w.tag(3, 2);
        w.string(r.schemaUrl);
      }
      w.close(resourceSpans);
    }
    return w.buf.subarray(0, w.pos);
  }

  /** Empties the batch for reuse; false when its buffers grew too large to keep. */
  reset(): boolean {
    this.count = 0;
    this.out.pos = 0;
    let keep = this.out.buf.length <= MAX_REUSED_BYTES;
    for (const byScope of this.groups.values()) {
      for (const w of byScope.values()) {
        w.pos = 0;
        keep &&= w.buf.length <= MAX_REUSED_BYTES;
      }
    }
    return keep;
  }
}

/** `ExportTraceServiceRequest` of `spans`, grouped by resource and then instrumentation scope (by identity). */
export function encodeTraceExportRequest(spans: ReadonlyArray<ReadableSpan>): Uint8Array {
  const batch = new TraceBatch();
  for (const s of spans) batch.add(s);
  return batch.encode();
}
