/** The readiness report of check_flow_readiness and release_flow: the shape, and the steps that would make it ready. */
import { READINESS_CHECKS, type Readiness, type ReadinessStep } from '@flowgate/workspace';
import { z } from 'zod';
import { flowUri } from './uris.js';

export const readinessCheckSchema = z.strictObject({
  check: z.enum(READINESS_CHECKS),
  status: z.enum(['pass', 'fail', 'warn', 'skip']),
  message: z.string(),
});
export type ReadinessCheck = z.infer<typeof readinessCheckSchema>;

export const readinessSlotSchema = z.strictObject({
  slot: z.string(),
  type: z.string(),
  /** Which binding a run uses: live, the draft's own (a draft falls back to live per slot), the installation's. */
  boundFor: z.enum(['live', 'draft', 'installation']).nullable(),
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

function stepText(step: ReadinessStep, readiness: Readiness): string {
  switch (step) {
    case 'save_draft':
      return 'Save a draft with create_flow_draft.';
    case 'ask_publisher_for_release':
      return 'The source of this installation has no released version it may run; ask its publisher.';
    case 'fix_validation_errors':
      return 'Call validate_flow_definition and fix every error diagnostic.';
    case 'add_invocation':
      return 'Add an :invocations entry describing the input.';
    case 'bind_installation_slots':
      return 'Ask a workspace admin to bind the installation slots to connections of this workspace.';
    case 'bind_flow_slots':
      return readiness.checkedTarget === 'draft'
        ? `Ask a workspace admin to bind the unbound slots (PUT …/flows/${readiness.flowSlug}/bindings, target live, or target draft to bind them for draft runs only); a draft run uses its own binding for a slot, else the live one; list_connections shows candidates.`
        : `Ask a workspace admin to bind the live slots (PUT …/flows/${readiness.flowSlug}/bindings); list_connections shows candidates.`;
    case 'fix_unhealthy_connections':
      return 'Call check_connections on the bound connections and fix them before running.';
    case 'check_unchecked_connections':
      return 'Call check_connections to check the bound connections now.';
    case 'check_mcp_tools':
      return 'Use only tools the bound MCP server lists (:tool of :mcp steps, :allow of :llm :tools): fix the names, or bind a server that has them; check_connections refreshes the list.';
    case 'enable_installation':
      return 'Ask a workspace admin to configure and enable the installation.';
    case 'release_draft':
      return 'After approval, release the draft with release_flow.';
  }
}

export function readinessOutput(readiness: Readiness): ReadinessReport {
  return {
    flowSlug: readiness.flowSlug,
    installationId: readiness.installationId,
    target: readiness.target,
    version: readiness.version,
    ready: readiness.ready,
    checks: readiness.checks.map((c) => ({ ...c })),
    slots: readiness.slots.map((s) => ({ ...s })),
    diagnostics: { ...readiness.diagnostics },
    nextSteps: readiness.nextSteps.map((step) => stepText(step, readiness)),
    resourceUri: flowUri(readiness.flowSlug, readiness.installationId),
  };
}
