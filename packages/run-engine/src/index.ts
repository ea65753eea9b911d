/**
 * @flowgate/run-engine — the run engine's self-contained core: the interpreter of flow bodies with
 * replay, the step executors, results and redaction. The durable queue and worker build on this:
 *
 *   const outcome = await runBody(model, input, {
 *     steps: createStepRunner({ connections, kv }),
 *     journal,                               // step id → JournalEntry from earlier attempts
 *     record: (stepId, entry) => saveJournalEntry(runId, stepId, entry),   // awaited before the body goes on
 *     onEvent: (event) => appendEvent(runId, event),                       // redacted, bounded
 *     usage, knownSecrets, signal, deadline,
 *   });
 *   // outcome.status: completed (result with MIME type) | waiting (wakeAt) | failed | timed-out | cancelled
 */
export { isRunError, RUN_ERROR_CODES, RunError, type RunErrorCode, type RunErrorJson } from './errors.js';
export { type RunBodyOptions, type RunOutcome, runBody } from './interpreter.js';
export { DEFAULT_RUN_LIMITS, emptyUsage, type RunLimits, type RunUsage } from './limits.js';
export type {
  ExternalStepType,
  JournalEntry,
  StepContext,
  StepEvent,
  StepEventType,
  StepOutcome,
  StepRequest,
  StepRunner,
  UsageMeter,
} from './ports.js';
export { MAX_EVENT_DETAIL_CHARS } from './redact.js';
export {
  DEFAULT_PREVIEW_CHARS,
  type RenderedResult,
  textualMimeType,
  VIEWER_KIND,
  VIEWER_MIME_TYPE,
  VIEWER_VALUE,
} from './results.js';
export type {
  ConnectionPurpose,
  ConnectionResolver,
  KvStore,
  LlmQuota,
  ResolvedConnection,
} from './steps/common.js';
export { type GuardedFetchOptions, guardedFetch } from './steps/fetch.js';
export { createStepRunner, type StepRunnerOptions } from './steps/index.js';
export type {
  McpConnectOptions,
  McpConnector,
  McpSession,
  RemoteServerInfo,
  RemoteTool,
  RemoteToolResult,
} from './steps/mcp-port.js';
export {
  AddressRefusedError,
  checkHost,
  guardedLookup,
  isBlockedAddress,
  type Resolver,
  systemResolver,
} from './steps/net.js';
export { storedToJson } from './stored.js';
export {
  Fn,
  fromJson,
  type JsonValue,
  Keyword,
  List,
  Sym,
  toJson,
  type Value,
  Vec,
  VMap,
  VSet,
} from './values.js';
