/**
 * A run's input checked against its invocation before anything is stored: the same JSON Schema an agent reads in the
 * tool descriptor (`invocationInputSchema`), so what is advertised is what is enforced. Schemas are compiled once per
 * (definition, invocation).
 */
import { AppError, type ErrorIssue, utf8Length } from '@flowgate/core';
import { type FlowModel, invocationInputSchema } from '@flowgate/flows';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** Largest input accepted, as JSON. */
export const MAX_INPUT_BYTES = 1024 * 1024;

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv, ['email', 'uri', 'date', 'date-time']);

const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 2000;

function validatorFor(cacheKey: string, model: FlowModel, invocation: string): ValidateFunction | null {
  const hit = compiled.get(cacheKey);
  if (hit) return hit;
  const schema = invocationInputSchema(model, invocation);
  if (!schema) return null;
  const validate = ajv.compile(schema);
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(cacheKey, validate);
  return validate;
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

function pathOf(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra) parts.push(extra);
  return parts.length ? parts.join('.') : '(input)';
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
  const validate = validatorFor(`${cacheKey}#${invocation}`, model, invocation);
  if (!validate) {
    throw new AppError('not_found', `the flow declares no invocation ${invocation}`);
  }
  if (validate(input)) return JSON.parse(text) as Record<string, unknown>;
  const issues: ErrorIssue[] = (validate.errors ?? []).slice(0, 20).map((e) => {
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required')
      return { path: pathOf(e.instancePath, String(params.missingProperty)), message: 'is required' };
    if (e.keyword === 'additionalProperties') {
      return {
        path: pathOf(e.instancePath, String(params.additionalProperty)),
        message: 'is not an input of this invocation',
      };
    }
    if (e.keyword === 'enum') {
      return {
        path: pathOf(e.instancePath),
        message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    }
    return { path: pathOf(e.instancePath), message: e.message ?? 'is invalid' };
  });
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
