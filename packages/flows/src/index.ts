export {
  type Diagnostic,
  type DiagnosticCode,
  hasErrors,
  READER_CODES,
  type ReaderCode,
  type Severity,
  VALIDATION_CODES,
  type ValidationCode,
} from './diagnostics.js';
export { MAX_DEFINITION_BYTES, MAX_DEPTH, type ReadResult, readEdn } from './edn/reader.js';
export {
  type EdnKeyword,
  type EdnList,
  type EdnMap,
  type EdnMapEntry,
  type EdnNode,
  type EdnSymbol,
  type EdnVector,
  isKeyword,
  isSymbol,
  type Loc,
  mapGet,
  stripLoc,
} from './edn/types.js';
export { type WriteOptions, writeEdn } from './edn/writer.js';
export { EXAMPLE_FLOWS } from './examples/index.js';
export { CORE_FUNCTIONS, FLOW_OPERATIONS, SPECIAL_FORMS, TRANSFORM_FUNCTIONS } from './language.js';
export {
  CONNECTION_TYPES,
  ednNodeSchema,
  type FlowModel,
  type FlowStepSummary,
  findInvocation,
  flowModelSchema,
  IDENTIFIER_PATTERN,
  INTERFACE_KINDS,
  INVOCATION_INPUT_TYPES,
  type InterfaceEntry,
  type Invocation,
  type InvocationInput,
  type InvocationInputType,
  type McpInterface,
  MODEL_LIMITS,
  type RequiresSlot,
} from './model.js';
export {
  INPUT_MAX_LENGTH,
  type InputJsonSchema,
  type InputPropertySchema,
  invocationInputSchema,
  type SchemaOptions,
} from './schema.js';
export {
  type FieldCheck,
  isStepType,
  STEP_LIMITS,
  STEP_REFERENCE,
  STEP_TYPES,
  type StepExample,
  type StepField,
  type StepLimit,
  type StepReference,
  type StepRule,
  type StepType,
  stepReference,
} from './steps.js';
export { MAX_VALIDATION_DIAGNOSTICS, type ValidationResult, validateFlow } from './validate.js';
