import { describe, expect, it } from 'vitest';
import { type DiagnosticCode, READER_CODES } from './diagnostics.js';
import { type ValidationResult, validateFlow } from './validate.js';

/** Line and column (1-based, code points) of the `nth` occurrence of `needle`, computed independently of the reader. */
function at(input: string, needle: string, nth = 0): { line: number; column: number } {
  let index = -1;
  for (let i = 0; i <= nth; i++) {
    index = input.indexOf(needle, index + 1);
    if (index < 0) throw new Error(`needle ${needle} not found`);
  }
  const before = input.slice(0, index).split(/\r\n|\r|\n/);
  return { line: before.length, column: [...(before[before.length - 1] as string)].length + 1 };
}

interface Case {
  name: string;
  input: string;
  code: DiagnosticCode;
  /** Expected position of the first error; `null` when the problem has no position; omitted when not pinned. */
  where?: { line: number; column: number } | null;
  path?: string;
}

const flow = (body: string, extra = '') => `{:slug :corpus${extra}\n :flow ${body}}`;
const deep = (open: string, n: number) => open.repeat(n);

function cases(): Case[] {
  const list: Case[] = [];
  const add = (
    name: string,
    input: string,
    code: DiagnosticCode,
    where?: Case['where'] | string,
    path?: string,
  ) => {
    const pos = typeof where === 'string' ? at(input, where) : where;
    list.push(pos === undefined ? { name, input, code, path } : { name, input, code, where: pos, path });
  };

  // Delimiters.
  add('mismatched closer (edn-data accepts it)', '{:bad ]', 'edn_mismatched_delimiter', ']');
  add('unclosed map', '{:slug :a', 'edn_unbalanced_delimiter', { line: 1, column: 1 });
  add('extra closer after the map', '{:slug :a}}', 'edn_unbalanced_delimiter', { line: 1, column: 11 });
  add('lone closer', ')', 'edn_unbalanced_delimiter', { line: 1, column: 1 });
  add('vector closed by paren', flow('(do [1 2)'), 'edn_mismatched_delimiter', ')', ':flow 1');
  add('crossed brackets', '[(])', 'edn_mismatched_delimiter', ']');
  add('unclosed set', '#{1 2', 'edn_unbalanced_delimiter', '#{');
  add('unclosed list', '(', 'edn_unbalanced_delimiter', { line: 1, column: 1 });
  add('multi-line mismatch', '{:slug :a\n :flow (do\n  (flow/input)}', 'edn_mismatched_delimiter', {
    line: 3,
    column: 15,
  });
  add(
    'unclosed list at end of input',
    '{:slug :a :flow (let [x 1] (str x)',
    'edn_unbalanced_delimiter',
    '(let',
    ':flow',
  );

  // Odd map entries.
  add('key without value', '{:slug}', 'edn_odd_map_entries', ':slug');
  add('trailing key without value', '{:slug :a :flow (do) :name}', 'edn_odd_map_entries', ':name');
  add('odd entries nested in the body', flow('{:x}'), 'edn_odd_map_entries', ':x', ':flow');

  // Quotes.
  add('lone quote', "'", 'edn_syntax_invalid', { line: 1, column: 1 });
  add('quote before a closer', "{:slug :a :flow '}", 'edn_syntax_invalid', "'");
  add('quoted slug', "{:slug 'a :flow (do)}", 'edn_quote_not_allowed', "'", ':slug');
  add('quoted vector as the body', "{:slug :a :flow '[1 2]}", 'edn_quote_not_allowed', "'", ':flow');
  add('quote inside the body', flow("(do '(x))"), 'edn_quote_not_allowed', "'", ':flow 1');
  add('quoted top-level form', "'{:slug :a}", 'edn_quote_not_allowed', { line: 1, column: 1 });
  add(
    'quoted :flow nested below the top level',
    "{:slug :a :x {:flow '(a)}}",
    'edn_quote_not_allowed',
    "'",
    ':x :flow',
  );
  add(
    'double quote before the body',
    "{:slug :a :flow ''(do)}",
    'edn_quote_not_allowed',
    at("{:slug :a :flow ''(do)}", "'", 1),
    ':flow',
  );

  // Reader macros that are not EDN.
  add('syntax quote', '{:slug `a}', 'edn_unsupported_syntax', '`');
  add('unquote', '{:slug ~a}', 'edn_unsupported_syntax', '~');
  add('deref', '@x', 'edn_unsupported_syntax', { line: 1, column: 1 });
  add('metadata', '^:meta {:slug :a}', 'edn_unsupported_syntax', { line: 1, column: 1 });
  add('anonymous fn literal', flow('#(inc %)'), 'edn_unsupported_syntax', '#(');
  add('regex literal', flow('#"a+"'), 'edn_unsupported_syntax', '#"');
  add('reader conditional', flow('#?(:clj 1)'), 'edn_unsupported_syntax', '#?');
  add('var quote', flow("#'inc"), 'edn_unsupported_syntax', "#'");
  add('hash at end of input', '{:slug :a} #', 'edn_multiple_forms', '#');

  // Tags.
  add('unknown tag', '#foo 1', 'edn_unknown_tag', { line: 1, column: 1 });
  add('unknown namespaced tag in a map', '{:slug :a :x #js {:a 1}}', 'edn_unknown_tag', '#js', ':x');
  add('##Inf', flow('##Inf'), 'edn_unknown_tag', '##');
  add('##NaN', flow('[1 ##NaN]'), 'edn_unknown_tag', '##', ':flow 1');
  add('#inst with prose', flow('#inst "yesterday"'), 'edn_invalid_tag_value', '"yesterday"');
  add(
    '#inst with an impossible date',
    flow('#inst "2026-02-30T00:00:00Z"'),
    'edn_invalid_tag_value',
    '"2026',
  );
  add('#uuid that is not one', flow('#uuid "not-a-uuid"'), 'edn_invalid_tag_value', '"not');
  add('#inst with a number', flow('#inst 5'), 'edn_invalid_tag_value', '5');
  add('tag without a value', flow('[#inst]'), 'edn_syntax_invalid', '#inst');

  // Numbers.
  add('2^53 is past the safe range', flow('9007199254740992'), 'edn_number_out_of_range', '9007');
  add('negative big integer', flow('-9007199254740993'), 'edn_number_out_of_range', '-9007');
  add('bigint suffix past the range', flow('12345678901234567890N'), 'edn_number_out_of_range', '1234');
  add('integer with 400 digits', flow('9'.repeat(400)), 'edn_number_out_of_range', '999');
  add('float overflow', flow('1e400'), 'edn_number_out_of_range', '1e400');
  add('float underflow to zero', flow('1e-400'), 'edn_number_out_of_range', '1e-400');
  add('decimal with too many digits', flow('0.12345678901234567890M'), 'edn_number_out_of_range', '0.1234');
  add('ratio', flow('1/2'), 'edn_invalid_number', '1/2');
  add('hex literal', flow('0x1F'), 'edn_invalid_number', '0x1F');
  add('leading zero', flow('007'), 'edn_invalid_number', '007');
  add('two decimal points', flow('1.2.3'), 'edn_invalid_number', '1.2.3');
  add('radix literal', flow('2r1010'), 'edn_invalid_number', '2r1010');
  add('number glued to a word', flow('12abc'), 'edn_invalid_number', '12abc');

  // Strings and escapes.
  add('unterminated string', '{:slug :a :name "unterminated}', 'edn_unterminated_string', '"', ':name');
  add('string ending in a backslash', '{:slug :a :name "abc\\', 'edn_unterminated_string', '"');
  add('unknown escape', flow('"\\q"'), 'edn_invalid_escape', '\\q');
  add('short unicode escape', flow('"\\u12"'), 'edn_invalid_escape', '\\u12');
  add('NUL escape', flow('"a\\u0000b"'), 'edn_invalid_escape', '\\u0000');
  add('lone high surrogate escape', flow('"\\uD800x"'), 'edn_invalid_escape', '\\uD800');
  add('lone low surrogate escape', flow('"\\uDC00"'), 'edn_invalid_escape', '\\uDC00');

  // Characters.
  add('raw NUL byte', '{:slug :a\u0000 :flow (do)}', 'edn_invalid_character', '\u0000');
  add('NUL byte inside a string', flow('"a\u0000b"'), 'edn_invalid_character', '\u0000');
  add('NUL byte inside a comment', `; note\u0000\n${flow('(do)')}`, 'edn_invalid_character', '\u0000');
  add('bell character', flow('"\u0007"'), 'edn_invalid_character', '\u0007');
  add('raw lone surrogate', flow('"\uD800"'), 'edn_invalid_character', '\uD800');
  add('backslash at end of input', '{:slug :a :flow \\', 'edn_invalid_token', '\\');
  add('unknown named character', flow('\\foo'), 'edn_invalid_token', '\\foo');
  add('NUL character literal', flow('\\u0000'), 'edn_invalid_token', '\\u0000');

  // Tokens.
  add('auto-resolved keyword', flow('::auto'), 'edn_invalid_token', '::auto');
  add('keyword with two slashes', flow(':a/b/c'), 'edn_invalid_token', ':a/b/c');
  add('quote inside a symbol', flow("foo'bar"), 'edn_invalid_token', "foo'bar");
  add('bare colon', flow(':'), 'edn_invalid_token', { line: 2, column: 8 });
  add('pipe in a symbol', flow('a|b'), 'edn_invalid_token', 'a|b');
  add('non-breaking space in a symbol', flow('a\u00a0b'), 'edn_invalid_token', 'a\u00a0b');

  // Nesting.
  add('10,000 opening brackets', deep('[', 10_000), 'edn_too_deep', { line: 1, column: 65 });
  add('10,000 nested maps', deep('{:a ', 10_000), 'edn_too_deep', { line: 1, column: 257 });
  add('10,000 discards', `${deep('#_', 10_000)}1`, 'edn_too_deep', { line: 1, column: 129 });
  add('10,000 unknown tags', `${deep('#foo ', 10_000)}1`, 'edn_unknown_tag', { line: 1, column: 1 });
  add('10,000 quotes', `${deep("'", 10_000)}1`, 'edn_quote_not_allowed', { line: 1, column: 1 });
  add('70 nested forms in the body', flow(`${deep('(do ', 70)}1${deep(')', 70)}`), 'edn_too_deep');

  // Size.
  add('definition over 150 KB', `{:slug :a :name "${'x'.repeat(160_000)}"}`, 'definition_too_large', null);
  add(
    '150 KB of characters but more bytes',
    `{:slug :a :name "${'é'.repeat(80_000)}"}`,
    'definition_too_large',
    null,
  );

  // Duplicates.
  add('duplicate top-level key', '{:slug :a :slug :b}', 'edn_duplicate_key', { line: 1, column: 11 });
  add('duplicate set element', flow('#{:a :a}'), 'edn_duplicate_set_element', at(flow('#{:a :a}'), ':a', 1));
  add(
    'duplicate composite key',
    flow('{[1 2] 1 [1 2] 2}'),
    'edn_duplicate_key',
    at(flow('{[1 2] 1 [1 2] 2}'), '[1 2]', 1),
  );
  add(
    'duplicate string key nested',
    '{:slug :a :x {"k" 1 "k" 2}}',
    'edn_duplicate_key',
    at('{:slug :a :x {"k" 1 "k" 2}}', '"k"', 1),
    ':x',
  );
  add('1 and 1N are the same key', flow('{1 :a 1N :b}'), 'edn_duplicate_key', '1N');

  // Several forms.
  add('two maps', '{} {}', 'edn_multiple_forms', { line: 1, column: 4 });
  add('a keyword after the map', '{:slug :a} :extra', 'edn_multiple_forms', ':extra');
  add('a form after a discard', '{:slug :a}\n#_ 1\n2', 'edn_multiple_forms', { line: 3, column: 1 });

  // Empty and wrongly shaped.
  add('empty text', '', 'edn_empty_input', null);
  add('only a comment', '   ;; nothing here\n', 'edn_empty_input', null);
  add('only a discarded form', '#_ {:slug :a}', 'edn_empty_input', null);
  add('a vector instead of a map', '[1 2 3]', 'definition_not_a_map', { line: 1, column: 1 });
  add('a string instead of a map', '"just text"', 'definition_not_a_map', { line: 1, column: 1 });
  add('nil instead of a map', 'nil', 'definition_not_a_map', { line: 1, column: 1 });

  // Hostile content that reads fine.
  add(
    '__proto__ key at the top',
    '{:__proto__ {:polluted true}}',
    'missing_required_field',
    { line: 1, column: 1 },
    ':slug',
  );
  add('__proto__ as the slug', '{:slug :__proto__ :flow (do)}', 'invalid_slug', ':__proto__', ':slug');
  add(
    '__proto__ as an invocation',
    flow('(do)', ' :invocations {:__proto__ {:inputs []}}'),
    'invalid_field_value',
    ':__proto__ {',
    ':invocations :__proto__',
  );
  add(
    'constructor as an input type',
    flow('(do)', ' :invocations {:default {:inputs [{:name :x :type :constructor}]}}'),
    'invalid_invocation_input_type',
    ':constructor',
  );
  add('host interop call', flow('(js/eval "1")'), 'unknown_symbol', 'js/eval', ':flow 0');
  add('JVM call', flow('(System/exit 0)'), 'unknown_symbol', 'System/exit', ':flow 0');
  add('path traversal in the slug', '{:slug "../../etc/passwd" :flow (do)}', 'invalid_slug', '"../', ':slug');
  add('100 KB symbol', flow(`x${'y'.repeat(100_000)}`), 'unknown_symbol', 'xyy', ':flow');
  return list;
}

