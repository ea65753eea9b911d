import { describe, expect, it } from 'vitest';
import { toRunError } from './errors.js';
import { DEFAULT_RUN_LIMITS, HARD_MAX_DEPTH, MAX_VALUE_DEPTH } from './limits.js';
import { ev, evError } from './testing.js';

/** Runs `fn` and returns how long it took, so hostile bodies are shown to stop quickly, not just eventually. */
function timed<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}

// Bodies start at line 2, column 8 (after `{:slug :t\n :flow `).
describe('evaluation limits', () => {
  it('fuel: every form costs one step; running out names the form being evaluated', () => {
    expect(ev('(reduce (fn [acc x] (+ acc x)) 0 (range 100))', { limits: { fuel: 1000 } })).toBe('4950');
    expect(evError('(reduce (fn [acc x] (+ acc x)) 0 (range 1000))', { limits: { fuel: 1000 } })).toEqual({
      code: 'eval_fuel_exhausted',
      message:
        'evaluation used more than 1000 steps; move heavy data shaping into smaller steps or reduce the data',
      line: 2,
      column: 28,
    });
  });

  it('depth: unbounded recursion stops at maxDepth, at the form that went too deep', () => {
    const error = evError('((fn f [n] (f (inc n))) 0)');
    expect(error).toEqual({
      code: 'recursion_too_deep',
      message: `evaluation nested deeper than ${DEFAULT_RUN_LIMITS.maxDepth} levels (check for unbounded recursion)`,
      line: 2,
      column: 22,
    });
    expect(ev('((fn f [n] (if (= n 0) :done (f (dec n)))) 100)')).toBe(':done');
    expect(
      evError('((fn f [n] (if (= n 0) :done (f (dec n)))) 100)', { limits: { maxDepth: 50 } }),
    ).toMatchObject({
      code: 'recursion_too_deep',
    });
  });

  it('depth: the limit is capped so the engine stops before the JS stack could overflow', () => {
    const error = evError('((fn f [n] (f (inc n))) 0)', { limits: { maxDepth: 10_000_000, fuel: 1e9 } });
    expect(error).toMatchObject({
      code: 'recursion_too_deep',
      message: `evaluation nested deeper than ${HARD_MAX_DEPTH} levels (check for unbounded recursion)`,
    });
    // Should an overflow happen on some path anyway, it is reported as recursion, not as a crash.
    expect(toRunError(new RangeError('Maximum call stack size exceeded')).toJSON()).toEqual({
      code: 'recursion_too_deep',
      message: 'evaluation nested too deeply',
    });
    expect(toRunError(new TypeError('x is undefined')).toJSON()).toEqual({
      code: 'internal_error',
      message: 'the interpreter failed unexpectedly',
    });
  });

  it('value nesting is bounded where values are built, so no walk over a value can recurse too deep', () => {
    expect(ev('(count (reduce (fn [acc _] [acc]) nil (range 100)))')).toBe('1');
    expect(evError('(reduce (fn [acc _] [acc]) nil (range 101))')).toEqual({
      code: 'value_too_deep',
      message: `data nested deeper than ${MAX_VALUE_DEPTH} levels`,
      line: 2,
      column: 28,
    });
    expect(evError('(reduce (fn [acc _] {:a acc}) nil (range 1000))').code).toBe('value_too_deep');
    expect(evError('(reduce (fn [acc _] (conj nil acc)) nil (range 1000))').code).toBe('value_too_deep');
  });

  it('collection sizes: ranges, literals, for, concat, into, conj and parsed JSON are checked', () => {
    const limits = { maxCollectionSize: 10 };
    expect(ev('(count (range 10))', { limits })).toBe('10');
    expect(evError('(range 11)', { limits })).toEqual({
      code: 'collection_too_large',
      message: 'a collection of 11 elements exceeds the limit of 10',
      line: 2,
      column: 8,
    });
    for (const expr of [
      '[0 1 2 3 4 5 6 7 8 9 10]',
      '(for [x (range 4) y (range 3)] [x y])',
      '(concat (range 6) (range 6))',
      '(into [] (concat (range 5) (range 6)))',
      '(conj (vec (range 10)) :x)',
      '(assoc (into {} (for [i (range 10)] [i i])) :k 1)',
      '(json/parse "[0,1,2,3,4,5,6,7,8,9,10]")',
      '(clojure.string/split "a,b,c,d,e,f,g,h,i,j,k" ",")',
    ]) {
      expect(evError(expr, { limits }).code, expr).toBe('collection_too_large');
    }
  });

  it('string sizes: str, join, replace and json/stringify are checked before the string is built', () => {
    const limits = { maxStringLength: 20 };
    expect(ev('(str "0123456789" "0123456789")', { limits })).toBe('"01234567890123456789"');
    expect(evError('(str "0123456789" "0123456789" "x")', { limits })).toEqual({
      code: 'string_too_large',
      message: 'a string of 21 characters exceeds the limit of 20',
      line: 2,
      column: 8,
    });
    for (const expr of [
      '(clojure.string/join "," (range 20))',
      '(clojure.string/replace "aaaaaaaaaa" "a" "bbb")',
      '(json/stringify (vec (range 20)))',
      '(str (vec (range 20)))',
      '(clojure.string/upper-case (str "0123456789" "0123456789" "x"))',
    ]) {
      expect(evError(expr, { limits }).code, expr).toBe('string_too_large');
    }
  });

  it('wall time: a long evaluation stops at the deadline', () => {
    const { value, ms } = timed(() =>
      evError('(reduce (fn [a x] (reduce + a (range 1000))) 0 (range 100000))', {
        limits: { fuel: 1e12 },
        deadline: Date.now() + 100,
      }),
    );
    expect(value).toMatchObject({ code: 'run_timed_out', message: 'the run exceeded its wall time' });
    expect(ms).toBeLessThan(2000);
  });
});

