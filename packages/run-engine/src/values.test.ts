import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversionMeter, MAX_VALUE_DEPTH } from './limits.js';
import { storedToJson } from './stored.js';
import {
  decodeValue,
  encodeValue,
  equals,
  Fn,
  fromJson,
  type JsonValue,
  Keyword,
  keyOf,
  kw,
  List,
  printValue,
  Sym,
  toJson,
  type Value,
  Vec,
  VMap,
  VSet,
} from './values.js';

const meter = () => conversionMeter();
const print = (v: Value) => printValue(v, meter());
const roundTrip = (v: Value) => decodeValue(JSON.parse(JSON.stringify(encodeValue(v, meter()))), meter());

const scalar: fc.Arbitrary<Value> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string(),
  fc.constantFrom('~', '~~x', '~:k', '~$s', '~#list', '__proto__', 'constructor'),
  fc.string().map((s) => new Keyword(s)),
  fc.constantFrom('a', 'ns/b', '__proto__').map((s) => new Sym(s)),
);

const value: fc.Arbitrary<Value> = fc.letrec<{ v: Value }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 4 }).map((items) => new Vec(items)),
    fc.array(tie('v'), { maxLength: 4 }).map((items) => new List(items)),
    fc.array(tie('v'), { maxLength: 4 }).map((items) => VSet.from(items)),
    fc.array(fc.tuple(tie('v'), tie('v')), { maxLength: 4 }).map((entries) => VMap.from(entries)),
  ),
})).v;

