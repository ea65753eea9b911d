import { RunError, type RunErrorCode } from './errors.js';
import { MAX_VALUE_DEPTH, type Meter } from './limits.js';

/**
 * The runtime values of the orchestration language.
 *
 * | EDN            | runtime                         |
 * | -------------- | ------------------------------- |
 * | nil, true/false| `null`, `boolean`               |
 * | 1, 1.5         | `number` (finite doubles; integers stay within ±(2^53−1)) |
 * | "s", \c        | `string` (a character is a one-character string) |
 * | :k, :ns/k      | `Keyword`                       |
 * | 'sym           | `Sym` (only from `quote`)       |
 * | [..], (..)     | `Vec`, `List` (equal when their items are) |
 * | #{..}, {..}    | `VSet`, `VMap`                  |
 * | (fn ..)        | `Fn` (never leaves a run: it cannot be stored, sent or returned) |
 * | #inst, #uuid   | `string`                        |
 *
 * All values are immutable. Maps and sets hold their entries in a JS `Map` under a canonical key string, so any
 * value can be a key, equal keys collapse (`[1 2]` and `'(1 2)` are one key) and no key — `__proto__` included —
 * ever touches an object prototype.
 *
 * Two JSON forms:
 * - plain JSON (`toJson`/`fromJson`), for data crossing the edge: run input, HTTP and LLM bodies, the KV store,
 *   step configs and the run result. Object keys become keywords on the way in; keywords become their name
 *   (`:a/b` → "a/b") on the way out; lists and sets become arrays. Lossy by design: it is what outside systems
 *   send and expect.
 * - stored JSON (`encodeValue`/`decodeValue`), lossless, for the step journal that replay reads back. Transit-style
 *   tags inside ordinary JSON: keywords are `"~:name"`, symbols `"~$name"`, a string that starts with `~` gets one
 *   more (`"~~x"`); vectors are arrays, lists `{"~#list": [..]}`, sets `{"~#set": [..]}`, maps with string,
 *   keyword or symbol keys plain objects with encoded keys (`{"~:status": 200}`), other maps
 *   `{"~#cmap": [k1, v1, k2, v2 ..]}`. A real key `"~#list"` is encoded as `"~~#list"`, so tags cannot be forged.
 */
export type Value = null | boolean | number | string | Keyword | Sym | Vec | List | VSet | VMap | Fn;

export class Keyword {
  constructor(readonly name: string) {}
}

export class Sym {
  constructor(readonly name: string) {}
}

/** Nesting of a value: 0 for scalars, 1 + the deepest element for collections. */
export function depthOf(v: Value): number {
  return v instanceof Vec || v instanceof List || v instanceof VMap || v instanceof VSet ? v.depth : 0;
}

/**
 * Every collection knows its nesting and none may nest deeper than MAX_VALUE_DEPTH: building `[[[…]]]` in a loop
 * is cheap, and every walk over values (printing, equality, keys, JSON) recurses, so the bound is kept where values
 * are made rather than checked in each walk.
 */
function nestedDepth(values: Iterable<Value>): number {
  let max = 0;
  for (const v of values) {
    const d = depthOf(v);
    if (d > max) max = d;
  }
  if (max + 1 > MAX_VALUE_DEPTH) throw tooDeep();
  return max + 1;
}

export class Vec {
  readonly depth: number;
  constructor(readonly items: readonly Value[]) {
    this.depth = nestedDepth(items);
  }
  get size(): number {
    return this.items.length;
  }
}

export class List {
  readonly depth: number;
  constructor(readonly items: readonly Value[]) {
    this.depth = nestedDepth(items);
  }
  get size(): number {
    return this.items.length;
  }
}

function* entryValues(m: ReadonlyMap<string, readonly [Value, Value]>): Generator<Value> {
  for (const [k, v] of m.values()) {
    yield k;
    yield v;
  }
}

export class Fn {
  constructor(
    readonly name: string,
    readonly call: (args: readonly Value[]) => Value,
    /** Fixed parameters of a `fn`; undefined for builtins. */
    readonly params?: number,
  ) {}
}

export class VMap {
  readonly depth: number;
  private constructor(private readonly m: ReadonlyMap<string, readonly [Value, Value]>) {
    this.depth = nestedDepth(entryValues(m));
  }

