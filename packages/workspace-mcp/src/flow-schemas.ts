/**
 * Output shapes of the flow tools and flow resources. Flow-authored text only ever appears inside an `authored`
 * object (null unless trusted) or a `flowLiteral` marked `contentTrust: "flow_authored_untrusted"`, so a reader —
 * human or test — can see at a glance where untrusted text may sit (spec 7.5).
 */
import { z } from 'zod';

/** Which trust decision applies to a flow's authored text in model-facing metadata. */
export const FLOW_AUTHORED_METADATA = [
  'omitted_untrusted',
  'trusted_installer_opt_in',
  'trusted_workspace_admin_opt_in',
  'trusted_product_template',
] as const;
export type FlowAuthoredMetadata = (typeof FLOW_AUTHORED_METADATA)[number];

export const metadataSafetySchema = z.strictObject({
  flowAuthoredMetadata: z.enum(FLOW_AUTHORED_METADATA),
  /** Fixed, server-authored text explaining the decision. */
  note: z.string(),
});
export type MetadataSafety = z.infer<typeof metadataSafetySchema>;

/** Marks returned source code: the agent asked for it, but it is data written by the flow's author. */
export const CONTENT_TRUST = 'flow_authored_untrusted' as const;

export const installedFlowsSchema = z.enum(['included', 'omitted_missing_installations_read']);

const versionsSchema = z.strictObject({
  hasDraft: z.boolean(),
  latestVersion: z.number().int().nullable(),
  liveVersion: z.number().int().nullable(),
});

const installationSchema = z.strictObject({
  id: z.string(),
  sourceWorkspaceId: z.string(),
  versionPolicy: z.enum(['pinned', 'track-latest']),
  pinnedVersion: z.number().int().nullable(),
  activeVersion: z.number().int().nullable(),
  enabled: z.boolean(),
});

export const flowEntrySchema = z.strictObject({
  flowSlug: z.string(),
  origin: z.enum(['workspace', 'installed']),
  installationId: z.string().nullable(),
  resourceUri: z.string(),
  versions: versionsSchema,
  installation: installationSchema.nullable(),
  isPublic: z.boolean(),
  mcpTools: z.array(z.strictObject({ toolName: z.string(), resourceUri: z.string() })),
  metadataSafety: metadataSafetySchema,
  /** The flow's own name, description and tags: null unless a trust decision applies. */
  authored: z
    .strictObject({
      name: z.string().nullable(),
      description: z.string().nullable(),
      tags: z.array(z.string()),
    })
    .nullable(),
});
export type FlowEntry = z.infer<typeof flowEntrySchema>;

export const templateEntrySchema = z.strictObject({
  templateId: z.string(),
  flowSlug: z.string(),
  origin: z.literal('template'),
  name: z.string().nullable(),
  description: z.string().nullable(),
  tags: z.array(z.string()),
  mcpToolNames: z.array(z.string()),
  stepTypes: z.array(z.string()),
  requires: z.array(z.strictObject({ slot: z.string(), type: z.string() })),
  metadataSafety: metadataSafetySchema,
  /** Complete EDN definition to start from; save it with create_flow_draft after adapting it. */
  flowLiteral: z.string(),
});
export type TemplateEntry = z.infer<typeof templateEntrySchema>;

export const flowToolEntrySchema = z.strictObject({
  flowSlug: z.string(),
  toolName: z.string(),
  installationId: z.string().nullable(),
  source: z.enum(['live', 'draft']),
  resourceUri: z.string(),
  metadataSafety: metadataSafetySchema,
  authored: z.strictObject({ title: z.string().nullable(), description: z.string().nullable() }).nullable(),
});
export type FlowToolEntry = z.infer<typeof flowToolEntrySchema>;

export const READINESS_CHECKS = [
  'definition_valid',
  'invocation_present',
  'mcp_interface_present',
  'connection_slots_bound',
  'connections_healthy',
  'live_version_released',
  'installation_enabled',
] as const;

export const readinessCheckSchema = z.strictObject({
  check: z.enum(READINESS_CHECKS),
  status: z.enum(['pass', 'fail', 'warn', 'skip']),
  message: z.string(),
});
export type ReadinessCheck = z.infer<typeof readinessCheckSchema>;

export const readinessSlotSchema = z.strictObject({
  slot: z.string(),
  type: z.string(),
  connectionId: z.string().nullable(),
  connectionName: z.string().nullable(),
  state: z.enum(['unbound', 'missing_connection', 'disabled', 'healthy', 'unhealthy', 'unchecked']),
  lastCheckedAt: z.string().nullable(),
});

export const readinessReportSchema = z.strictObject({
  flowSlug: z.string(),
  installationId: z.string().nullable(),
  target: z.enum(['live', 'draft']),
  /** The version checked, null when the draft was checked. */
  version: z.number().int().nullable(),
  ready: z.boolean(),
  checks: z.array(readinessCheckSchema),
  slots: z.array(readinessSlotSchema),
  diagnostics: z.strictObject({ errors: z.number().int(), warnings: z.number().int() }),
  nextSteps: z.array(z.string()),
  resourceUri: z.string(),
});
export type ReadinessReport = z.infer<typeof readinessReportSchema>;

export const flowToolDescriptorSchema = z.strictObject({
  flowSlug: z.string(),
  toolName: z.string(),
  installationId: z.string().nullable(),
  resourceUri: z.string(),
  flowResourceUri: z.string(),
  /** The definition this descriptor describes: live (released; installations: their active version) or draft. */
  target: z.enum(['live', 'draft']),
  version: z.number().int().nullable(),
  invocation: z.string(),
  /** JSON Schema of the tool input, built from the invocation; authored titles/descriptions/defaults only if trusted. */
  inputSchema: z.record(z.string(), z.unknown()),
  readiness: z.strictObject({
    ready: z.boolean(),
    failedChecks: z.array(z.enum(READINESS_CHECKS)),
    summary: z.string(),
  }),
  metadataSafety: metadataSafetySchema,
  authored: z
    .strictObject({
      title: z.string().nullable(),
      description: z.string().nullable(),
      invocationLabel: z.string().nullable(),
    })
    .nullable(),
});
export type FlowToolDescriptor = z.infer<typeof flowToolDescriptorSchema>;

export const diagnosticSchema = z.strictObject({
  severity: z.enum(['error', 'warning']),
  code: z.string(),
  message: z.string(),
  path: z.string(),
  line: z.number().int().nullable(),
  column: z.number().int().nullable(),
  hint: z.string(),
});

export const flowDefinitionOutputSchema = z.strictObject({
  flowSlug: z.string(),
  installationId: z.string().nullable(),
  /** The source asked for (null when a version was asked for). */
  source: z.enum(['draft', 'latest', 'live', 'active']).nullable(),
  /** The resolved version, null for the draft. */
  version: z.number().int().nullable(),
  flowLiteral: z.string(),
  contentTrust: z.literal(CONTENT_TRUST),
  contentNote: z.string(),
  sizeBytes: z.number().int(),
  updatedAt: z.string(),
  releaseNote: z.string().nullable(),
  resourceUri: z.string(),
});
export type FlowDefinitionOutput = z.infer<typeof flowDefinitionOutputSchema>;
