import { CORE_FUNCTIONS, SPECIAL_FORMS } from '@flowgate/flows';
import { describe, expect, it } from 'vitest';
import { BUILTINS } from './builtins.js';
import { isSpecialForm } from './evaluator.js';
import { ev, evError } from './testing.js';

describe('the language surface', () => {
  it('implements exactly the validator’s core functions and special forms', () => {
    expect(Object.keys(BUILTINS).sort()).toEqual([...CORE_FUNCTIONS].sort());
    for (const form of SPECIAL_FORMS) expect(isSpecialForm(form)).toBe(true);
    expect(isSpecialForm('defn')).toBe(false);
    expect(isSpecialForm('constructor')).toBe(false);
    expect(isSpecialForm('__proto__')).toBe(false);
  });
});

describe('literals', () => {
  it.each([
    ['nil', 'nil'],
    ['true', 'true'],
    ['false', 'false'],
    ['42', '42'],
    ['-7', '-7'],
    ['1.5', '1.5'],
    ['"hi\\n"', '"hi\\n"'],
    ['\\a', '"a"'],
    [':k', ':k'],
    [':flowgate.viewer/kind', ':flowgate.viewer/kind'],
    ['[1 [2 :x] "s"]', '[1 [2 :x] "s"]'],
    ['{:a 1 "b" [2]}', '{:a 1, "b" [2]}'],
    ['#{1}', '#{1}'],
    ['#inst "2024-01-02T03:04:05Z"', '"2024-01-02T03:04:05Z"'],
    ['#uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"', '"f81d4fae-7dec-11d0-a765-00a0c91e6bf6"'],
    ['{:a (+ 1 2)}', '{:a 3}'],
    ['[(inc 1) {:x (str "a" "b")}]', '[2 {:x "ab"}]'],
    ['()', '()'],
  ])('%s → %s', (expr, expected) => {
    expect(ev(expr)).toBe(expected);
  });

  it('collapses equal keys in maps and sets, later values winning', () => {
    expect(ev('{[1 2] :a (quote (1 2)) :b}', { raw: true })).toBe('{[1 2] :b}');
    expect(ev('#{[1] (vec (quote (1)))}', { raw: true })).toBe('#{[1]}');
  });
});

