/**
 * @flowgate/flows — the flow language's definitions: the strict EDN reader, validation with positioned diagnostics,
 * the flow model, invocations as JSON Schema, the step reference and the example flows.
 */
export type { Diagnostic } from './diagnostics.js';
export { MAX_DEFINITION_BYTES, readEdn } from './edn/reader.js';
export { type EdnList, type EdnNode, type EdnVector, isKeyword, mapGet } from './edn/types.js';
export { EXAMPLE_FLOWS } from './examples/index.js';
export { CORE_FUNCTIONS, SPECIAL_FORMS } from './language.js';
export {
  type FlowModel,
  findInvocation,
  IDENTIFIER_PATTERN,
  INVOCATION_INPUT_TYPES,
  type InvocationInput,
  type RequiresSlot,
} from './model.js';
export { closest } from './reporter.js';
export {
  type InputJsonSchema,
  type InputPropertySchema,
  inputPropertySchema,
  invocationInputSchema,
} from './schema.js';
export {
  isStepType,
  STEP_LIMITS,
  STEP_REFERENCE,
  STEP_TYPES,
  type StepField,
  type StepRule,
  type StepType,
} from './steps.js';
export type { ValidationResult, ValidationSummary } from './validate.js';
export { MAX_VALIDATION_DIAGNOSTICS, validateFlow } from './validate.js';
