import { utf8Length } from '@flowgate/core';
import { parseEDNString } from 'edn-data';
import { describe, expect, it } from 'vitest';
import { readEdn } from './reader.js';
import { type EdnNode, stripLoc } from './types.js';

function read(text: string): EdnNode {
  const result = readEdn(text);
  if (!result.ok)
    throw new Error(`expected ${JSON.stringify(text)} to read: ${JSON.stringify(result.diagnostics)}`);
  return result.value;
}

const kw = (name: string): EdnNode => ({ kind: 'keyword', name });
const sym = (name: string): EdnNode => ({ kind: 'symbol', name });
const int = (value: number): EdnNode => ({ kind: 'int', value });
const str = (value: string): EdnNode => ({ kind: 'string', value });

describe('readEdn: values', () => {
  it('reads every kind of value into the tree', () => {
    const tree = stripLoc(
      read(
        '{:k "s" :n [1 -2 +3 1.5 -0.25 1e3 2.5E-2] :b #{true false nil} :l (f x/y :a/b) :c [\\a \\newline \\space \\tab \\return \\u0041 \\(]}',
      ),
    );
    expect(tree).toEqual({
      kind: 'map',
      entries: [
        { key: kw('k'), value: str('s') },
        {
          key: kw('n'),
          value: {
            kind: 'vector',
            items: [
              int(1),
              int(-2),
              int(3),
              { kind: 'float', value: 1.5 },
              { kind: 'float', value: -0.25 },
              { kind: 'float', value: 1000 },
              { kind: 'float', value: 0.025 },
            ],
          },
        },
        {
          key: kw('b'),
          value: {
            kind: 'set',
            items: [{ kind: 'boolean', value: true }, { kind: 'boolean', value: false }, { kind: 'nil' }],
          },
        },
        { key: kw('l'), value: { kind: 'list', items: [sym('f'), sym('x/y'), kw('a/b')] } },
        {
          key: kw('c'),
          value: {
            kind: 'vector',
            items: ['a', '\n', ' ', '\t', '\r', 'A', '('].map((value) => ({ kind: 'char', value })),
          },
        },
      ],
    });
  });

  it('reads N and M suffixes as exact numbers and -0 as 0', () => {
    expect(stripLoc(read('[42N -7N 1.25M 3M -0 -0.0]'))).toEqual({
      kind: 'vector',
      items: [
        int(42),
        int(-7),
        { kind: 'float', value: 1.25 },
        { kind: 'float', value: 3 },
        int(0),
        { kind: 'float', value: -0 },
      ],
    });
  });

  it('keeps integers at the edge of the safe range exactly', () => {
    expect(stripLoc(read('[9007199254740991 -9007199254740991]'))).toEqual({
      kind: 'vector',
      items: [int(Number.MAX_SAFE_INTEGER), int(-Number.MAX_SAFE_INTEGER)],
    });
  });

  it('decodes string escapes, surrogate pairs and raw newlines', () => {
    expect(stripLoc(read('"tab\\tnl\\nq\\"bs\\\\ \\b\\f\\r \\u00e9 \\uD83D\\uDE00 raw\nline"'))).toEqual(
      str('tab\tnl\nq"bs\\ \b\f\r é 😀 raw\nline'),
    );
  });

  it('reads #inst, #uuid and namespaced keywords', () => {
    expect(
      stripLoc(
        read(
          '[#inst "2026-01-31T12:00:00.123Z" #uuid "3b8e2f52-8a1d-4d3c-9f7e-2a6b1c0d4e5f" :flowgate.viewer/kind]',
        ),
      ),
    ).toEqual({
      kind: 'vector',
      items: [
        { kind: 'tagged', tag: 'inst', value: str('2026-01-31T12:00:00.123Z') },
        { kind: 'tagged', tag: 'uuid', value: str('3b8e2f52-8a1d-4d3c-9f7e-2a6b1c0d4e5f') },
        kw('flowgate.viewer/kind'),
      ],
    });
  });

  it('reads the symbols of the orchestration language', () => {
    const names = [
      '/',
      '+',
      '-',
      '*',
      '<=',
      'not=',
      'nil?',
      'clojure.string/join',
      'json/parse',
      'flow/step',
      '_',
      '&',
      '->x',
      '.x',
      'a.b',
      'x#',
      'k:v',
    ];
    const tree = read(`(${names.join(' ')})`);
    expect(tree.kind === 'list' && tree.items.map((n) => (n.kind === 'symbol' ? n.name : n.kind))).toEqual(
      names,
    );
  });

  it('skips comments, commas and #_ discards (nested ones included)', () => {
    expect(stripLoc(read('; head\n{:a 1, ;; inline\n #_ :skipped #_ #_ 1 2 :b [#_ x 2]}'))).toEqual({
      kind: 'map',
      entries: [
        { key: kw('a'), value: int(1) },
        { key: kw('b'), value: { kind: 'vector', items: [int(2)] } },
      ],
    });
  });

  it('accepts a leading byte-order mark', () => {
    expect(stripLoc(read('\uFEFF{:a 1}'))).toEqual({
      kind: 'map',
      entries: [{ key: kw('a'), value: int(1) }],
    });
  });

  it('reads a quoted :flow body as the list itself (accepted for compatibility)', () => {
    const tree = read("{:slug :x :flow '(flow/input)}");
    expect(tree.kind === 'map' && stripLoc(tree.entries[1]?.value as EdnNode)).toEqual({
      kind: 'list',
      items: [sym('flow/input')],
    });
  });
});

