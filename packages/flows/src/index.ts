export {
  type Diagnostic,
  type DiagnosticCode,
  type ReaderCode,
  type Severity,
  type ValidationCode,
  READER_CODES,
  VALIDATION_CODES,
  hasErrors,
} from './diagnostics.js';
export { MAX_DEFINITION_BYTES, MAX_DEPTH, type ReadResult, readEdn } from './edn/reader.js';
export { type WriteOptions, writeEdn } from './edn/writer.js';
export {
  type EdnKeyword,
  type EdnList,
  type EdnMap,
  type EdnMapEntry,
  type EdnNode,
  type EdnSymbol,
  type EdnVector,
  type Loc,
  isKeyword,
  isSymbol,
  mapGet,
  stripLoc,
} from './edn/types.js';
export {
  CONNECTION_TYPES,
  type FlowModel,
  type FlowStepSummary,
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
  ednNodeSchema,
  findInvocation,
  flowModelSchema,
} from './model.js';
export { CORE_FUNCTIONS, FLOW_OPERATIONS, SPECIAL_FORMS, TRANSFORM_FUNCTIONS } from './language.js';
export { MAX_VALIDATION_DIAGNOSTICS, type ValidationResult, validateFlow } from './validate.js';
export {
  type FieldCheck,
  STEP_LIMITS,
  STEP_REFERENCE,
  STEP_TYPES,
  type StepExample,
  type StepField,
  type StepLimit,
  type StepReference,
  type StepRule,
  type StepType,
  isStepType,
  stepReference,
} from './steps.js';
export {
  INPUT_MAX_LENGTH,
  type InputJsonSchema,
  type InputPropertySchema,
  type SchemaOptions,
  invocationInputSchema,
} from './schema.js';
export { EXAMPLE_FLOWS } from './examples/index.js';
