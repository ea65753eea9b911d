export {
  fromBase64,
  fromHex,
  toBase64,
  toBase64Url,
  toHex,
  utf8Bytes,
  utf8Length,
  utf8Text,
} from './bytes.js';
export { CONNECTION_TYPES, type ConnectionType } from './connections.js';
export {
  type BytesLike,
  hkdfSha256,
  hmacSha256,
  hmacSha256With,
  type NativeSha256,
  randomBytes,
  randomUuid,
  sha1Hex,
  sha256,
  sha256Hex,
  timingSafeEqual,
  timingSafeEqualText,
  useNativeSha256,
} from './crypto.js';
export { type Deadline, deadlineSignal } from './deadline.js';
export type { AppErrorOptions, ErrorCode, ErrorIssue } from './errors.js';
export { AppError, isAppError, statusForCode } from './errors.js';
export {
  FLOW_SLUG_PATTERN,
  INSTALLATION_ID_PATTERN,
  newId,
  randomBase62,
  TOOL_NAME_PATTERN,
  WORKSPACE_ID_PATTERN,
  workspaceIdSchema,
} from './ids.js';
export { pause } from './pause.js';
export {
  isQuotaExceeded,
  NO_QUOTAS,
  QUOTA_MAX,
  QUOTA_NAMES,
  QuotaExceeded,
  type QuotaExceededDetails,
  type QuotaLimits,
  type QuotaName,
  type QuotaPeriod,
  quotaPeriod,
} from './quotas.js';
export {
  FINAL_RUN_STATUSES,
  type FinalRunStatus,
  isFinalRunStatus,
  isLiveRunStatus,
  LIVE_RUN_STATUSES,
  type LiveRunStatus,
  RUN_STATUSES,
  type RunStatus,
  STEP_STATUSES,
  type StepStatus,
} from './runs.js';
export { zodIssues } from './zod.js';
