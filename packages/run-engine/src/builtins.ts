import type { CORE_FUNCTIONS } from '@flowgate/flows';
import { RunError } from './errors.js';
import type { Meter } from './limits.js';
import {
  compareValues,
  equals,
  Fn,
  fromJson,
  isTruthy,
  Keyword,
  keyOf,
  List,
  Sym,
  seqItems,
  toJson,
  toText,
  typeName,
  type Value,
  Vec,
  VMap,
  VSet,
} from './values.js';

/**
 * The core functions of the flow language. The table is typed by the validator's own list (`CORE_FUNCTIONS` in
 * @flowgate/flows), so a name the validator accepts without an implementation here — or the reverse — does not
 * compile. Semantics follow Clojure where it is cheap to do so; the differences are listed in the package's
 * README.md (numbers are doubles, `/` of integers may give a fraction, `split` and `replace` take literal strings
 * because EDN has no regex literal).
 */
export type CoreFunction = (typeof CORE_FUNCTIONS)[number];

export interface BuiltinContext {
  readonly meter: Meter;
  /** Calls anything callable: functions, keywords (`(:k m)`), maps (`(m k)`) and sets (`(s x)`). */
  apply(f: Value, args: readonly Value[]): Value;
}

export type Builtin = (args: readonly Value[], ctx: BuiltinContext) => Value;

// ---- argument helpers -----------------------------------------------------------------------------------------