const CORPUS = cases();

function validate(input: string): ValidationResult {
  let result: ValidationResult | undefined;
  expect(() => {
    result = validateFlow(input);
  }).not.toThrow();
  return result as ValidationResult;
}

describe('hostile and malformed definitions', () => {
  it('has a large corpus covering every reader code', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
    const covered = new Set(CORPUS.map((c) => c.code));
    for (const code of READER_CODES) expect(covered, code).toContain(code);
  });

  it.each(CORPUS.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const result = validate(c.input);
    expect(result.valid).toBe(false);
    expect(result.model).toBeUndefined();
    const first = result.diagnostics.find((d) => d.severity === 'error');
    expect(first?.code).toBe(c.code);
    if (c.where !== undefined) {
      expect({ line: first?.line, column: first?.column }).toEqual(
        c.where === null ? { line: null, column: null } : c.where,
      );
    }
    if (c.path !== undefined) expect(first?.path).toBe(c.path);
    for (const d of result.diagnostics) {
      expect(d.message.length).toBeLessThanOrEqual(500);
      expect(d.path.length).toBeLessThanOrEqual(300);
      expect(d.hint.length).toBeGreaterThan(0);
    }
    expect(result.diagnostics.length).toBeLessThanOrEqual(100);
  });

  it('never pollutes prototypes', () => {
    validate('{:__proto__ {:polluted true} :constructor {:prototype {:polluted true}} :slug :x :flow (do)}');
    validate(flow('(do)', ' :invocations {:default {:inputs [{:name :constructor :type :string}]}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });

  it('warns about unknown keys without losing them silently, and bounds the number of diagnostics', () => {
    const keys = Array.from({ length: 5000 }, (_, i) => `:k${i} ${i}`).join(' ');
    const result = validate(`{:slug :many ${keys} :flow (do)}`);
    expect(result.valid).toBe(true); // warnings alone do not fail a definition
    expect(result.diagnostics).toHaveLength(100);
    expect(result.diagnostics.every((d) => d.code === 'unknown_key' && d.severity === 'warning')).toBe(true);
  });

  it('stays invalid when errors come after thousands of kept warnings', () => {
    const keys = Array.from({ length: 5000 }, (_, i) => `:k${i} ${i}`).join(' ');
    const result = validate(`{:slug :late ${keys} :flow (nope)}`);
    expect(result.valid).toBe(false);
    expect(result.model).toBeUndefined();
    expect(result.diagnostics).toHaveLength(100);
  });

  it('handles thousands of unknown symbols among thousands of bindings', () => {
    const pad = (prefix: string, i: number) => `${prefix}${i}`.padEnd(32, 'q');
    const bindings = Array.from({ length: 2500 }, (_, i) => `${pad('a', i)} 1`).join(' ');
    const uses = Array.from({ length: 2000 }, (_, i) => pad('b', i)).join(' ');
    const result = validate(`{:slug :x :flow (let [${bindings}] [${uses}])}`);
    expect(result.valid).toBe(false);
    expect(result.diagnostics).toHaveLength(100);
    expect(result.diagnostics.every((d) => d.code === 'unknown_symbol')).toBe(true);
  });

  it('answers non-string input with a diagnostic', () => {
    const result = validate(undefined as unknown as string);
    expect(result).toEqual({
      valid: false,
      diagnostics: [
        {
          severity: 'error',
          code: 'edn_syntax_invalid',
          message: 'the definition must be EDN text',
          path: '',
          line: null,
          column: null,
          hint: 'send the definition as a string',
        },
      ],
      summary: { errors: 1, warnings: 0 },
    });
  });

  it('stops at 50 reader problems', () => {
    const result = validate(flow(`[${Array.from({ length: 200 }, () => '1/2').join(' ')}]`));
    expect(result.diagnostics).toHaveLength(50);
    expect(result.diagnostics.every((d) => d.code === 'edn_invalid_number')).toBe(true);
  });
});