  static readonly EMPTY = new VMap(new Map());

  /** Later entries win, as in a map literal evaluated left to right. */
  static from(entries: Iterable<readonly [Value, Value]>, meter?: Meter): VMap {
    const m = new Map<string, readonly [Value, Value]>();
    for (const entry of entries) {
      const k = keyOf(entry[0], meter);
      const old = m.get(k);
      // As with assoc, a replaced key keeps its first key object.
      m.set(k, old ? [old[0], entry[1]] : entry);
    }
    return new VMap(m);
  }

  /** A keyword-keyed map from a record (for results built by the engine itself). */
  static of(record: Readonly<Record<string, Value>>): VMap {
    return VMap.from(Object.entries(record).map(([k, v]) => [new Keyword(k), v] as const));
  }

  get size(): number {
    return this.m.size;
  }

  get(key: Value, meter?: Meter): Value | undefined {
    return this.m.get(keyOf(key, meter))?.[1];
  }

  has(key: Value, meter?: Meter): boolean {
    return this.m.has(keyOf(key, meter));
  }

  /** The stored entry for a key (its key as first inserted). */
  entry(key: Value, meter?: Meter): readonly [Value, Value] | undefined {
    return this.m.get(keyOf(key, meter));
  }

  entries(): IterableIterator<readonly [Value, Value]> {
    return this.m.values();
  }

  keyStrings(): IterableIterator<string> {
    return this.m.keys();
  }

  byKeyString(k: string): readonly [Value, Value] | undefined {
    return this.m.get(k);
  }

  assoc(pairs: readonly (readonly [Value, Value])[], meter?: Meter): VMap {
    meter?.charge(this.m.size);
    const m = new Map(this.m);
    for (const pair of pairs) {
      const k = keyOf(pair[0], meter);
      const old = m.get(k);
      // Clojure keeps the original key object when a key is replaced.
      m.set(k, old ? [old[0], pair[1]] : pair);
    }
    return new VMap(m);
  }

  dissoc(keys: readonly Value[], meter?: Meter): VMap {
    meter?.charge(this.m.size);
    const m = new Map(this.m);
    for (const key of keys) m.delete(keyOf(key, meter));
    return new VMap(m);
  }
}

export class VSet {
  readonly depth: number;
  private constructor(private readonly m: ReadonlyMap<string, Value>) {
    this.depth = nestedDepth(m.values());
  }

  static readonly EMPTY = new VSet(new Map());

  static from(items: Iterable<Value>, meter?: Meter): VSet {
    const m = new Map<string, Value>();
    for (const item of items) {
      const k = keyOf(item, meter);
      if (!m.has(k)) m.set(k, item);
    }
    return new VSet(m);
  }

  get size(): number {
    return this.m.size;
  }

  has(item: Value, meter?: Meter): boolean {
    return this.m.has(keyOf(item, meter));
  }

  get(item: Value, meter?: Meter): Value | undefined {
    return this.m.get(keyOf(item, meter));
  }

  values(): IterableIterator<Value> {
    return this.m.values();
  }

  keyStrings(): IterableIterator<string> {
    return this.m.keys();
  }

  hasKeyString(k: string): boolean {
    return this.m.has(k);
  }

  add(items: readonly Value[], meter?: Meter): VSet {
    meter?.charge(this.m.size);
    const m = new Map(this.m);
    for (const item of items) {
      const k = keyOf(item, meter);
      if (!m.has(k)) m.set(k, item);
    }
    return new VSet(m);
  }
}

export const kw = (name: string): Keyword => new Keyword(name);

export function isTruthy(v: Value): boolean {
  return v !== null && v !== false;
}

export function isSequential(v: Value): v is Vec | List {
  return v instanceof Vec || v instanceof List;
}

export function typeName(v: Value): string {
  if (v === null) return 'nil';
  switch (typeof v) {
    case 'boolean':
      return 'a boolean';
    case 'number':
      return 'a number';
    case 'string':
      return 'a string';
  }
  if (v instanceof Keyword) return 'a keyword';
  if (v instanceof Sym) return 'a symbol';
  if (v instanceof Vec) return 'a vector';
  if (v instanceof List) return 'a list';
  if (v instanceof VSet) return 'a set';
  if (v instanceof VMap) return 'a map';
  return 'a function';
}