describe('special forms', () => {
  it.each([
    ['(let [x 1 y (+ x 1)] (* x y))', '2'],
    ['(let [x 1] (let [x 2] x))', '2'],
    ['(let [_ 1 _ 2] _)', '2'],
    ['(let [x 1])', 'nil'],
    ['(do)', 'nil'],
    ['(do 1 2 3)', '3'],
    ['(if true :a :b)', ':a'],
    ['(if nil :a :b)', ':b'],
    ['(if false :a)', 'nil'],
    ['(if 0 :zero-is-truthy :no)', ':zero-is-truthy'],
    ['(if "" :empty-string-is-truthy :no)', ':empty-string-is-truthy'],
    ['(when true 1 2)', '2'],
    ['(when false 1)', 'nil'],
    ['(when-not false :ran)', ':ran'],
    ['(when-not 1 :ran)', 'nil'],
    ['(cond false 1 nil 2 :else 3)', '3'],
    ['(cond (= 1 1) :first :else :second)', ':first'],
    ['(cond false 1)', 'nil'],
    ['(cond)', 'nil'],
    ['(and)', 'true'],
    ['(and 1 2 3)', '3'],
    ['(and 1 nil 3)', 'nil'],
    ['(and 1 false 3)', 'false'],
    ['(or)', 'nil'],
    ['(or nil false 7 8)', '7'],
    ['(or nil false)', 'false'],
    ['(quote sym)', 'sym'],
    ['(quote (a "b" [c :d] {e 1}))', '(a "b" [c :d] {e 1})'],
    ['((fn [x] (* x 10)) 4)', '40'],
    ['((fn [] :none))', ':none'],
    ['((fn [x & more] [x more]) 1 2 3)', '[1 (2 3)]'],
    ['((fn [x & more] more) 1)', 'nil'],
    ['((fn fact [n] (if (<= n 1) 1 (* n (fact (dec n))))) 10)', '3628800'],
    ['(let [add (fn [a] (fn [b] (+ a b)))] ((add 2) 3))', '5'],
    ['(for [x [1 2 3]] (* x x))', '(1 4 9)'],
    ['(for [x [1 2] y [:a :b]] [x y])', '([1 :a] [1 :b] [2 :a] [2 :b])'],
    ['(for [x [1 2 3 4] :when (> x 2)] x)', '(3 4)'],
    ['(for [x [1 2] :when (> x 1) y [10 20] :when (< y 20)] (+ x y))', '(12)'],
    ['(for [x []] x)', '()'],
    ['(for [x nil] x)', '()'],
    ['(for [e {:a 1 :b 2}] (first e))', '(:a :b)'],
    ['(for [c "ab"] c)', '("a" "b")'],
  ])('%s → %s', (expr, expected) => {
    expect(ev(expr)).toBe(expected);
  });

  it('keywords, maps and sets are callable', () => {
    expect(ev('(:a {:a 1})')).toBe('1');
    expect(ev('(:a {:b 1})')).toBe('nil');
    expect(ev('(:a {:b 1} :default)')).toBe(':default');
    expect(ev('(:a {:a nil} :default)')).toBe('nil');
    expect(ev('(:a nil)')).toBe('nil');
    expect(ev('(:a 5)')).toBe('nil');
    expect(ev('(:a #{:a})')).toBe(':a');
    expect(ev('(map :n [{:n 1} {:n 2} {}])')).toBe('(1 2 nil)');
    expect(ev('(let [m {:a 1}] (m :a))')).toBe('1');
    expect(ev('(let [m {:a 1}] (m :b 2))')).toBe('2');
    expect(ev('(filter #{1 3} [1 2 3 4])')).toBe('(1 3)');
  });

  it('bindings shadow core functions, never special forms', () => {
    expect(ev('(let [map (fn [x] [:mine x])] (map 1))')).toBe('[:mine 1]');
    expect(ev('(let [count 3] (+ count 1))')).toBe('4');
  });

  it('closures capture their scope at creation', () => {
    expect(ev('(let [x 1 f (fn [] x) x 2] [(f) x])')).toBe('[1 2]');
  });

  it('reports malformed forms in unvalidated trees instead of misbehaving', () => {
    expect(evError('(if)', { raw: true })).toMatchObject({ code: 'invalid_form', line: 1, column: 1 });
    expect(evError('(let [x] x)', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('(let [[a] 1] a)', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('(fn x)', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('(fn [x &] x)', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('(for [x] x)', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('(for [:when true x [1]] x)', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('(cond 1)', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('(quote)', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('(undefined-thing 1)', { raw: true })).toEqual({
      code: 'unknown_symbol',
      message: 'unknown symbol undefined-thing',
      line: 1,
      column: 2,
    });
    expect(evError('constructor', { raw: true })).toMatchObject({ code: 'unknown_symbol' });
    expect(evError('(__proto__)', { raw: true })).toMatchObject({ code: 'unknown_symbol' });
    expect(evError('(toString)', { raw: true })).toMatchObject({ code: 'unknown_symbol' });
    expect(evError('hasOwnProperty', { raw: true })).toMatchObject({ code: 'unknown_symbol' });
    expect(evError('(1 2)', { raw: true })).toMatchObject({ code: 'not_callable', line: 1, column: 1 });
    expect(evError('("f" 2)', { raw: true })).toMatchObject({ code: 'not_callable' });
    expect(evError('flow/step', { raw: true })).toMatchObject({ code: 'invalid_form' });
    expect(evError('if', { raw: true })).toMatchObject({ code: 'unknown_symbol' });
  });

  it('refuses flow/step inside fn and flow operations inside function code', () => {
    expect(evError('((fn [] (flow/step :sleep :s {:duration-ms 1})))', { raw: true })).toMatchObject({
      code: 'invalid_form',
      message: 'flow/step cannot run inside fn',
    });
  });

  it('checks fn arity', () => {
    expect(evError('((fn [a b] a) 1)')).toEqual({
      code: 'arity_error',
      message: 'fn takes 2 arguments, got 1',
      line: 2,
      column: 8,
    });
    expect(evError('((fn f [a] a))')).toMatchObject({
      code: 'arity_error',
      message: 'f takes 1 argument, got 0',
    });
    expect(evError('((fn [a & r] a))')).toMatchObject({ message: 'fn takes at least 1 argument, got 0' });
    expect(evError('(:a)', { raw: true })).toMatchObject({ code: 'arity_error' });
  });

  it('gives (flow/input) in the body, with JSON keys as keywords', () => {
    expect(ev('(flow/input)', { input: { domain: 'a.com', tags: ['x'], nested: { n: 1 } } })).toBe(
      '{:domain "a.com", :tags ["x"], :nested {:n 1}}',
    );
    expect(ev('(:domain (flow/input))', { input: { domain: 'a.com' } })).toBe('"a.com"');
  });
});

describe('core functions', () => {
  it.each([
    // maps and lookups
    ['(get {:a 1} :a)', '1'],
    ['(get {:a 1} :b)', 'nil'],
    ['(get {:a 1} :b 0)', '0'],
    ['(get {:a nil} :a 0)', 'nil'],
    ['(get [10 20] 1)', '20'],
    ['(get [10 20] 5 :none)', ':none'],
    ['(get "abc" 1)', '"b"'],
    ['(get nil :a)', 'nil'],
    ['(get #{:a} :a)', ':a'],
    ['(get {"k" 1} "k")', '1'],
    ['(get-in {:a {:b [1 {:c 3}]}} [:a :b 1 :c])', '3'],
    ['(get-in {:a 1} [:a :b])', 'nil'],
    ['(get-in {:a 1} [:x] :d)', ':d'],
    ['(get-in {:a 1} [])', '{:a 1}'],
    ['(assoc {:a 1} :b 2)', '{:a 1, :b 2}'],
    ['(assoc {:a 1} :a 9 :c 3)', '{:a 9, :c 3}'],
    ['(assoc nil :a 1)', '{:a 1}'],
    ['(assoc [1 2] 0 :x)', '[:x 2]'],
    ['(assoc [1 2] 2 3)', '[1 2 3]'],
    ['(assoc-in {} [:a :b] 1)', '{:a {:b 1}}'],
    ['(assoc-in {:a {:x 0}} [:a :b] 1)', '{:a {:x 0, :b 1}}'],
    ['(assoc-in {:v [{:n 1}]} [:v 0 :n] 2)', '{:v [{:n 2}]}'],
    ['(dissoc {:a 1 :b 2 :c 3} :a :c)', '{:b 2}'],
    ['(dissoc nil :a)', 'nil'],
    ['(merge {:a 1} {:b 2} nil {:a 3})', '{:a 3, :b 2}'],
    ['(merge)', 'nil'],
    ['(merge nil nil)', 'nil'],
    ['(select-keys {:a 1 :b 2 :c nil} [:a :c :z])', '{:a 1, :c nil}'],
    ['(select-keys nil [:a])', '{}'],
    ['(keys {:a 1 :b 2})', '(:a :b)'],
    ['(keys {})', 'nil'],
    ['(vals {:a 1 :b 2})', '(1 2)'],
    ['(vals nil)', 'nil'],
    // sequences
    ['(count [1 2 3])', '3'],
    ['(count {:a 1})', '1'],
    ['(count "héllo")', '5'],
    ['(count nil)', '0'],
    ['(count #{1 2})', '2'],
    ['(first [1 2])', '1'],
    ['(first [])', 'nil'],
    ['(first nil)', 'nil'],
    ['(first {:a 1})', '[:a 1]'],
    ['(first "ab")', '"a"'],
    ['(rest [1 2 3])', '(2 3)'],
    ['(rest [])', '()'],
    ['(rest nil)', '()'],
    ['(last [1 2 3])', '3'],
    ['(last [])', 'nil'],
    ['(nth [1 2 3] 1)', '2'],
    ['(nth [1 2 3] 5 :none)', ':none'],
    ['(nth "abc" 2)', '"c"'],
    ['(nth nil 0)', 'nil'],
    ['(conj [1 2] 3 4)', '[1 2 3 4]'],
    ['(conj (quote (1 2)) 3 4)', '(4 3 1 2)'],
    ['(conj nil 1 2)', '(2 1)'],
    ['(conj #{1} 1 2)', '#{1 2}'],
    ['(conj {:a 1} [:b 2] {:c 3})', '{:a 1, :b 2, :c 3}'],
    ['(conj)', '[]'],
    ['(conj [1])', '[1]'],
    ['(concat [1 2] (quote (3)) nil #{4})', '(1 2 3 4)'],
    ['(concat)', '()'],
    ['(into [] (quote (1 2)))', '[1 2]'],
    ['(into {} [[:a 1] [:b 2]])', '{:a 1, :b 2}'],
    ['(into #{} [1 1 2])', '#{1 2}'],
    ['(into nil [1 2])', '(2 1)'],
    ['(into [0] {:a 1})', '[0 [:a 1]]'],
    ['(vec (quote (1 2)))', '[1 2]'],
    ['(vec nil)', '[]'],
    ['(vec {:a 1})', '[[:a 1]]'],
    // strings
    ['(str)', '""'],
    [
      '(str "a" 1 :k nil true 1.5 [1 "x" nil] {:a "b"} (quote (s)) #{})',
      '"a1:ktrue1.5[1 \\"x\\" nil]{:a \\"b\\"}(s)#{}"',
    ],
    ['(str (fn [x] x))', '"#function[fn]"'],
    ['(subs "hello" 1)', '"ello"'],
    ['(subs "hello" 1 3)', '"el"'],
    ['(subs "hello" 5)', '""'],
    // equality and comparison
    ['(= 1 1)', 'true'],
    ['(= 1 1.0)', 'true'],
    ['(= [1 2] (quote (1 2)))', 'true'],
    ['(= {:a [1]} {:a [1]})', 'true'],
    ['(= {:a 1} {:a 1 :b nil})', 'false'],
    ['(= #{1 2} #{2 1})', 'true'],
    ['(= :a :a :a)', 'true'],
    ['(= :a "a")', 'false'],
    ['(= nil false)', 'false'],
    ['(= "x")', 'true'],
    ['(not= 1 2)', 'true'],
    ['(not= 1 1 1)', 'false'],
    ['(< 1 2 3)', 'true'],
    ['(< 1 3 2)', 'false'],
    ['(> 3 2 1)', 'true'],
    ['(<= 1 1 2)', 'true'],
    ['(>= 2 2 3)', 'false'],
    ['(< 5)', 'true'],
    // arithmetic
    ['(+)', '0'],
    ['(+ 1 2 3)', '6'],
    ['(+ 0.1 0.2)', '0.30000000000000004'],
    ['(- 5)', '-5'],
    ['(- 10 1 2)', '7'],
    ['(*)', '1'],
    ['(* 2 3 4)', '24'],
    ['(/ 10 4)', '2.5'],
    ['(/ 12 2 3)', '2'],
    ['(/ 4)', '0.25'],
    ['(inc 1)', '2'],
    ['(dec 1.5)', '0.5'],
    // predicates
    ['(not nil)', 'true'],
    ['(not 0)', 'false'],
    ['(nil? nil)', 'true'],
    ['(nil? false)', 'false'],
    ['(some? false)', 'true'],
    ['(some? nil)', 'false'],
    ['(empty? [])', 'true'],
    ['(empty? nil)', 'true'],
    ['(empty? "")', 'true'],
    ['(empty? {:a 1})', 'false'],
    ['(contains? {:a nil} :a)', 'true'],
    ['(contains? {:a 1} :b)', 'false'],
    ['(contains? #{1} 1)', 'true'],
    ['(contains? [:x :y] 1)', 'true'],
    ['(contains? [:x :y] 2)', 'false'],
    ['(contains? nil :a)', 'false'],
    // keywords and names
    ['(keyword "abc")', ':abc'],
    ['(keyword :abc)', ':abc'],
    ['(keyword "ns" "abc")', ':ns/abc'],
    ['(keyword nil)', 'nil'],
    ['(keyword (quote sym))', ':sym'],
    ['(name :abc)', '"abc"'],
    ['(name :ns/abc)', '"abc"'],
    ['(name "s")', '"s"'],
    ['(name (quote sym))', '"sym"'],
    // transforms
    ['(map inc [1 2 3])', '(2 3 4)'],
    ['(map + [1 2 3] [10 20])', '(11 22)'],
    ['(map first {:a 1 :b 2})', '(:a :b)'],
    ['(map inc nil)', '()'],
    ['(filter some? [1 nil 2 false])', '(1 2 false)'],
    ['(remove nil? [1 nil 2])', '(1 2)'],
    ['(reduce + [1 2 3])', '6'],
    ['(reduce + 10 [1 2 3])', '16'],
    ['(reduce + [])', '0'],
    ['(reduce + [5])', '5'],
    ['(reduce (fn [acc x] (assoc acc x (count acc))) {} [:a :b])', '{:a 0, :b 1}'],
    ['(reduce conj [] (quote (1 2)))', '[1 2]'],
    ['(sort-by :n [{:n 3} {:n 1} {:n 2}])', '({:n 1} {:n 2} {:n 3})'],
    ['(sort-by :n > [{:n 3} {:n 1} {:n 2}])', '({:n 3} {:n 2} {:n 1})'],
    ['(sort-by count ["ccc" "a" "bb"])', '("a" "bb" "ccc")'],
    ['(sort-by :k [{:k "b" :i 1} {:k "a"} {:k "b" :i 2}])', '({:k "a"} {:k "b", :i 1} {:k "b", :i 2})'],
    ['(sort-by :k [{:k nil} {:k 2} {:k 1}])', '({:k nil} {:k 1} {:k 2})'],
    ['(sort-by name [:b :a])', '(:a :b)'],
    ['(sort-by first [[2 :x] [1 :y]])', '([1 :y] [2 :x])'],
    [
      '(group-by :t [{:t :a :v 1} {:t :b :v 2} {:t :a :v 3}])',
      '{:a [{:t :a, :v 1} {:t :a, :v 3}], :b [{:t :b, :v 2}]}',
    ],
    ['(group-by count [])', '{}'],
    ['(range 4)', '(0 1 2 3)'],
    ['(range 2 5)', '(2 3 4)'],
    ['(range 10 0 -3)', '(10 7 4 1)'],
    ['(range 0 1 0.25)', '(0 0.25 0.5 0.75)'],
    ['(range 5 1)', '()'],
    // clojure.string
    ['(clojure.string/join ["a" "b" 1 nil :k])', '"ab1:k"'],
    ['(clojure.string/join ", " ["a" "b"])', '"a, b"'],
    ['(clojure.string/join "-" [])', '""'],
    ['(clojure.string/split "a,b,,c,," ",")', '["a" "b" "" "c"]'],
    ['(clojure.string/split "a,b,c" "," 2)', '["a" "b,c"]'],
    ['(clojure.string/split "abc" "")', '["a" "b" "c"]'],
    ['(clojure.string/split "a.b" ".")', '["a" "b"]'],
    ['(clojure.string/upper-case "abc")', '"ABC"'],
    ['(clojure.string/lower-case "ÀB")', '"àb"'],
    ['(clojure.string/trim "  x y \\n")', '"x y"'],
    ['(clojure.string/blank? nil)', 'true'],
    ['(clojure.string/blank? " \\t")', 'true'],
    ['(clojure.string/blank? " a ")', 'false'],
    ['(clojure.string/includes? "hello" "ell")', 'true'],
    ['(clojure.string/starts-with? "hello" "he")', 'true'],
    ['(clojure.string/ends-with? "hello" "he")', 'false'],
    ['(clojure.string/replace "a.b.c" "." "$&")', '"a$&b$&c"'],
    ['(clojure.string/replace "abc" "" "-")', '"-a-b-c-"'],
    // JSON
    ['(json/parse "{\\"a\\": [1, {\\"b\\": null}], \\"c d\\": true}")', '{:a [1 {:b nil}], :c d true}'],
    ['(json/parse "[1, \\"x\\"]")', '[1 "x"]'],
    ['(json/parse "null")', 'nil'],
    [
      '(json/stringify {:a [1 :k nil] "b" #{2} :n/s 1.5})',
      '"{\\"a\\":[1,\\"k\\",null],\\"b\\":[2],\\"n/s\\":1.5}"',
    ],
    ['(json/stringify "x")', '"\\"x\\""'],
  ])('%s → %s', (expr, expected) => {
    expect(ev(expr)).toBe(expected);
  });

  it('JSON round-trips through json/parse and json/stringify', () => {
    expect(ev('(json/parse (json/stringify {:a [1 {:b "c"}]}))')).toBe('{:a [1 {:b "c"}]}');
  });

  it.each([
    ['(+ 1 "2")', 'type_error', '+ expects a number, got a string'],
    ['(inc nil)', 'type_error', 'inc expects a number, got nil'],
    ['(< 1 :a)', 'type_error', '< expects a number, got a keyword'],
    ['(count 5)', 'type_error', 'count expects a collection, a string or nil, got a number'],
    ['(first 5)', 'type_error', 'first needs a collection, found a number'],
    ['(map inc 5)', 'type_error', 'map needs a collection, found a number'],
    ['(merge {:a 1} [1])', 'type_error', 'merge expects a map or nil, got a vector'],
    ['(assoc "s" 0 1)', 'type_error', 'assoc expects a map, a vector or nil, got a string'],
    ['(assoc {:a 1} :b)', 'arity_error', 'assoc takes at least 3 arguments, got 2'],
    ['(assoc {:a 1} :b 1 :c)', 'arity_error', 'assoc takes a collection and key/value pairs'],
    ['(assoc [1] 5 2)', 'index_out_of_bounds', 'assoc on a vector of 1 needs an index from 0 to 1'],
    ['(assoc-in {} [] 1)', 'invalid_argument', 'assoc-in needs a non-empty key path'],
    ['(nth [1] 3)', 'index_out_of_bounds', 'nth: index 3 is outside a collection of 1'],
    ['(nth [1] 1.5)', 'type_error', 'nth expects an integer, got a number'],
    ['(subs "abc" 2 5)', 'index_out_of_bounds', 'subs: range 2..5 is outside a string of 3'],
    ['(/ 1 0)', 'arithmetic_error', 'division by zero'],
    ['(* 9007199254740991 2)', 'arithmetic_error', '* overflowed the integer range (±2^53−1)'],
    ['(inc 9007199254740991)', 'arithmetic_error', 'inc overflowed the integer range (±2^53−1)'],
    ['(* 1e300 1e300)', 'arithmetic_error', '* gave a result that is not a finite number'],
    ['(range 0 10 0)', 'invalid_argument', 'range needs a non-zero step'],
    ['(get {:a 1})', 'arity_error', 'get takes 2 to 3 arguments, got 1'],
    ['(not 1 2)', 'arity_error', 'not takes 1 argument, got 2'],
    ['(=)', 'arity_error', '= takes at least 1 argument, got 0'],
    ['(json/parse "{bad")', 'json_parse_error', 'json/parse: the text is not valid JSON'],
    ['(json/stringify {:f inc})', 'type_error', 'a function (inc) cannot be converted to data'],
    ['(sort-by :k [{:k 1} {:k "a"}])', 'type_error', 'cannot compare a string with a number'],
    ['(sort-by :k [{:k {}} {:k {}}])', 'type_error', 'cannot compare a map with a map'],
    ['(clojure.string/upper-case nil)', 'type_error', 'clojure.string/upper-case expects a string, got nil'],
    ['(keys [1])', 'type_error', 'keys expects a map or nil, got a vector'],
    ['(reduce + 1 2 3)', 'arity_error', 'reduce takes 2 to 3 arguments, got 4'],
    ['(name 5)', 'type_error', 'name expects a keyword, a symbol or a string, got a number'],
  ])('%s fails with %s', (expr, code, message) => {
    expect(evError(expr)).toEqual({ code, message, line: 2, column: 8 });
  });

  it('reports the innermost failing form', () => {
    // The body starts at column 8 of line 2; (inc nil) at column 21.
    expect(evError('(let [x (+ 1 (inc nil))] x)')).toMatchObject({ code: 'type_error', line: 2, column: 21 });
    expect(evError('{:a [1 (first 5)]}')).toMatchObject({ line: 2, column: 15 });
  });
});
