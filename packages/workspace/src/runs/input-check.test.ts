import type { ErrorIssue } from '@flowgate/core';
import {
  INVOCATION_INPUT_TYPES,
  type InputJsonSchema,
  type InvocationInput,
  inputPropertySchema,
} from '@flowgate/flows';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inputIssues } from './input-check.js';

/** The reference: Ajv compiling the same schema, its errors mapped as run input errors were before (Node only). */
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv, ['email', 'uri', 'date', 'date-time']);

function pathOf(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (extra) parts.push(extra);
  return parts.join('.');
}

function ajvIssues(schema: InputJsonSchema, input: Record<string, unknown>): ErrorIssue[] {
  const validate = ajv.compile(schema);
  if (validate(input)) return [];
  return (validate.errors ?? []).map((e) => {
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required')
      return { path: pathOf(e.instancePath, String(params.missingProperty)), message: 'is required' };
    if (e.keyword === 'additionalProperties')
      return {
        path: pathOf(e.instancePath, String(params.additionalProperty)),
        message: 'is not an input of this invocation',
      };
    if (e.keyword === 'enum')
      return {
        path: pathOf(e.instancePath),
        message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    return { path: pathOf(e.instancePath), message: e.message ?? 'is invalid' };
  });
}

const NAMES = ['a', 'b', 'c', 'd', 'e'];

const inputSpec = fc.record({
  name: fc.constantFrom(...NAMES),
  type: fc.constantFrom(...INVOCATION_INPUT_TYPES),
  required: fc.boolean(),
  options: fc.uniqueArray(fc.constantFrom('red', 'green', 'x:1', 'a/b'), { minLength: 1, maxLength: 3 }),
});

/** Values near each type's edges: valid and invalid formats, lengths around the caps, wrong types. */
const value = fc.oneof(
  fc.constantFrom(
    'red',
    'x:1',
    'someone@example.com',
    'not an email',
    'https://example.com/a?b=c',
    'relative/path',
    '2026-02-28',
    '2026-02-30',
    '2026-11-27T10:00:00Z',
    '2026-11-27 10:00',
    '😀'.repeat(254),
    'a'.repeat(255),
    'a'.repeat(4097),
    '',
  ),
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.constantFrom('k'), fc.integer()),
);

const schemaOf = (specs: Array<InvocationInput & { required: boolean }>): InputJsonSchema => {
  const properties: InputJsonSchema['properties'] = {};
  const required: string[] = [];
  for (const spec of specs) {
    properties[spec.name] = inputPropertySchema(spec, { trusted: false });
    if (spec.required) required.push(spec.name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
};

describe('inputIssues', () => {
  it('reports exactly what Ajv reports, in the same order, for every invocation schema shape', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(inputSpec, { selector: (s) => s.name, maxLength: 5 }),
        fc.dictionary(fc.constantFrom(...NAMES, 'extra'), value, { maxKeys: 6 }),
        (specs, input) => {
          const schema = schemaOf(specs as Array<InvocationInput & { required: boolean }>);
          expect(inputIssues(schema, input)).toEqual(ajvIssues(schema, input));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('names each failure', () => {
    const schema = schemaOf([
      { name: 'to', type: 'email', required: true },
      { name: 'n', type: 'integer', required: true },
      { name: 'color', type: 'select', options: ['red', 'green'], required: false },
    ] as Array<InvocationInput & { required: boolean }>);
    expect(inputIssues(schema, { n: 1.5, color: 'blue', other: 1 })).toEqual([
      { path: 'to', message: 'is required' },
      { path: 'other', message: 'is not an input of this invocation' },
      { path: 'n', message: 'must be integer' },
      { path: 'color', message: 'must be one of "red", "green"' },
    ]);
    expect(inputIssues(schema, { to: 'a@b.co', n: 2 })).toEqual([]);
  });
});