describe('the stored form', () => {
  it('round-trips any value exactly, through JSON text', () => {
    fc.assert(
      fc.property(value, (v) => {
        const back = roundTrip(v);
        expect(equals(back, v)).toBe(true);
        expect(print(back)).toBe(print(v));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps entry order for maps whose string keys look like array indexes', () => {
    const v = VMap.from([
      ['~', kw('a')],
      ['0', false],
      ['10', 1],
    ]);
    expect(print(roundTrip(v))).toBe(print(v));
  });

  it('uses transit-style tags inside ordinary JSON', () => {
    const v = VMap.from([
      [kw('status'), 200],
      ['~tilde', '~x'],
      [kw('tags'), VSet.from([kw('a')])],
      [kw('seq'), new List([1, new Sym('s')])],
    ]);
    expect(encodeValue(v, meter())).toEqual({
      '~:status': 200,
      '~~tilde': '~~x',
      '~:tags': { '~#set': ['~:a'] },
      '~:seq': { '~#list': [1, '~$s'] },
    });
    expect(
      encodeValue(
        VMap.from([
          [new Vec([1]), 2],
          [null, 3],
        ]),
        meter(),
      ),
    ).toEqual({ '~#cmap': [[1], 2, null, 3] });
  });

  it('cannot be forged: a real "~#list" key is escaped, unknown tags are refused', () => {
    const v = VMap.from(
      [['~#list', [1]] as unknown as [Value, Value]].map(([k]) => [k, new Vec([1])] as const),
    );
    expect(encodeValue(v, meter())).toEqual({ '~~#list': [1] });
    expect(print(roundTrip(v))).toBe('{"~#list" [1]}');
    for (const bad of [{ '~#nope': [] }, '~?x', { '~#list': 'x' }, { '~#cmap': [1] }, 1n, Number.NaN]) {
      expect(() => decodeValue(bad, meter())).toThrow(expect.objectContaining({ code: 'internal_error' }));
    }
  });

  it('keeps __proto__ as an ordinary key', () => {
    const v = VMap.from([
      ['__proto__', VMap.of({ polluted: true })],
      [kw('__proto__'), 1],
    ]);
    const stored = encodeValue(v, meter());
    expect(Object.keys(stored as object)).toEqual(['__proto__', '~:__proto__']);
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    const back = roundTrip(v);
    expect(print(back)).toBe('{"__proto__" {:polluted true}, :__proto__ 1}');
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('refuses functions and bounds size', () => {
    expect(() => encodeValue(new Fn('f', () => null), meter())).toThrow(
      expect.objectContaining({ code: 'type_error', message: 'a function (f) cannot be stored as a result' }),
    );
    expect(() =>
      encodeValue('x'.repeat(100), meter(), { maxBytes: 50, what: 'the result of step s' }),
    ).toThrow(
      expect.objectContaining({
        code: 'result_too_large',
        message: 'the result of step s is larger than 50 bytes',
      }),
    );
  });
});

describe('plain JSON', () => {
  it('reads object keys as keywords and writes keywords as their names', () => {
    const v = fromJson({ a: 1, 'b c': [true, null, 'x'], nested: { 'ns/k': 2.5 } }, meter());
    expect(print(v)).toBe('{:a 1, :b c [true nil "x"], :nested {:ns/k 2.5}}');
    expect(toJson(v, meter())).toEqual({ a: 1, 'b c': [true, null, 'x'], nested: { 'ns/k': 2.5 } });
    expect(
      toJson(
        VMap.from([
          [kw('k'), kw('v')],
          ['s', VSet.from([1])],
          [1, new List([new Sym('q')])],
          [null, 0],
          [new Vec([1, 2]), 0],
        ]),
        meter(),
      ),
    ).toEqual({ k: 'v', s: [1], '1': ['q'], nil: 0, '[1 2]': 0 });
  });

  it('keeps __proto__ from JSON input as data, without touching any prototype', () => {
    const input = JSON.parse('{"__proto__": {"isAdmin": true}, "constructor": {"prototype": 1}}') as unknown;
    const v = fromJson(input, meter());
    expect(print(v)).toBe('{:__proto__ {:isAdmin true}, :constructor {:prototype 1}}');
    const out = toJson(v, meter()) as Record<string, JsonValue>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"isAdmin":true},"constructor":{"prototype":1}}');
    expect(({} as { isAdmin?: boolean }).isAdmin).toBeUndefined();
    expect((v as VMap).get(kw('__proto__'))).toBeInstanceOf(VMap);
    expect((v as VMap).get(kw('toString'))).toBeUndefined();
  });

  it('accepts only plain data', () => {
    for (const bad of [new Date(0), new Map(), () => 1, Symbol('s'), 1n, Number.POSITIVE_INFINITY]) {
      expect(() => fromJson(bad, meter())).toThrow(expect.objectContaining({ code: 'type_error' }));
    }
    expect(() => fromJson({ x: new (class Thing {})() }, meter())).toThrow(
      expect.objectContaining({ code: 'type_error', message: 'only plain JSON objects are data' }),
    );
  });

  it('bounds nesting, collection and string sizes', () => {
    let deep: unknown = 1;
    for (let i = 0; i <= MAX_VALUE_DEPTH; i++) deep = [deep];
    expect(() => fromJson(deep, meter())).toThrow(expect.objectContaining({ code: 'value_too_deep' }));
    expect(() => fromJson(new Array(11).fill(0), conversionMeter({ maxCollectionSize: 10 }))).toThrow(
      expect.objectContaining({ code: 'collection_too_large' }),
    );
    expect(() => fromJson({ s: 'x'.repeat(11) }, conversionMeter({ maxStringLength: 10 }))).toThrow(
      expect.objectContaining({ code: 'string_too_large' }),
    );
    expect(() =>
      toJson(fromJson(new Array(100).fill('abc'), meter()), meter(), { maxBytes: 100, what: 'x' }),
    ).toThrow(expect.objectContaining({ code: 'result_too_large' }));
  });
});

describe('equality and keys', () => {
  it('equal values have equal keys, and keys tell unequal values apart', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(keyOf(a) === keyOf(b)).toBe(equals(a, b));
        expect(keyOf(roundTrip(a))).toBe(keyOf(a));
      }),
      { numRuns: 300 },
    );
  });

  it('treats vectors and lists with equal items as equal, and types as distinct', () => {
    expect(equals(new Vec([1, 2]), new List([1, 2]))).toBe(true);
    expect(equals(kw('a'), 'a')).toBe(false);
    expect(equals(kw('a'), new Sym('a'))).toBe(false);
    expect(equals(VSet.from([1, 2]), VSet.from([2, 1]))).toBe(true);
    expect(equals(VMap.of({ a: null }), VMap.of({ b: null }))).toBe(false);
    expect(equals(1, '1')).toBe(false);
    const f = new Fn('f', () => null);
    expect(equals(f, f)).toBe(true);
    expect(equals(f, new Fn('f', () => null))).toBe(false);
  });
});

describe('storedToJson', () => {
  it('shows a journal result as plain, redacted JSON', () => {
    const stored = encodeValue(
      VMap.of({ status: 200, body: VMap.of({ token: 'abc', echo: 'conn-secret-123', kind: kw('ok') }) }),
      meter(),
    );
    expect(storedToJson(stored, ['conn-secret-123'])).toEqual({
      status: 200,
      body: { token: '[redacted]', echo: '[redacted]', kind: 'ok' },
    });
  });
});
