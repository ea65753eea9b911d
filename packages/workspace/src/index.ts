/**
 * @flowgate/workspace — a workspace's domain and the one way to its data: service accounts and keys, connections
 * (management, health checks), policy, flows (search, lookup of own and installed flows, definitions, drafts,
 * releases, bindings, readiness), installations, runs, feedback, the audit log, the metadata trust decision and its
 * review, console sign-in sessions, and the operator's workspace creation and listing (`openOperator`). Mutations
 * record their audit events through the recorder a workspace is opened with. Built on the database, secrets and flow
 * packages; the MCP surface and the admin API both call it.
 */

export {
  type AuditDescription,
  type AuditEvent,
  type AuditOutcome,
  type AuditRecorder,
  type AuditScope,
  audited,
} from './audit.js';
export {
  AUDIT_OUTCOMES,
  type AuditEntryOutcome,
  type AuditEntryRecord,
  type AuditLogUseCases,
  type AuditQuery,
} from './audit-log.js';
export { FIXED_HEADER_LIMITS, RESERVED_HEADER_NAMES } from './connections/headers.js';
export type {
  ConnectionCheck,
  ConnectionChecks,
  ConnectionRemoval,
  ConnectionSummary,
  ConnectionUsageRecord,
  ConnectionUseCases,
} from './connections/index.js';
export type {
  ConnectionAdminUseCases,
  ConnectionAuthInput,
  ConnectionChange,
  ConnectionRecord,
  NewConnection,
} from './connections/manage.js';
export {
  type ConsoleSessionKind,
  type ConsoleSessionRecord,
  type ConsoleSessions,
  consoleSessions,
  hashConsoleSecret,
} from './console-sessions.js';
export {
  FEEDBACK_AREAS,
  type FeedbackArea,
  type FeedbackInput,
  type FeedbackLogUseCases,
  type FeedbackPosition,
  type FeedbackReceipt,
  type FeedbackRecord,
} from './feedback.js';
export type { DraftOutcome, ReleaseOutcome } from './flows/authoring.js';
export type { FlowUseCases, OpenFlow } from './flows/index.js';
export {
  type BindingTarget,
  type FlowAdminUseCases,
  type FlowDetailRecord,
  type FlowSummaryRecord,
  type FlowVersionRecord,
  MAX_FLOWS_PER_WORKSPACE,
  MAX_VERSIONS_PER_FLOW,
} from './flows/manage.js';
export {
  READINESS_CHECKS,
  type Readiness,
  type ReadinessCheck,
  type ReadinessCheckName,
  type ReadinessSlot,
  type ReadinessStep,
} from './flows/readiness.js';
export {
  FLOW_SOURCES,
  type FlowDefinitionRecord,
  type FlowInstallationRecord,
  type FlowRecord,
  type FlowSelector,
  type FlowSource,
  type FlowToolHitRecord,
  type Page,
  type SlotBindingRecord,
} from './flows/records.js';
export type { TrustReview } from './flows/review.js';
export type { FlowTemplate } from './flows/templates.js';
export type {
  InstallationChange,
  InstallationRecord,
  InstallationResolution,
  InstallationUseCases,
  NewInstallation,
  VersionPolicy,
} from './installations.js';
export { type Operator, type OperatorScope, openOperator, type WorkspaceRecord } from './operator.js';
export type { PolicyChange, PolicyRecord, PolicyUseCases } from './policy.js';
export type { QuotaStanding, QuotaUseCases } from './quotas.js';
export {
  DEFAULT_MAX_RUN_DURATION_MS,
  MAX_LIVE_RUNS_PER_WORKSPACE,
  type RunEventRecord,
  type RunRecord,
  type RunResult,
  type RunStepRecord,
  type RunUseCases,
  type StartRunInput,
  settledRunOf,
} from './runs/index.js';
export {
  type Actor,
  type ChangeListener,
  type EndedRunUsage,
  endedRunUsage,
  type HandedOffRun,
  type McpCheck,
  type McpCheckResult,
  type McpCheckTarget,
  type RunHandoff,
  type RunHooks,
  type RunUsageHooks,
  type SettledRun,
  type WorkspaceDeps,
  type WorkspaceScope,
} from './scope.js';
export type {
  ApiKeyRecord,
  IssuedKey,
  ServiceAccountRecord,
  ServiceAccountStatus,
  ServiceAccountUseCases,
} from './service-accounts.js';
export {
  isTrusted,
  type MetadataTrust,
  metadataTrust,
  type OptIn,
  type TrustDecision,
  trustFor,
  type UntrustedReason,
} from './trust.js';
export {
  MAX_HOURLY_SPAN_DAYS,
  MAX_USAGE_GROUPS,
  MAX_USAGE_SPAN_DAYS,
  MAX_USAGE_WORKSPACES,
  quantileMs,
  USAGE_GRANULARITIES,
  USAGE_GROUPS,
  USAGE_OTHER_GROUP,
  USAGE_OUTCOMES,
  USAGE_UNKNOWN_CLIENT,
  type UsageGranularity,
  type UsageGroupBy,
  type UsageOutcome,
  type UsagePoint,
  type UsageQuery,
  type UsageSeries,
  type UsageUseCases,
  type WorkspaceUsage,
} from './usage/index.js';
export { openWorkspace, type Workspace } from './workspace.js';
