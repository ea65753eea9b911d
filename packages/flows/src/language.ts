/**
 * The surface of the orchestration language (packages/run-engine/README.md), shared by the validator and the
 * interpreter so that what validates is exactly what runs.
 */
export const SPECIAL_FORMS = [
  'let',
  'do',
  'if',
  'when',
  'when-not',
  'cond',
  'fn',
  'quote',
  'and',
  'or',
  'for',
] as const;

/** Data shaping that belongs in function steps; in the flow body it is allowed but warned about. */
export const TRANSFORM_FUNCTIONS = ['map', 'filter', 'reduce', 'remove', 'sort-by', 'group-by'] as const;

export const STRING_FUNCTIONS = [
  'clojure.string/join',
  'clojure.string/split',
  'clojure.string/upper-case',
  'clojure.string/lower-case',
  'clojure.string/trim',
  'clojure.string/blank?',
  'clojure.string/includes?',
  'clojure.string/starts-with?',
  'clojure.string/ends-with?',
  'clojure.string/replace',
] as const;

export const CORE_FUNCTIONS = [
  'get',
  'get-in',
  'assoc',
  'assoc-in',
  'dissoc',
  'merge',
  'select-keys',
  'keys',
  'vals',
  'count',
  'first',
  'rest',
  'last',
  'nth',
  'conj',
  'concat',
  'into',
  'vec',
  'str',
  'subs',
  '=',
  'not=',
  '<',
  '>',
  '<=',
  '>=',
  '+',
  '-',
  '*',
  '/',
  'inc',
  'dec',
  'not',
  'nil?',
  'some?',
  'empty?',
  'contains?',
  'keyword',
  'name',
  ...TRANSFORM_FUNCTIONS,
  'range',
  ...STRING_FUNCTIONS,
  'json/parse',
  'json/stringify',
] as const;

/** Flow-body-only operations: `(flow/input)` and `(flow/step type id config)`. */
export const FLOW_OPERATIONS = ['flow/input', 'flow/step'] as const;

export const SPECIAL_FORM_SET: ReadonlySet<string> = new Set(SPECIAL_FORMS);
export const FUNCTION_SET: ReadonlySet<string> = new Set(CORE_FUNCTIONS);
export const TRANSFORM_SET: ReadonlySet<string> = new Set(TRANSFORM_FUNCTIONS);
