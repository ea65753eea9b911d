import { isAppError } from '@flowgate/core';
import { parseEDNString } from 'edn-data';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readEdn } from './reader.js';
import { type EdnNode, stripLoc } from './types.js';
import { compact, writeEdn } from './writer.js';

function reread(text: string): EdnNode {
  const result = readEdn(text);
  if (!result.ok)
    throw new Error(`written text did not read back: ${text}\n${JSON.stringify(result.diagnostics)}`);
  return stripLoc(result.value);
}

const keywordName = fc.stringMatching(/^[a-z][a-z0-9?!*-]{0,8}(\/[a-z][a-z0-9-]{0,5})?$/);
const symbolName = fc.oneof(
  fc.constantFrom(
    'x',
    '+',
    '-',
    '/',
    '<=',
    'not=',
    'nil?',
    'clojure.string/join',
    'flow/step',
    '_',
    '&',
    'a.b',
    '->x',
  ),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/).filter((s) => !['nil', 'true', 'false'].includes(s)),
);
const text = fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => !s.includes('\u0000'));
const oneChar = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((s) => s !== '\u0000');

function tree(withFloatsAndChars: boolean): fc.Arbitrary<EdnNode> {
  const atoms: fc.Arbitrary<EdnNode>[] = [
    fc.constant<EdnNode>({ kind: 'nil' }),
    fc.boolean().map((value): EdnNode => ({ kind: 'boolean', value })),
    fc.maxSafeInteger().map((value): EdnNode => ({ kind: 'int', value: value === 0 ? 0 : value })),
    text.map((value): EdnNode => ({ kind: 'string', value })),
    keywordName.map((name): EdnNode => ({ kind: 'keyword', name })),
    symbolName.map((name): EdnNode => ({ kind: 'symbol', name })),
  ];
  if (withFloatsAndChars) {
    atoms.push(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((value): EdnNode => ({ kind: 'float', value })),
      oneChar.map((value): EdnNode => ({ kind: 'char', value })),
      fc.constantFrom<EdnNode>(
        { kind: 'tagged', tag: 'inst', value: { kind: 'string', value: '2026-01-31T12:00:00Z' } },
        {
          kind: 'tagged',
          tag: 'uuid',
          value: { kind: 'string', value: '3b8e2f52-8a1d-4d3c-9f7e-2a6b1c0d4e5f' },
        },
      ),
    );
  }
  const { node } = fc.letrec<{ node: EdnNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      ...atoms,
      fc.array(tie('node'), { maxLength: 4 }).map((items): EdnNode => ({ kind: 'list', items })),
      fc.array(tie('node'), { maxLength: 4 }).map((items): EdnNode => ({ kind: 'vector', items })),
      fc
        .uniqueArray(tie('node'), { maxLength: 4, selector: compact })
        .map((items): EdnNode => ({ kind: 'set', items })),
      fc
        .uniqueArray(fc.tuple(tie('node'), tie('node')), { maxLength: 4, selector: ([k]) => compact(k) })
        .map((pairs): EdnNode => ({ kind: 'map', entries: pairs.map(([key, value]) => ({ key, value })) })),
    ),
  }));
  return node;
}

/** The same tree in edn-data's own representation, to use edn-data as an independent reader. */
function toEdnData(node: EdnNode): unknown {
  switch (node.kind) {
    case 'nil':
      return null;
    case 'boolean':
    case 'int':
    case 'string':
      return node.value;
    case 'keyword':
      return { key: node.name };
    case 'symbol':
      return { sym: node.name };
    case 'list':
      return { list: node.items.map(toEdnData) };
    case 'vector':
      return node.items.map(toEdnData);
    case 'set':
      return { set: node.items.map(toEdnData) };
    case 'map':
      return { map: node.entries.map((e) => [toEdnData(e.key), toEdnData(e.value)]) };
    default:
      throw new Error(`not compared: ${node.kind}`);
  }
}

describe('writeEdn', () => {
  it('round-trips any tree, compact and pretty', () => {
    fc.assert(
      fc.property(tree(true), fc.integer({ min: 20, max: 120 }), (node, width) => {
        expect(reread(writeEdn(node))).toEqual(node);
        expect(reread(writeEdn(node, { pretty: true, width }))).toEqual(node);
      }),
      { numRuns: 400 },
    );
  });

  it('writes text that edn-data reads as the same values', () => {
    fc.assert(
      fc.property(tree(false), (node) => {
        expect(parseEDNString(writeEdn(node))).toEqual(toEdnData(node));
      }),
      { numRuns: 300 },
    );
  });

  it('is canonical: the written form of a read tree is a fixed point', () => {
    const text =
      '{:a [1 2.0 -0.0 1e21 \\space "x\\ty"] , :b #{:c} :d (f #_ skipped x) :e #inst "2026-01-31T12:00:00Z"}';
    const once = writeEdn(reread(text));
    expect(once).toBe(
      '{:a [1 2.0 -0.0 1e+21 \\space "x\\ty"] :b #{:c} :d (f x) :e #inst "2026-01-31T12:00:00Z"}',
    );
    expect(writeEdn(reread(once))).toBe(once);
  });

  it('lays out long forms with stable indentation', () => {
    const text =
      '{:slug :demo :flow (let [input (flow/input) resp (flow/step :http :lookup {:connection :crm :path "/companies" :query {:domain (:domain input)}})] (flow/step :function :shape {:code (fn [r] (get r :body)) :input resp}))}';
    expect(writeEdn(reread(text), { pretty: true, width: 60 })).toBe(
      [
        '{:slug :demo',
        ' :flow (let [input (flow/input)',
        '             resp (flow/step :http :lookup',
        '                    {:connection :crm',
        '                     :path "/companies"',
        '                     :query {:domain (:domain input)}})]',
        '         (flow/step :function :shape',
        '           {:code (fn [r] (get r :body)) :input resp}))}',
      ].join('\n'),
    );
  });

  it('refuses trees the reader could not have produced', () => {
    const bad: EdnNode[] = [
      { kind: 'keyword', name: 'has space' },
      { kind: 'keyword', name: '' },
      { kind: 'symbol', name: 'nil' },
      { kind: 'symbol', name: '1abc' },
      { kind: 'int', value: 2 ** 53 },
      { kind: 'int', value: 1.5 },
      { kind: 'float', value: Number.NaN },
      { kind: 'float', value: Number.POSITIVE_INFINITY },
      { kind: 'string', value: 'nul\u0000' },
      { kind: 'string', value: 'lone \uD800' },
      { kind: 'char', value: 'ab' },
      { kind: 'char', value: '\u0000' },
    ];
    for (const node of bad) {
      let error: unknown;
      try {
        writeEdn({ kind: 'vector', items: [node] });
      } catch (e) {
        error = e;
      }
      expect(isAppError(error) && error.code, JSON.stringify(node)).toBe('validation_failed');
    }
  });
});
