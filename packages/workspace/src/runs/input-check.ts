import type { ErrorIssue } from '@flowgate/core';
import type { InputJsonSchema, InputPropertySchema } from '@flowgate/flows';
import { fullFormats } from 'ajv-formats/dist/formats.js';

/**
 * Checks a run's input against its invocation's JSON Schema by walking it, with no generated code: JSON Schema
 * compilers build validators with `new Function`, which Workers forbid. The schema is the small, closed shape
 * `invocationInputSchema` writes (one object of typed scalar properties; docs/flows.md), so walking it is cheap.
 * The formats are ajv-formats' own definitions and the issues read as a JSON Schema validator's; `input-check.test.ts`
 * holds both against Ajv on generated schemas and inputs.
 */

type Format = NonNullable<InputPropertySchema['format']>;

/** The four definitions we use, as ajv-formats defines them (its export is typed as a union of every shape). */
const defined = fullFormats as unknown as {
  email: RegExp;
  uri: (value: string) => boolean;
  date: { validate: (value: string) => boolean };
  'date-time': { validate: (value: string) => boolean };
};

const FORMATS: Record<Format, (value: string) => boolean> = {
  email: (value) => defined.email.test(value),
  uri: (value) => defined.uri(value),
  date: (value) => defined.date.validate(value),
  'date-time': (value) => defined['date-time'].validate(value),
};

/** Length in code points, as JSON Schema counts `maxLength` (a surrogate pair is one character). */
function codePoints(value: string): number {
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    length++;
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return length;
}

function typeHolds(type: NonNullable<InputPropertySchema['type']>, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
  }
}

function propertyIssues(name: string, schema: InputPropertySchema, value: unknown): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  if (schema.type !== undefined && !typeHolds(schema.type, value)) {
    issues.push({ path: name, message: `must be ${schema.type}` });
  } else if (typeof value === 'string') {
    if (schema.maxLength !== undefined && codePoints(value) > schema.maxLength)
      issues.push({ path: name, message: `must NOT have more than ${schema.maxLength} characters` });
    if (schema.format !== undefined && !FORMATS[schema.format](value))
      issues.push({ path: name, message: `must match format "${schema.format}"` });
  }
  if (schema.enum !== undefined && !schema.enum.some((option) => option === value))
    issues.push({
      path: name,
      message: `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`,
    });
  return issues;
}

/** Every way `input` (a plain JSON object) fails the schema, in the order a validator reports them. */
export function inputIssues(schema: InputJsonSchema, input: Record<string, unknown>): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  for (const name of schema.required)
    if (!Object.hasOwn(input, name)) issues.push({ path: name, message: 'is required' });
  for (const name of Object.keys(input))
    if (!Object.hasOwn(schema.properties, name))
      issues.push({ path: name, message: 'is not an input of this invocation' });
  for (const [name, property] of Object.entries(schema.properties))
    if (Object.hasOwn(input, name)) issues.push(...propertyIssues(name, property, input[name]));
  return issues;
}