// ---- canonical keys and equality ------------------------------------------------------------------------------

const fnIds = new WeakMap<Fn, number>();
let nextFnId = 1;

/** The canonical key of a value: equal values (by `equals`) have equal keys. Composite keys cost their size. */
export function keyOf(v: Value, meter?: Meter): string {
  if (v === null) return 'n';
  switch (typeof v) {
    case 'boolean':
      return v ? 't' : 'f';
    case 'number':
      return `d${String(v)}`;
    case 'string':
      meter?.charge(v.length);
      return `s${v}`;
  }
  if (v instanceof Keyword) return `k${v.name}`;
  if (v instanceof Sym) return `y${v.name}`;
  // Composite keys cost every element they cover: a structure that shares one large part many times is walked
  // (and its key built) in full, so the fuel is what bounds that work.
  meter?.tick(1);
  if (v instanceof Vec || v instanceof List) {
    meter?.tick(v.items.length);
    return `l${JSON.stringify(v.items.map((x) => keyOf(x, meter)))}`;
  }
  if (v instanceof VMap) {
    meter?.tick(v.size);
    const parts = [...v.entries()].map(([k, x]) => [keyOf(k, meter), keyOf(x, meter)]);
    parts.sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1));
    return `m${JSON.stringify(parts)}`;
  }
  if (v instanceof VSet) {
    meter?.tick(v.size);
    return `e${JSON.stringify([...v.keyStrings()].sort())}`;
  }
  let id = fnIds.get(v);
  if (id === undefined) {
    id = nextFnId++;
    fnIds.set(v, id);
  }
  return `F${id}`;
}

export function equals(a: Value, b: Value, meter?: Meter): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  meter?.tick(1);
  if (a instanceof Keyword) return b instanceof Keyword && a.name === b.name;
  if (a instanceof Sym) return b instanceof Sym && a.name === b.name;
  if (a instanceof Vec || a instanceof List) {
    if (!(b instanceof Vec || b instanceof List) || a.items.length !== b.items.length) return false;
    meter?.charge(a.items.length);
    for (let i = 0; i < a.items.length; i++) {
      if (!equals(a.items[i] as Value, b.items[i] as Value, meter)) return false;
    }
    return true;
  }
  if (a instanceof VMap) {
    if (!(b instanceof VMap) || a.size !== b.size) return false;
    meter?.charge(a.size);
    for (const k of a.keyStrings()) {
      const other = b.byKeyString(k);
      if (!other || !equals((a.byKeyString(k) as readonly [Value, Value])[1], other[1], meter)) return false;
    }
    return true;
  }
  if (a instanceof VSet) {
    if (!(b instanceof VSet) || a.size !== b.size) return false;
    for (const k of a.keyStrings()) if (!b.hasKeyString(k)) return false;
    return true;
  }
  return false;
}

const TYPE_ORDER = (v: Value): number => {
  if (v === null) return 0;
  if (typeof v === 'boolean') return 1;
  if (typeof v === 'number') return 2;
  if (typeof v === 'string') return 3;
  if (v instanceof Keyword) return 4;
  if (v instanceof Sym) return 5;
  if (v instanceof Vec) return 6;
  return 7;
};

/**
 * Ordering for `sort-by`: nil first, then numbers, strings (by UTF-16 code units, so the order does not depend on
 * the machine's locale), keywords and symbols by name, vectors by length then element by element. Comparing values
 * of different kinds (other than nil) or unordered collections is a type error, as in Clojure.
 */
