import { type FlowModel, findInvocation, type InvocationInput, type InvocationInputType } from './model.js';

/**
 * Invocation inputs → the JSON Schema of a tool input (docs/flows.md, "Definition"). Flow-authored text (labels,
 * descriptions, defaults) is untrusted (docs/flows.md, "Metadata safety") and appears only with `trusted: true`. Names,
 * types and select options are the contract itself and always appear; they are bounded by the model (identifiers;
 * options ≤ 200 characters). String-like inputs carry a maximum length so every value an agent can send is bounded.
 */
export interface InputPropertySchema {
  type?: 'string' | 'number' | 'integer' | 'boolean';
  format?: 'email' | 'uri' | 'date' | 'date-time';
  enum?: string[];
  maxLength?: number;
  writeOnly?: true;
  title?: string;
  description?: string;
  default?: string | number | boolean;
}

export interface InputJsonSchema {
  type: 'object';
  properties: Record<string, InputPropertySchema>;
  required: string[];
  additionalProperties: false;
}

export interface SchemaOptions {
  /** Include flow-authored labels, descriptions and defaults (installer or admin opt-in). */
  trusted: boolean;
}

export const INPUT_MAX_LENGTH: Readonly<Record<'string' | 'text' | 'email' | 'url' | 'secret', number>> = {
  string: 4096,
  text: 65_536,
  email: 254,
  url: 2048,
  secret: 8192,
};

function baseSchema(type: InvocationInputType, options: string[] | undefined): InputPropertySchema {
  switch (type) {
    case 'string':
    case 'text':
      return { type: 'string', maxLength: INPUT_MAX_LENGTH[type] };
    case 'email':
      return { type: 'string', format: 'email', maxLength: INPUT_MAX_LENGTH.email };
    case 'url':
      return { type: 'string', format: 'uri', maxLength: INPUT_MAX_LENGTH.url };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'datetime':
      return { type: 'string', format: 'date-time' };
    case 'number':
      return { type: 'number' };
    case 'integer':
      return { type: 'integer' };
    case 'boolean':
      return { type: 'boolean' };
    case 'json':
      return {};
    case 'select':
      return { type: 'string', enum: [...(options ?? [])] };
    case 'secret':
      return { type: 'string', writeOnly: true, maxLength: INPUT_MAX_LENGTH.secret };
  }
}

export function inputPropertySchema(input: InvocationInput, options: SchemaOptions): InputPropertySchema {
  const schema = baseSchema(input.type, input.options);
  if (options.trusted) {
    if (input.label !== undefined) schema.title = input.label;
    if (input.description !== undefined) schema.description = input.description;
    if (input.default !== undefined && input.type !== 'secret') schema.default = input.default;
  }
  return schema;
}

/** The input schema of one invocation, or undefined when the flow has no invocation of that name. */
export function invocationInputSchema(
  model: FlowModel,
  invocationName: string,
  options: SchemaOptions = { trusted: false },
): InputJsonSchema | undefined {
  const invocation = findInvocation(model, invocationName);
  if (!invocation) return undefined;
  const properties: Record<string, InputPropertySchema> = {};
  const required: string[] = [];
  for (const input of invocation.inputs) {
    properties[input.name] = inputPropertySchema(input, options);
    if (input.required) required.push(input.name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}