function arity(name: string, args: readonly Value[], min: number, max = min): void {
  if (args.length >= min && args.length <= max) return;
  const expected =
    min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`;
  const one = min === 1 && (max === 1 || max === Number.POSITIVE_INFINITY);
  throw new RunError(
    'arity_error',
    `${name} takes ${expected} argument${one ? '' : 's'}, got ${args.length}`,
  );
}

function typeError(name: string, expected: string, got: Value): RunError {
  return new RunError('type_error', `${name} expects ${expected}, got ${typeName(got)}`);
}

function num(name: string, v: Value): number {
  if (typeof v !== 'number') throw typeError(name, 'a number', v);
  return v;
}

function int(name: string, v: Value): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw typeError(name, 'an integer', v);
  return v;
}

function str(name: string, v: Value): string {
  if (typeof v !== 'string') throw typeError(name, 'a string', v);
  return v;
}

/** Arithmetic results must stay finite, and integer arithmetic must stay exact. */
function checked(name: string, result: number, operands: readonly number[]): number {
  if (!Number.isFinite(result))
    throw new RunError('arithmetic_error', `${name} gave a result that is not a finite number`);
  if (!Number.isSafeInteger(result) && Number.isInteger(result) && operands.every(Number.isInteger)) {
    throw new RunError('arithmetic_error', `${name} overflowed the integer range (±2^53−1)`);
  }
  return result;
}

function sized<T extends Vec | List | VMap | VSet>(meter: Meter, v: T): T {
  meter.collection(v.size);
  return v;
}

function text(meter: Meter, s: string): string {
  meter.string(s.length);
  return s;
}

/** Joins strings after checking their total length, so a huge result is refused before it is built. */
function joinChecked(meter: Meter, parts: readonly string[], sep: string): string {
  let total = sep.length * Math.max(0, parts.length - 1);
  for (const p of parts) total += p.length;
  meter.string(total);
  // Building a string copies it: charging its length bounds quadratic patterns like (str acc …) in a loop.
  meter.charge(total + parts.length);
  return parts.join(sep);
}

// ---- collections ----------------------------------------------------------------------------------------------

/** `get` semantics: undefined when absent (so a stored nil is told apart from a missing key). */
export function lookup(coll: Value, key: Value, meter: Meter): Value | undefined {
  if (coll instanceof VMap) return coll.entry(key, meter)?.[1];
  if (coll instanceof VSet) return coll.has(key, meter) ? coll.get(key, meter) : undefined;
  if (typeof key === 'number' && Number.isInteger(key) && key >= 0) {
    if (coll instanceof Vec) return key < coll.items.length ? coll.items[key] : undefined;
    if (typeof coll === 'string') return key < coll.length ? coll[key] : undefined;
  }
  return undefined;
}

function assoc(name: string, coll: Value, pairs: [Value, Value][], meter: Meter): Value {
  if (coll === null) return sized(meter, VMap.from(pairs, meter));
  if (coll instanceof VMap) return sized(meter, coll.assoc(pairs, meter));
  if (coll instanceof Vec) {
    meter.charge(coll.items.length);
    const items = [...coll.items];
    for (const [k, v] of pairs) {
      if (typeof k !== 'number' || !Number.isInteger(k) || k < 0 || k > items.length) {
        throw new RunError(
          'index_out_of_bounds',
          `${name} on a vector of ${items.length} needs an index from 0 to ${items.length}`,
        );
      }
      items[k] = v;
    }
    return sized(meter, new Vec(items));
  }
  throw typeError(name, 'a map, a vector or nil', coll);
}

function conjOne(coll: Value, items: readonly Value[], meter: Meter): Value {
  if (coll === null) return sized(meter, new List([...items].reverse()));
  if (coll instanceof Vec) {
    meter.charge(coll.items.length);
    return sized(meter, new Vec([...coll.items, ...items]));
  }
  if (coll instanceof List) {
    meter.charge(coll.items.length);
    return sized(meter, new List([...[...items].reverse(), ...coll.items]));
  }
  if (coll instanceof VSet) return sized(meter, coll.add(items, meter));
  if (coll instanceof VMap) {
    const pairs: [Value, Value][] = [];
    for (const item of items) {
      if (item instanceof VMap) pairs.push(...(item.entries() as Iterable<[Value, Value]>));
      else if (item instanceof Vec && item.items.length === 2)
        pairs.push([item.items[0] as Value, item.items[1] as Value]);
      else if (item !== null) throw typeError('conj onto a map', 'a [key value] vector or a map', item);
    }
    return sized(meter, coll.assoc(pairs, meter));
  }
  throw typeError('conj', 'a collection or nil', coll);
}

function mapArg(name: string, v: Value): VMap | null {
  if (v === null || v instanceof VMap) return v;
  throw typeError(name, 'a map or nil', v);
}

function listOrNil(items: Value[]): Value {
  return items.length === 0 ? null : new List(items);
}

function compare(name: string, args: readonly Value[], ok: (a: number, b: number) => boolean): Value {
  arity(name, args, 1, Number.POSITIVE_INFINITY);
  for (let i = 0; i < args.length; i++) num(name, args[i] as Value);
  for (let i = 0; i + 1 < args.length; i++) if (!ok(args[i] as number, args[i + 1] as number)) return false;
  return true;
}

function keywordName(v: Keyword | Sym): string {
  const slash = v.name.indexOf('/');
  return slash > 0 && v.name.length > 1 ? v.name.slice(slash + 1) : v.name;
}

function split(s: string, sep: string, limit: number | undefined): string[] {
  if (limit !== undefined && limit > 0) {
    const out: string[] = [];
    let rest = s;
    while (out.length < limit - 1) {
      const at = sep === '' ? (rest.length > 0 ? 1 : -1) : rest.indexOf(sep);
      if (at < 0) break;
      out.push(rest.slice(0, at));
      rest = rest.slice(at + sep.length);
    }
    out.push(rest);
    return out;
  }
  const parts = s.split(sep);
  // Clojure drops trailing empty strings when no limit is given.
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

// ---- the table ------------------------------------------------------------------------------------------------

export const BUILTINS: Readonly<Record<CoreFunction, Builtin>> = {
  get: (args, { meter }) => {
    arity('get', args, 2, 3);
    const found = lookup(args[0] as Value, args[1] as Value, meter);
    return found === undefined ? (args[2] ?? null) : found;
  },
  'get-in': (args, { meter }) => {
    arity('get-in', args, 2, 3);
    let cur: Value | undefined = args[0] as Value;
    for (const k of seqItems(args[1] as Value, 'get-in')) {
      meter.tick(1);
      cur = lookup(cur as Value, k, meter);
      if (cur === undefined) return args[2] ?? null;
    }
    return cur as Value;
  },
  assoc: (args, { meter }) => {
    arity('assoc', args, 3, Number.POSITIVE_INFINITY);
    if (args.length % 2 === 0)
      throw new RunError('arity_error', 'assoc takes a collection and key/value pairs');
    const pairs: [Value, Value][] = [];
    for (let i = 1; i < args.length; i += 2) pairs.push([args[i] as Value, args[i + 1] as Value]);
    return assoc('assoc', args[0] as Value, pairs, meter);
  },
  'assoc-in': (args, { meter }) => {
    arity('assoc-in', args, 3);
    const path = seqItems(args[1] as Value, 'assoc-in');
    if (path.length === 0) throw new RunError('invalid_argument', 'assoc-in needs a non-empty key path');
    const go = (coll: Value, i: number): Value => {
      meter.tick(1);
      const k = path[i] as Value;
      if (i === path.length - 1) return assoc('assoc-in', coll, [[k, args[2] as Value]], meter);
      return assoc('assoc-in', coll, [[k, go(lookup(coll, k, meter) ?? null, i + 1)]], meter);
    };
    return go(args[0] as Value, 0);
  },
  dissoc: (args, { meter }) => {
    arity('dissoc', args, 1, Number.POSITIVE_INFINITY);
    const m = mapArg('dissoc', args[0] as Value);
    return m === null ? null : m.dissoc(args.slice(1), meter);
  },
  merge: (args, { meter }) => {
    let out: VMap | null = null;
    for (const a of args) {
      const m = mapArg('merge', a);
      if (m === null) continue;
      out = out === null ? m : sized(meter, out.assoc([...m.entries()], meter));
    }
    return out;
  },
  'select-keys': (args, { meter }) => {
    arity('select-keys', args, 2);
    const m = mapArg('select-keys', args[0] as Value);
    const pairs: (readonly [Value, Value])[] = [];
    for (const k of seqItems(args[1] as Value, 'select-keys')) {
      const entry = m?.entry(k, meter);
      if (entry) pairs.push(entry);
    }
    return VMap.from(pairs, meter);
  },
  keys: (args) => {
    arity('keys', args, 1);
    const m = mapArg('keys', args[0] as Value);
    return m === null ? null : listOrNil([...m.entries()].map((e) => e[0]));
  },
  vals: (args) => {
    arity('vals', args, 1);
    const m = mapArg('vals', args[0] as Value);
    return m === null ? null : listOrNil([...m.entries()].map((e) => e[1]));
  },
  count: (args) => {
    arity('count', args, 1);
    const v = args[0] as Value;
    if (v === null) return 0;
    if (typeof v === 'string') return v.length;
    if (v instanceof Vec || v instanceof List || v instanceof VMap || v instanceof VSet) return v.size;
    throw typeError('count', 'a collection, a string or nil', v);
  },
  first: (args) => {
    arity('first', args, 1);
    return seqItems(args[0] as Value, 'first')[0] ?? null;
  },
  rest: (args, { meter }) => {
    arity('rest', args, 1);
    const items = seqItems(args[0] as Value, 'rest');
    meter.charge(items.length);
    return new List(items.slice(1));
  },
  last: (args) => {
    arity('last', args, 1);
    const items = seqItems(args[0] as Value, 'last');
    return items[items.length - 1] ?? null;
  },
  nth: (args) => {
    arity('nth', args, 2, 3);
    const coll = args[0] as Value;
    const i = int('nth', args[1] as Value);
    if (coll === null) return args[2] ?? null;
    let size: number;
    let item: Value | undefined;
    if (coll instanceof Vec || coll instanceof List) {
      size = coll.items.length;
      item = coll.items[i];
    } else if (typeof coll === 'string') {
      size = coll.length;
      item = coll[i];
    } else throw typeError('nth', 'a vector, a list, a string or nil', coll);
    if (i >= 0 && i < size) return item as Value;
    if (args.length === 3) return args[2] as Value;
    throw new RunError('index_out_of_bounds', `nth: index ${i} is outside a collection of ${size}`);
  },
  conj: (args, { meter }) => {
    if (args.length === 0) return new Vec([]);
    return conjOne(args[0] as Value, args.slice(1), meter);
  },
  concat: (args, { meter }) => {
    const out: Value[] = [];
    for (const a of args) {
      const items = seqItems(a, 'concat');
      meter.collection(out.length + items.length);
      meter.charge(items.length);
      for (const x of items) out.push(x);
    }
    return new List(out);
  },
  into: (args, { meter }) => {
    arity('into', args, 2);
    const items = seqItems(args[1] as Value, 'into');
    meter.charge(items.length);
    return conjOne(args[0] as Value, items, meter);
  },
  vec: (args, { meter }) => {
    arity('vec', args, 1);
    const items = seqItems(args[0] as Value, 'vec');
    meter.charge(items.length);
    return new Vec([...items]);
  },
  str: (args, { meter }) =>
    joinChecked(
      meter,
      args.map((a) => toText(a, meter)),
      '',
    ),
  subs: (args, { meter }) => {
    arity('subs', args, 2, 3);
    const s = str('subs', args[0] as Value);
    const start = int('subs', args[1] as Value);
    const end = args.length === 3 ? int('subs', args[2] as Value) : s.length;
    if (start < 0 || end > s.length || start > end) {
      throw new RunError(
        'index_out_of_bounds',
        `subs: range ${start}..${end} is outside a string of ${s.length}`,
      );
    }
    meter.charge(end - start);
    return s.slice(start, end);
  },
  '=': (args, { meter }) => {
    arity('=', args, 1, Number.POSITIVE_INFINITY);
    for (let i = 0; i + 1 < args.length; i++)
      if (!equals(args[i] as Value, args[i + 1] as Value, meter)) return false;
    return true;
  },
  'not=': (args, { meter }) => {
    arity('not=', args, 1, Number.POSITIVE_INFINITY);
    for (let i = 0; i + 1 < args.length; i++)
      if (!equals(args[i] as Value, args[i + 1] as Value, meter)) return true;
    return false;
  },
  '<': (args) => compare('<', args, (a, b) => a < b),
  '>': (args) => compare('>', args, (a, b) => a > b),
  '<=': (args) => compare('<=', args, (a, b) => a <= b),
  '>=': (args) => compare('>=', args, (a, b) => a >= b),
  '+': (args) => {
    const ns = args.map((a) => num('+', a));
    return checked(
      '+',
      ns.reduce((a, b) => a + b, 0),
      ns,
    );
  },
  '*': (args) => {
    const ns = args.map((a) => num('*', a));
    return checked(
      '*',
      ns.reduce((a, b) => a * b, 1),
      ns,
    );
  },
  '-': (args) => {
    arity('-', args, 1, Number.POSITIVE_INFINITY);
    const ns = args.map((a) => num('-', a));
    if (ns.length === 1) return checked('-', -(ns[0] as number), ns);
    return checked(
      '-',
      ns.slice(1).reduce((a, b) => a - b, ns[0] as number),
      ns,
    );
  },
  '/': (args) => {
    arity('/', args, 1, Number.POSITIVE_INFINITY);
    const ns = args.map((a) => num('/', a));
    const divisors = ns.length === 1 ? ns : ns.slice(1);
    if (divisors.some((d) => d === 0)) throw new RunError('arithmetic_error', 'division by zero');
    const result =
      ns.length === 1 ? 1 / (ns[0] as number) : divisors.reduce((a, b) => a / b, ns[0] as number);
    return checked('/', result, []);
  },
  inc: (args) => {
    arity('inc', args, 1);
    const n = num('inc', args[0] as Value);
    return checked('inc', n + 1, [n]);
  },
  dec: (args) => {
    arity('dec', args, 1);
    const n = num('dec', args[0] as Value);
    return checked('dec', n - 1, [n]);
  },
  not: (args) => {
    arity('not', args, 1);
    return !isTruthy(args[0] as Value);
  },
  'nil?': (args) => {
    arity('nil?', args, 1);
    return args[0] === null;
  },
  'some?': (args) => {
    arity('some?', args, 1);
    return args[0] !== null;
  },
  'empty?': (args) => {
    arity('empty?', args, 1);
    const v = args[0] as Value;
    if (v === null) return true;
    if (typeof v === 'string') return v.length === 0;
    if (v instanceof Vec || v instanceof List || v instanceof VMap || v instanceof VSet) return v.size === 0;
    throw typeError('empty?', 'a collection, a string or nil', v);
  },
  'contains?': (args, { meter }) => {
    arity('contains?', args, 2);
    const coll = args[0] as Value;
    const k = args[1] as Value;
    if (coll === null) return false;
    if (coll instanceof VMap || coll instanceof VSet) return coll.has(k, meter);
    if (coll instanceof Vec || typeof coll === 'string') {
      const size = typeof coll === 'string' ? coll.length : coll.items.length;
      return typeof k === 'number' && Number.isInteger(k) && k >= 0 && k < size;
    }
    throw typeError('contains?', 'a map, a set, a vector, a string or nil', coll);
  },
  keyword: (args) => {
    arity('keyword', args, 1, 2);
    if (args.length === 2) {
      const ns = args[0] === null ? null : str('keyword', args[0] as Value);
      const n = str('keyword', args[1] as Value);
      return new Keyword(ns === null ? n : `${ns}/${n}`);
    }
    const v = args[0] as Value;
    if (v === null) return null;
    if (v instanceof Keyword) return v;
    if (v instanceof Sym) return new Keyword(v.name);
    return new Keyword(str('keyword', v));
  },
  name: (args) => {
    arity('name', args, 1);
    const v = args[0] as Value;
    if (typeof v === 'string') return v;
    if (v instanceof Keyword || v instanceof Sym) return keywordName(v);
    throw typeError('name', 'a keyword, a symbol or a string', v);
  },
  map: (args, ctx) => {
    arity('map', args, 2, Number.POSITIVE_INFINITY);
    const f = args[0] as Value;
    const colls = args.slice(1).map((c) => seqItems(c, 'map'));
    const n = Math.min(...colls.map((c) => c.length));
    const out: Value[] = [];
    for (let i = 0; i < n; i++)
      out.push(
        ctx.apply(
          f,
          colls.map((c) => c[i] as Value),
        ),
      );
    return new List(out);
  },
  filter: (args, ctx) => {
    arity('filter', args, 2);
    const f = args[0] as Value;
    return new List(seqItems(args[1] as Value, 'filter').filter((x) => isTruthy(ctx.apply(f, [x]))));
  },
  remove: (args, ctx) => {
    arity('remove', args, 2);
    const f = args[0] as Value;
    return new List(seqItems(args[1] as Value, 'remove').filter((x) => !isTruthy(ctx.apply(f, [x]))));
  },
  reduce: (args, ctx) => {
    arity('reduce', args, 2, 3);
    const f = args[0] as Value;
    const items = seqItems(args[args.length - 1] as Value, 'reduce');
    let acc: Value;
    let start = 0;
    if (args.length === 3) acc = args[1] as Value;
    else if (items.length === 0) return ctx.apply(f, []);
    else {
      acc = items[0] as Value;
      start = 1;
    }
    for (let i = start; i < items.length; i++) acc = ctx.apply(f, [acc, items[i] as Value]);
    return acc;
  },
  'sort-by': (args, ctx) => {
    arity('sort-by', args, 2, 3);
    const keyFn = args[0] as Value;
    const comparator = args.length === 3 ? (args[1] as Value) : null;
    const items = seqItems(args[args.length - 1] as Value, 'sort-by');
    const keyed = items.map((item, i) => ({ item, key: ctx.apply(keyFn, [item]), i }));
    ctx.meter.charge(items.length * Math.ceil(Math.log2(items.length + 1)));
    const cmp = (a: Value, b: Value): number => {
      if (comparator === null) return compareValues(a, b, ctx.meter);
      const r = ctx.apply(comparator, [a, b]);
      if (typeof r === 'number') return r;
      // A boolean comparator means "a sorts before b", as with (sort-by f > xs) in Clojure.
      if (isTruthy(r)) return -1;
      return isTruthy(ctx.apply(comparator, [b, a])) ? 1 : 0;
    };
    keyed.sort((a, b) => cmp(a.key, b.key) || a.i - b.i);
    return new List(keyed.map((k) => k.item));
  },
  'group-by': (args, ctx) => {
    arity('group-by', args, 2);
    const f = args[0] as Value;
    const groups = new Map<string, [Value, Value[]]>();
    for (const item of seqItems(args[1] as Value, 'group-by')) {
      const k = ctx.apply(f, [item]);
      const ks = keyOf(k, ctx.meter);
      const group = groups.get(ks);
      if (group) group[1].push(item);
      else groups.set(ks, [k, [item]]);
    }
    return VMap.from(
      [...groups.values()].map(([k, items]) => [k, new Vec(items)] as const),
      ctx.meter,
    );
  },
  range: (args, { meter }) => {
    arity('range', args, 1, 3);
    const ns = args.map((a) => num('range', a));
    const [start, end, step] =
      ns.length === 1 ? [0, ns[0] as number, 1] : [ns[0] as number, ns[1] as number, (ns[2] ?? 1) as number];
    if (step === 0) throw new RunError('invalid_argument', 'range needs a non-zero step');
    const count = Math.max(0, Math.ceil((end - start) / step));
    meter.collection(count);
    meter.charge(count);
    const out: Value[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = start + i * step;
    return new List(out);
  },
  'clojure.string/join': (args, { meter }) => {
    arity('clojure.string/join', args, 1, 2);
    const sep = args.length === 2 ? toText(args[0] as Value, meter) : '';
    const items = seqItems(args[args.length - 1] as Value, 'clojure.string/join');
    return joinChecked(
      meter,
      items.map((x) => toText(x, meter)),
      sep,
    );
  },
  'clojure.string/split': (args, { meter }) => {
    arity('clojure.string/split', args, 2, 3);
    const s = str('clojure.string/split', args[0] as Value);
    const sep = str('clojure.string/split', args[1] as Value);
    const limit = args.length === 3 ? int('clojure.string/split', args[2] as Value) : undefined;
    const parts = split(s, sep, limit);
    meter.collection(parts.length);
    meter.charge(parts.length);
    return new Vec(parts);
  },
  'clojure.string/upper-case': (args, { meter }) => {
    arity('clojure.string/upper-case', args, 1);
    return text(meter, str('clojure.string/upper-case', args[0] as Value).toUpperCase());
  },
  'clojure.string/lower-case': (args, { meter }) => {
    arity('clojure.string/lower-case', args, 1);
    return text(meter, str('clojure.string/lower-case', args[0] as Value).toLowerCase());
  },
  'clojure.string/trim': (args) => {
    arity('clojure.string/trim', args, 1);
    return str('clojure.string/trim', args[0] as Value).trim();
  },
  'clojure.string/blank?': (args) => {
    arity('clojure.string/blank?', args, 1);
    const v = args[0] as Value;
    return v === null || str('clojure.string/blank?', v).trim() === '';
  },
  'clojure.string/includes?': (args) => {
    arity('clojure.string/includes?', args, 2);
    return str('clojure.string/includes?', args[0] as Value).includes(
      str('clojure.string/includes?', args[1] as Value),
    );
  },
  'clojure.string/starts-with?': (args) => {
    arity('clojure.string/starts-with?', args, 2);
    return str('clojure.string/starts-with?', args[0] as Value).startsWith(
      str('clojure.string/starts-with?', args[1] as Value),
    );
  },
  'clojure.string/ends-with?': (args) => {
    arity('clojure.string/ends-with?', args, 2);
    return str('clojure.string/ends-with?', args[0] as Value).endsWith(
      str('clojure.string/ends-with?', args[1] as Value),
    );
  },
  'clojure.string/replace': (args, { meter }) => {
    arity('clojure.string/replace', args, 3);
    const s = str('clojure.string/replace', args[0] as Value);
    const match = str('clojure.string/replace', args[1] as Value);
    const replacement = str('clojure.string/replace', args[2] as Value);
    if (match === '') {
      // Clojure inserts the replacement around every character.
      const chars = s.split('');
      return replacement + joinChecked(meter, chars, replacement) + replacement;
    }
    return joinChecked(meter, s.split(match), replacement);
  },
  'json/parse': (args, { meter }) => {
    arity('json/parse', args, 1);
    const s = str('json/parse', args[0] as Value);
    let parsed: unknown;
    try {
      parsed = JSON.parse(s);
    } catch {
      throw new RunError('json_parse_error', 'json/parse: the text is not valid JSON');
    }
    meter.charge(s.length);
    return fromJson(parsed, meter);
  },
  'json/stringify': (args, { meter }) => {
    arity('json/stringify', args, 1);
    const json = toJson(args[0] as Value, meter, {
      maxBytes: meter.limits.maxStringLength,
      what: 'the JSON text',
      code: 'string_too_large',
    });
    return text(meter, JSON.stringify(json));
  },
};

export const BUILTIN_NAMES: ReadonlySet<string> = new Set(Object.keys(BUILTINS));

export function isBuiltin(name: string): name is CoreFunction {
  return BUILTIN_NAMES.has(name);
}

/** Builtins as first-class values, e.g. `(map inc xs)`. */
export function builtinFn(name: CoreFunction, ctx: BuiltinContext): Fn {
  const impl = BUILTINS[name];
  return new Fn(name, (args) => impl(args, ctx));
}