export function compareValues(a: Value, b: Value, meter?: Meter): number {
  meter?.tick(1);
  const ta = TYPE_ORDER(a);
  const tb = TYPE_ORDER(b);
  if (ta === 0 || tb === 0) return ta - tb;
  if (ta !== tb || ta === 7) {
    throw new RunError('type_error', `cannot compare ${typeName(a)} with ${typeName(b)}`);
  }
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const sa = typeof a === 'string' ? a : a instanceof Keyword || a instanceof Sym ? a.name : undefined;
  const sb = typeof b === 'string' ? b : b instanceof Keyword || b instanceof Sym ? b.name : undefined;
  if (sa !== undefined && sb !== undefined) return sa < sb ? -1 : sa > sb ? 1 : 0;
  const va = (a as Vec).items;
  const vb = (b as Vec).items;
  if (va.length !== vb.length) return va.length - vb.length;
  for (let i = 0; i < va.length; i++) {
    const c = compareValues(va[i] as Value, vb[i] as Value, meter);
    if (c !== 0) return c;
  }
  return 0;
}

// ---- sequences ------------------------------------------------------------------------------------------------

/** The items of anything seqable: nil is empty, a map yields [k v] vectors, a string its characters. */
export function seqItems(v: Value, what = 'this function'): readonly Value[] {
  if (v === null) return [];
  if (v instanceof Vec || v instanceof List) return v.items;
  if (v instanceof VSet) return [...v.values()];
  if (v instanceof VMap) return [...v.entries()].map(([k, x]) => new Vec([k, x]));
  if (typeof v === 'string') return v.split('');
  throw new RunError('type_error', `${what} needs a collection, found ${typeName(v)}`);
}

// ---- printing -------------------------------------------------------------------------------------------------

export function formatNumber(n: number): string {
  return String(n);
}

/**
 * The text of a value as `str` shows it: strings as they are, nil as "", everything else in EDN-like notation
 * (strings inside collections are quoted). Bounded by the meter's string limit while it is built, so printing a
 * structure that shares one large part many times stops early.
 */
export function toText(v: Value, meter: Meter): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  const parts: string[] = [];
  let length = 0;
  const push = (s: string) => {
    length += s.length;
    meter.string(length);
    parts.push(s);
  };
  printInto(v, push, meter);
  return parts.join('');
}

export function printValue(v: Value, meter: Meter): string {
  const parts: string[] = [];
  let length = 0;
  printInto(
    v,
    (s) => {
      length += s.length;
      meter.string(length);
      parts.push(s);
    },
    meter,
  );
  return parts.join('');
}

function printInto(v: Value, push: (s: string) => void, meter: Meter): void {
  meter.tick(1);
  const atom = printAtom(v);
  if (atom !== undefined) {
    push(atom);
    return;
  }
  const seq = (open: string, items: Iterable<Value>, close: string) => {
    push(open);
    let first = true;
    for (const item of items) {
      if (!first) push(' ');
      first = false;
      printInto(item, push, meter);
    }
    push(close);
  };
  if (v instanceof Vec) seq('[', v.items, ']');
  else if (v instanceof List) seq('(', v.items, ')');
  else if (v instanceof VSet) seq('#{', v.values(), '}');
  else if (v instanceof VMap) {
    push('{');
    let first = true;
    for (const [k, x] of v.entries()) {
      if (!first) push(', ');
      first = false;
      printInto(k, push, meter);
      push(' ');
      printInto(x, push, meter);
    }
    push('}');
  }
}

/** The text of a value that is not a collection, or undefined for collections. */
function printAtom(v: Value): string | undefined {
  if (v === null) return 'nil';
  switch (typeof v) {
    case 'boolean':
      return String(v);
    case 'number':
      return formatNumber(v);
    case 'string':
      return JSON.stringify(v);
  }
  if (v instanceof Keyword) return `:${v.name}`;
  if (v instanceof Sym) return v.name;
  if (v instanceof Fn) return `#function[${v.name}]`;
  return undefined;
}

// ---- JSON -----------------------------------------------------------------------------------------------------

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Bounds the serialised size of a conversion; `what` names the data in the error ("the step result"). */
export interface SizeBudget {
  maxBytes: number;
  what: string;
  /** The error to raise; `result_too_large` unless said otherwise. */
  code?: RunErrorCode;
}

class SizeCounter {
  bytes = 0;
  constructor(private readonly budget: SizeBudget | undefined) {}
  add(n: number): void {
    this.bytes += n;
    if (this.budget && this.bytes > this.budget.maxBytes) {
      throw new RunError(
        this.budget.code ?? 'result_too_large',
        `${this.budget.what} is larger than ${this.budget.maxBytes} bytes`,
      );
    }
  }
}

