/**
 * A run's input checked against its invocation before anything is stored: the same JSON Schema an agent reads in the
 * tool descriptor (`invocationInputSchema`), so what is advertised is what is enforced. Schemas are built once per
 * (definition, invocation).
 */
import { AppError, utf8Length } from '@flowgate/core';
import { type FlowModel, type InputJsonSchema, invocationInputSchema } from '@flowgate/flows';
import { inputIssues } from './input-check.js';

/** Largest input accepted, as JSON. */
export const MAX_INPUT_BYTES = 1024 * 1024;

const schemas = new Map<string, InputJsonSchema>();
const MAX_SCHEMAS = 2000;

function schemaFor(cacheKey: string, model: FlowModel, invocation: string): InputJsonSchema | null {
  const hit = schemas.get(cacheKey);
  if (hit) return hit;
  const schema = invocationInputSchema(model, invocation);
  if (!schema) return null;
  if (schemas.size >= MAX_SCHEMAS) schemas.delete(schemas.keys().next().value as string);
  schemas.set(cacheKey, schema);
  return schema;
}

// Postgres stores neither NUL nor lone surrogates in jsonb: such input could never be kept.
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what the check looks for.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path of the first string (value or key) the database could not store, or null; bounded by the input size. */
function firstUnstorable(value: unknown, path: string, depth = 0): string | null {
  if (depth > 64) return null;
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = firstUnstorable(value[i], path ? `${path}.${i}` : String(i), depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${k}` : k;
      if (UNSTORABLE.test(k)) return here;
      const found = firstUnstorable(v, here, depth + 1);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * The input as a plain JSON object that satisfies the invocation, or a `validation_failed` error listing every
 * failing path. `cacheKey` names the definition (a released version, or a draft's digest) and the invocation.
 */
export function checkInput(
  model: FlowModel,
  invocation: string,
  input: unknown,
  cacheKey: string,
): Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new AppError('validation_failed', 'input must be a JSON object', [
      { path: '(input)', message: 'must be an object' },
    ]);
  }
  const unstorable = firstUnstorable(input, '');
  if (unstorable !== null) {
    throw new AppError(
      'validation_failed',
      'input text must not contain NUL or unpaired surrogate characters',
      [
        {
          path: unstorable || '(input)',
          message: 'must not contain NUL (\\u0000) or unpaired surrogate characters',
        },
      ],
    );
  }
  const text = JSON.stringify(input);
  if (utf8Length(text) > MAX_INPUT_BYTES) {
    throw new AppError('validation_failed', `input is larger than ${MAX_INPUT_BYTES} bytes`, [
      { path: '(input)', message: `at most ${MAX_INPUT_BYTES} bytes of JSON` },
    ]);
  }
  const schema = schemaFor(`${cacheKey}#${invocation}`, model, invocation);
  if (!schema) {
    throw new AppError('not_found', `the flow declares no invocation ${invocation}`);
  }
  const issues = inputIssues(schema, input as Record<string, unknown>).slice(0, 20);
  if (issues.length === 0) return JSON.parse(text) as Record<string, unknown>;
  throw new AppError(
    'validation_failed',
    `input does not match the invocation: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
    issues,
  );
}

/** Names of the invocation's secret-typed inputs: their values are redacted wherever the run shows its input. */
export function secretInputNames(model: FlowModel, invocation: string): string[] {
  const inv = model.invocations.find((i) => i.name === invocation);
  return inv ? inv.inputs.filter((i) => i.type === 'secret').map((i) => i.name) : [];
}
