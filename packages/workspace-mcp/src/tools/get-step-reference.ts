import { STEP_REFERENCE, STEP_TYPES, type StepField, type StepRule } from '@flowgate/flows';
import { z } from 'zod';
import { readOnlyFlowAnnotations } from '../args.js';
import { defineTool } from '../tool.js';

function ruleText(rule: StepRule): string {
  const list = (names: readonly string[]) => names.map((n) => `:${n}`).join(', ');
  switch (rule.kind) {
    case 'exactly-one':
      return `exactly one of ${list(rule.fields)}`;
    case 'at-most-one':
      return `at most one of ${list(rule.fields)}`;
    case 'required-when':
      return `:${rule.field} is required when :${rule.when.field} is ${list(rule.when.values)}`;
    case 'only-when':
      return `:${rule.field} is allowed only when :${rule.when.field} is ${list(rule.when.values)}`;
  }
}

function fieldView(f: StepField) {
  const c = f.check;
  return {
    name: f.name,
    type: f.type,
    required: f.required,
    description: f.description,
    default: f.default ?? null,
    allowedValues: c.kind === 'enum' ? [...c.values] : null,
    range: c.kind === 'integer' || c.kind === 'number' ? { min: c.min, max: c.max } : null,
    maxLength: c.kind === 'string' ? (c.maxLength ?? null) : null,
  };
}

export const getStepReferenceTool = defineTool({
  name: 'get_step_reference',
  title: 'Get step reference',
  description:
    'Reference for one step type of the flow language, the data the validator checks against: usage, config ' +
    'fields (type, required, default, allowed values), rules between fields, result shape, notes, example flows ' +
    'that validate and runtime limits. Call it before writing (flow/step :type :id {…}) instead of guessing fields.',
  toolsets: ['read', 'authoring'],
  capabilities: ['steps.read'],
  input: z.strictObject({
    step_type: z.enum(STEP_TYPES).describe('Step type without the colon.'),
  }),
  output: z.strictObject({
    type: z.enum(STEP_TYPES),
    title: z.string(),
    summary: z.string(),
    usage: z.string(),
    fields: z.array(
      z.strictObject({
        name: z.string(),
        type: z.string(),
        required: z.boolean(),
        description: z.string(),
        default: z.string().nullable(),
        allowedValues: z.array(z.string()).nullable(),
        range: z.strictObject({ min: z.number(), max: z.number() }).nullable(),
        maxLength: z.number().int().nullable(),
      }),
    ),
    rules: z.array(z.string()),
    result: z.string(),
    notes: z.array(z.string()),
    examples: z.array(z.strictObject({ title: z.string(), flowLiteral: z.string() })),
    limits: z.array(
      z.strictObject({ name: z.string(), value: z.union([z.number(), z.string()]), description: z.string() }),
    ),
    otherStepTypes: z.array(z.string()),
  }),
  annotations: readOnlyFlowAnnotations,
})
  // The step reference is product-authored data from @flowgate/flows, the same the validator checks against.
  .handle(async (args) => {
    const ref = STEP_REFERENCE[args.step_type];
    return {
      output: {
        type: ref.type,
        title: ref.title,
        summary: ref.summary,
        usage: ref.usage,
        fields: ref.fields.map(fieldView),
        rules: ref.rules.map(ruleText),
        result: ref.result,
        notes: [...ref.notes],
        examples: ref.examples.map((e) => ({ title: e.title, flowLiteral: e.flow })),
        limits: ref.limits.map((l) => ({ name: l.name, value: l.value, description: l.description })),
        otherStepTypes: STEP_TYPES.filter((t) => t !== ref.type),
      },
    };
  });