/** Sets an own property even for `__proto__`, which plain assignment would turn into a prototype change. */
function setOwn(obj: { [key: string]: JsonValue }, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else obj[key] = value;
}

function tooDeep(): RunError {
  return new RunError('value_too_deep', `data nested deeper than ${MAX_VALUE_DEPTH} levels`);
}

function jsonKey(k: Value, meter: Meter): string {
  if (typeof k === 'string') return k;
  if (k instanceof Keyword || k instanceof Sym) return k.name;
  if (k === null) return 'nil';
  return printValue(k, meter);
}

/** Plain JSON for the outside world (see the module comment). Functions cannot be converted. */
export function toJson(v: Value, meter: Meter, budget?: SizeBudget): JsonValue {
  return toJsonAt(v, meter, new SizeCounter(budget), 0);
}

function toJsonAt(v: Value, meter: Meter, size: SizeCounter, depth: number): JsonValue {
  if (depth > MAX_VALUE_DEPTH) throw tooDeep();
  meter.tick(1);
  if (v === null || typeof v === 'boolean') {
    size.add(5);
    return v;
  }
  if (typeof v === 'number') {
    size.add(8);
    return v;
  }
  if (typeof v === 'string') {
    size.add(v.length + 2);
    return v;
  }
  if (v instanceof Keyword || v instanceof Sym) {
    size.add(v.name.length + 2);
    return v.name;
  }
  if (v instanceof Fn) {
    throw new RunError('type_error', `a function (${v.name}) cannot be converted to data`);
  }
  if (v instanceof VMap) {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, x] of v.entries()) {
      const key = jsonKey(k, meter);
      size.add(key.length + 4);
      setOwn(out, key, toJsonAt(x, meter, size, depth + 1));
    }
    return out;
  }
  const items = v instanceof VSet ? [...v.values()] : v.items;
  size.add(2);
  return items.map((x) => {
    size.add(1);
    return toJsonAt(x, meter, size, depth + 1);
  });
}

function isPlainObject(x: object): x is Record<string, unknown> {
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** Plain JSON in: object keys become keywords, arrays vectors. Checks sizes and depth against the meter's limits. */
export function fromJson(json: unknown, meter: Meter): Value {
  return fromJsonAt(json, meter, 0);
}

function fromJsonAt(x: unknown, meter: Meter, depth: number): Value {
  if (depth > MAX_VALUE_DEPTH) throw tooDeep();
  meter.tick(1);
  if (x === null || x === undefined) return null;
  switch (typeof x) {
    case 'boolean':
      return x;
    case 'number':
      if (!Number.isFinite(x)) throw new RunError('type_error', 'numbers must be finite');
      return x;
    case 'string':
      meter.string(x.length);
      return x;
    case 'object':
      break;
    default:
      throw new RunError('type_error', `a ${typeof x} is not data`);
  }
  if (Array.isArray(x)) {
    meter.collection(x.length);
    return new Vec(x.map((item) => fromJsonAt(item, meter, depth + 1)));
  }
  if (!isPlainObject(x)) throw new RunError('type_error', 'only plain JSON objects are data');
  const keys = Object.keys(x);
  meter.collection(keys.length);
  return VMap.from(
    keys.map((k) => {
      meter.string(k.length);
      return [new Keyword(k), fromJsonAt(x[k], meter, depth + 1)] as const;
    }),
  );
}

// ---- stored form (lossless) -----------------------------------------------------------------------------------

const TAG_LIST = '~#list';
const TAG_SET = '~#set';
const TAG_CMAP = '~#cmap';
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

function encodeString(s: string): string {
  return s.startsWith('~') ? `~${s}` : s;
}

function encodeKey(k: Value): string | undefined {
  if (typeof k === 'string') return encodeString(k);
  if (k instanceof Keyword) return `~:${k.name}`;
  if (k instanceof Sym) return `~$${k.name}`;
  return undefined;
}

/** The lossless stored form of a value (see the module comment). */
export function encodeValue(v: Value, meter: Meter, budget?: SizeBudget): JsonValue {
  return encodeAt(v, meter, new SizeCounter(budget), 0);
}

function encodeAt(v: Value, meter: Meter, size: SizeCounter, depth: number): JsonValue {
  if (depth > MAX_VALUE_DEPTH) throw tooDeep();
  meter.tick(1);
  if (v === null || typeof v === 'boolean') {
    size.add(5);
    return v;
  }
  if (typeof v === 'number') {
    size.add(8);
    return v;
  }
  if (typeof v === 'string') {
    size.add(v.length + 3);
    return encodeString(v);
  }
  if (v instanceof Keyword) {
    size.add(v.name.length + 4);
    return `~:${v.name}`;
  }
  if (v instanceof Sym) {
    size.add(v.name.length + 4);
    return `~$${v.name}`;
  }
  if (v instanceof Fn) {
    throw new RunError('type_error', `a function (${v.name}) cannot be stored as a result`);
  }
  const many = (items: Iterable<Value>): JsonValue[] => {
    size.add(2);
    const out: JsonValue[] = [];
    for (const item of items) {
      size.add(1);
      out.push(encodeAt(item, meter, size, depth + 1));
    }
    return out;
  };
  if (v instanceof Vec) return many(v.items);
  if (v instanceof List) return { [TAG_LIST]: many(v.items) };
  if (v instanceof VSet) return { [TAG_SET]: many(v.values()) };
  const entries = [...v.entries()];
  // A JSON object keeps entry order only when no key looks like an array index: JS lists such keys ("0", "12")
  // first. Those maps take the tagged entry list, so order survives a round trip.
  const objectKeeps = entries.every(([k]) => {
    const key = encodeKey(k);
    return key !== undefined && !ARRAY_INDEX.test(key);
  });
  if (objectKeeps) {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, x] of entries) {
      const key = encodeKey(k) as string;
      size.add(key.length + 4);
      setOwn(out, key, encodeAt(x, meter, size, depth + 1));
    }
    return out;
  }
  return { [TAG_CMAP]: many(entries.flat()) };
}