describe('readEdn: positions', () => {
  it('records 1-based line and column of each form, counting CRLF as one break and code points as one column', () => {
    const tree = read('{:a\r\n  [1\n   "😀" :b]}');
    expect(tree.loc).toEqual({ line: 1, column: 1, offset: 0 });
    if (tree.kind !== 'map') throw new Error('map expected');
    const vector = tree.entries[0]?.value;
    expect(vector?.loc).toEqual({ line: 2, column: 3, offset: 7 });
    if (vector?.kind !== 'vector') throw new Error('vector expected');
    expect(vector.items.map((n) => n.loc)).toEqual([
      { line: 2, column: 4, offset: 8 },
      { line: 3, column: 4, offset: 13 },
      { line: 3, column: 8, offset: 18 },
    ]);
  });

  it('treats a lone CR as a line break', () => {
    const result = readEdn('{:a 1\r :b}');
    expect(result.diagnostics[0]).toMatchObject({ code: 'edn_odd_map_entries', line: 2, column: 2 });
  });

  it('reports the path of the container for problems deep inside', () => {
    const result = readEdn('{:interfaces {:mcp [{:tool-name "x" :tool-name "y"}]}}');
    expect(result.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'edn_duplicate_key',
        message: 'duplicate map key :tool-name (first at line 1, column 22)',
        path: ':interfaces :mcp 0',
        line: 1,
        column: 37,
        hint: 'each key may appear once in a map; remove or rename one of them',
      },
    ]);
  });
});

describe('readEdn: strictness against edn-data', () => {
  it('rejects what edn-data accepts silently', () => {
    // edn-data parses these without an error; each is a real problem.
    expect(() => parseEDNString('{:bad ]')).not.toThrow();
    expect(readEdn('{:bad ]').ok).toBe(false);
    // The quote becomes a symbol that takes the list's place as the value, and the list itself is lost.
    expect(parseEDNString("{:flow '(a b)}")).toEqual({ map: [[{ key: 'flow' }, { sym: "'" }]] });
    expect(stripLoc(read("{:flow '(a b)}"))).toEqual({
      kind: 'map',
      entries: [{ key: kw('flow'), value: { kind: 'list', items: [sym('a'), sym('b')] } }],
    });
    expect(readEdn("{:a '(a b)}").diagnostics[0]?.code).toBe('edn_quote_not_allowed');
    expect(parseEDNString('9007199254740993')).toBe(9007199254740992);
    expect(readEdn('9007199254740993').diagnostics[0]?.code).toBe('edn_number_out_of_range');
  });

  it('decodes strings exactly as edn-data does for every escape it supports', () => {
    const literal = '"a\\tb\\nc\\rd\\be\\ff\\\\g\\"h\\u0041\\u00e9\\uD83D\\uDE00 z"';
    expect(stripLoc(read(literal))).toEqual(str(parseEDNString(literal) as string));
  });

  it('counts UTF-8 bytes without Buffer', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', 'a😀é€\n']) {
      expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
    }
  });
});