describe('hostile bodies stop quickly with default limits', () => {
  it.each([
    ['deep recursion through a named fn', '((fn f [n] (f (inc n))) 0)', 'recursion_too_deep'],
    [
      'recursion by passing a fn to itself',
      '(let [g (fn [h n] (h h (inc n)))] (g g 0))',
      'recursion_too_deep',
    ],
    ['a huge range', '(count (range 1000000000))', 'collection_too_large'],
    ['a nested for that explodes', '(count (for [a (range 1000) b (range 1000)] 1))', 'collection_too_large'],
    ['a doubling string bomb', '(reduce (fn [s _] (str s s)) "x" (range 64))', 'string_too_large'],
    [
      'str accumulating in a loop',
      '(reduce (fn [s _] (str s "0123456789")) "" (range 100000))',
      'eval_fuel_exhausted',
    ],
    ['a busy loop', '(reduce (fn [a x] (reduce + a (range 1000))) 0 (range 100000))', 'eval_fuel_exhausted'],
    [
      'printing a structure that shares one part many times',
      '(let [v (vec (range 1000)) w (vec (map (fn [_] v) (range 1000)))] (str w))',
      'string_too_large',
    ],
    [
      'hashing a shared structure as a key over and over',
      '(let [v (vec (range 1000)) w (vec (map (fn [_] v) (range 1000)))] (count (group-by (fn [_] w) (range 1000))))',
      'eval_fuel_exhausted',
    ],
    [
      'comparing shared structures over and over',
      '(let [v (vec (range 1000)) w (vec (map (fn [_] v) (range 1000))) u (vec (map (fn [_] (vec (range 1000))) (range 1000)))] (count (filter (fn [_] (= w u)) (range 1000))))',
      'eval_fuel_exhausted',
    ],
    [
      'serialising a shared structure',
      '(let [v (vec (range 1000)) w (vec (map (fn [_] v) (range 1000)))] (json/stringify w))',
      'string_too_large',
    ],
  ])('%s', (_name, expr, code) => {
    const { value, ms } = timed(() => evError(expr));
    expect(value.code).toBe(code);
    expect(value.line).toBe(2);
    expect(ms).toBeLessThan(3000);
  });
});