function corrupt(what: string): RunError {
  return new RunError('internal_error', `a stored value is malformed (${what})`);
}

function decodeString(s: string): Value {
  if (!s.startsWith('~')) return s;
  if (s.startsWith('~~')) return s.slice(1);
  if (s.startsWith('~:')) return new Keyword(s.slice(2));
  if (s.startsWith('~$')) return new Sym(s.slice(2));
  throw corrupt('unknown string tag');
}

/** Reads a stored value back; anything not produced by `encodeValue` is rejected. */
export function decodeValue(json: unknown, meter: Meter): Value {
  return decodeAt(json, meter, 0);
}

function decodeAt(x: unknown, meter: Meter, depth: number): Value {
  if (depth > MAX_VALUE_DEPTH) throw tooDeep();
  meter.tick(1);
  if (x === null) return null;
  switch (typeof x) {
    case 'boolean':
      return x;
    case 'number':
      if (!Number.isFinite(x)) throw corrupt('number');
      return x;
    case 'string':
      meter.string(x.length);
      return decodeString(x);
    case 'object':
      break;
    default:
      throw corrupt(typeof x);
  }
  const many = (items: unknown): Value[] => {
    if (!Array.isArray(items)) throw corrupt('tagged value');
    meter.collection(items.length);
    return items.map((item) => decodeAt(item, meter, depth + 1));
  };
  if (Array.isArray(x)) return new Vec(many(x));
  if (!isPlainObject(x)) throw corrupt('object');
  const keys = Object.keys(x);
  if (keys.length === 1) {
    const tag = keys[0] as string;
    if (tag === TAG_LIST) return new List(many(x[tag]));
    if (tag === TAG_SET) return VSet.from(many(x[tag]), meter);
    if (tag === TAG_CMAP) {
      const flat = many(x[tag]);
      if (flat.length % 2 !== 0) throw corrupt('map entries');
      const pairs: [Value, Value][] = [];
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i] as Value, flat[i + 1] as Value]);
      return VMap.from(pairs, meter);
    }
    if (tag.startsWith('~#')) throw corrupt('unknown tag');
  }
  meter.collection(keys.length);
  return VMap.from(
    keys.map((k) => [decodeString(k), decodeAt(x[k], meter, depth + 1)] as const),
    meter,
  );
}
