import { STEP_REFERENCE, STEP_TYPES, type StepField, type StepRule } from '@flowgate/flows';
import type { getStepReferenceTool } from '../catalog.js';
import type { ToolHandler } from './types.js';

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

/** The step reference is product-authored data from @flowgate/flows, the same the validator checks against. */
export const getStepReference: ToolHandler<typeof getStepReferenceTool> = async (args) => {
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
};
