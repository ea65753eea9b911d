/**
 * Whether a flow target can run, without running it or calling outside systems: the definition validates and
 * declares an invocation (and an MCP interface), every `:requires` slot is bound to an existing, enabled connection
 * whose last known health is good, the remote tools the flow names exist on the MCP servers bound to it (as their
 * last check listed them), a released version exists for the live target, and an installation is enabled.
 */
import { type FlowModel, validateFlow } from '@flowgate/flows';
import { mcpToolNeeds } from './mcp-needs.js';
import type { FlowDefinitionRecord, FlowRecord, SlotBindingRecord } from './records.js';

export const READINESS_CHECKS = [
  'definition_valid',
  'invocation_present',
  'mcp_interface_present',
  'connection_slots_bound',
  'connections_healthy',
  'mcp_tools_available',
  'live_version_released',
  'installation_enabled',
] as const;
export type ReadinessCheckName = (typeof READINESS_CHECKS)[number];

export interface ReadinessCheck {
  check: ReadinessCheckName;
  status: 'pass' | 'fail' | 'warn' | 'skip';
  message: string;
}

export type SlotState = 'unbound' | 'missing_connection' | 'disabled' | 'healthy' | 'unhealthy' | 'unchecked';

export interface ReadinessSlot {
  slot: string;
  type: string;
  /**
   * Which binding a run of the checked target uses for the slot: the flow's `live` one, the draft's own (`draft`; a
   * draft without one uses live), the installation's, or none.
   */
  boundFor: SlotBindingRecord['boundFor'] | null;
  connectionId: string | null;
  connectionName: string | null;
  state: SlotState;
  lastCheckedAt: string | null;
}

/** What to do about a failed or doubtful check, in the order found; callers word it for their audience. */
export type ReadinessStep =
  | 'save_draft'
  | 'ask_publisher_for_release'
  | 'fix_validation_errors'
  | 'add_invocation'
  | 'bind_installation_slots'
  | 'bind_flow_slots'
  | 'fix_unhealthy_connections'
  | 'check_unchecked_connections'
  | 'check_mcp_tools'
  | 'enable_installation'
  | 'release_draft';

export interface Readiness {
  flowSlug: string;
  installationId: string | null;
  target: 'live' | 'draft';
  /** The target whose definition and bindings were checked: the draft when live was asked but never released. */
  checkedTarget: 'live' | 'draft';
  /** The version checked, null when the draft was checked. */
  version: number | null;
  ready: boolean;
  checks: ReadinessCheck[];
  slots: ReadinessSlot[];
  diagnostics: { errors: number; warnings: number };
  nextSteps: ReadinessStep[];
}

function slotState(binding: SlotBindingRecord | undefined): SlotState {
  if (!binding) return 'unbound';
  const c = binding.connection;
  if (!c) return 'missing_connection';
  if (c.status === 'disabled') return 'disabled';
  if (!c.health) return 'unchecked';
  return c.health.ok ? 'healthy' : 'unhealthy';
}

function skipped(message: string): ReadinessCheck {
  return { check: 'mcp_tools_available', status: 'skip', message };
}

/**
 * The tools a flow names on each MCP slot against the names the bound server listed at its last check. Slots that are
 * unbound, disabled or not bound to an mcp-server are left to the other checks.
 */
function mcpToolsCheck(
  model: FlowModel,
  bound: Map<string, SlotBindingRecord>,
  nextSteps: ReadinessStep[],
): ReadinessCheck {
  const needs = mcpToolNeeds(model.flow);
  if (needs.size === 0) return skipped('the flow names no MCP tools');
  const missing: string[] = [];
  const beyondStored: string[] = [];
  const unknown: string[] = [];
  let compared = 0;
  for (const [slot, names] of [...needs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const c = bound.get(slot)?.connection;
    // Unhealthy is connections_healthy's to report; its tool list is unknown either way.
    if (c?.type !== 'mcp-server' || c.status === 'disabled' || c.health?.ok === false) continue;
    const listed = c.health?.mcp;
    if (!listed) {
      unknown.push(slot);
      continue;
    }
    compared++;
    const has = new Set(listed.tools);
    const absent = [...names].filter((n) => !has.has(n));
    if (absent.length === 0) continue;
    // Only the first stored names are kept: a name past them may exist, so it is doubtful, not missing.
    if (listed.toolCount > listed.tools.length)
      beyondStored.push(`${slot} (${c.name}): ${absent.join(', ')}`);
    else missing.push(`${slot} (${c.name}) lacks ${absent.join(', ')}`);
  }
  if (missing.length) {
    nextSteps.push('check_mcp_tools');
    return {
      check: 'mcp_tools_available',
      status: 'fail',
      message: `missing MCP tools: ${missing.join('; ')}`,
    };
  }
  if (unknown.length || beyondStored.length) {
    if (unknown.length && !nextSteps.includes('check_unchecked_connections')) {
      nextSteps.push('check_unchecked_connections');
    }
    const parts = [
      ...(unknown.length ? [`tools never listed (check the connection): ${unknown.join(', ')}`] : []),
      ...(beyondStored.length ? [`not among the stored tool names: ${beyondStored.join('; ')}`] : []),
    ];
    return { check: 'mcp_tools_available', status: 'warn', message: parts.join('; ') };
  }
  if (compared === 0) return skipped('no bound, enabled and healthy mcp-server to compare with');
  return {
    check: 'mcp_tools_available',
    status: 'pass',
    message: 'the bound MCP server(s) listed every tool the flow names',
  };
}

/** Readiness of one target; `definition` and `bindings` are the checked target's (see `checkedTarget`). */
export async function evaluateReadiness(
  flow: FlowRecord,
  target: 'live' | 'draft',
  load: {
    definition(target: 'live' | 'draft'): Promise<FlowDefinitionRecord | null>;
    bindings(target: 'live' | 'draft'): Promise<SlotBindingRecord[]>;
  },
): Promise<Readiness> {
  const installationId = flow.installation?.id ?? null;
  const checks: ReadinessCheck[] = [];
  const nextSteps: ReadinessStep[] = [];
  const liveMissing = !flow.installation && target === 'live' && flow.liveVersion === null;
  // Live without a release: judge the draft that would be released, and fail the release check.
  const checkedTarget: 'live' | 'draft' = liveMissing ? 'draft' : target;
  const definition = liveMissing && !flow.hasDraft ? null : await load.definition(checkedTarget);

  let errors = 0;
  let warnings = 0;
  let model: FlowModel | undefined;
  if (!definition) {
    checks.push({
      check: 'definition_valid',
      status: 'fail',
      message: `No ${checkedTarget === 'draft' ? 'draft' : 'released'} definition to check`,
    });
    nextSteps.push(flow.installation ? 'ask_publisher_for_release' : 'save_draft');
  } else {
    const validation = validateFlow(definition.literal);
    ({ errors, warnings } = validation.summary);
    model = validation.model ?? definition.model;
    const label = definition.version === null ? 'the draft' : `version ${definition.version}`;
    checks.push(
      validation.valid
        ? {
            check: 'definition_valid',
            status: 'pass',
            message: `${label} validates${warnings ? ` with ${warnings} warning(s)` : ''}`,
          }
        : {
            check: 'definition_valid',
            status: 'fail',
            message: `${label} has ${errors} validation error(s)`,
          },
    );
    if (!validation.valid) nextSteps.push('fix_validation_errors');
  }

  if (model) {
    checks.push(
      model.invocations.length > 0
        ? {
            check: 'invocation_present',
            status: 'pass',
            message: `invocations: ${model.invocations.map((i) => i.name).join(', ')}`,
          }
        : { check: 'invocation_present', status: 'fail', message: 'the definition declares no :invocations' },
    );
    if (model.invocations.length === 0) nextSteps.push('add_invocation');
    checks.push(
      model.interfaces.mcp.length > 0
        ? {
            check: 'mcp_interface_present',
            status: 'pass',
            message: `MCP tools: ${model.interfaces.mcp.map((m) => m.toolName).join(', ')}`,
          }
        : {
            check: 'mcp_interface_present',
            status: 'warn',
            message: 'no :interfaces :mcp entry: agents cannot find or call this flow as a tool',
          },
    );
  } else {
    checks.push({ check: 'invocation_present', status: 'skip', message: 'no definition to inspect' });
    checks.push({ check: 'mcp_interface_present', status: 'skip', message: 'no definition to inspect' });
  }

  const slots: ReadinessSlot[] = [];
  const required = model?.requires ?? [];
  let bindings: Promise<Map<string, SlotBindingRecord>> | undefined;
  const bySlot = () => {
    bindings ??= load.bindings(checkedTarget).then((list) => new Map(list.map((b) => [b.slot, b])));
    return bindings;
  };
  if (required.length === 0) {
    const status = model ? 'pass' : 'skip';
    const message = model ? 'the flow requires no connections' : 'no definition to inspect';
    checks.push({ check: 'connection_slots_bound', status, message });
    checks.push({ check: 'connections_healthy', status, message });
  } else {
    const bound = await bySlot();
    for (const r of required) {
      const b = bound.get(r.slot);
      slots.push({
        slot: r.slot,
        type: r.type,
        boundFor: b?.boundFor ?? null,
        connectionId: b?.connection?.id ?? null,
        connectionName: b?.connection?.name ?? null,
        state: slotState(b),
        lastCheckedAt: b?.connection?.health?.checkedAt ?? null,
      });
    }
    const unbound = slots.filter((s) => s.state === 'unbound' || s.state === 'missing_connection');
    checks.push(
      unbound.length === 0
        ? {
            check: 'connection_slots_bound',
            status: 'pass',
            message: `all ${slots.length} slot(s) are bound`,
          }
        : {
            check: 'connection_slots_bound',
            status: 'fail',
            message: `unbound slot(s): ${unbound.map((s) => s.slot).join(', ')}`,
          },
    );
    if (unbound.length) nextSteps.push(flow.installation ? 'bind_installation_slots' : 'bind_flow_slots');
    const bad = slots.filter((s) => s.state === 'disabled' || s.state === 'unhealthy');
    const unchecked = slots.filter((s) => s.state === 'unchecked');
    if (bad.length) {
      checks.push({
        check: 'connections_healthy',
        status: 'fail',
        message: bad.map((s) => `${s.slot}: ${s.state}`).join(', '),
      });
      nextSteps.push('fix_unhealthy_connections');
    } else if (unchecked.length) {
      checks.push({
        check: 'connections_healthy',
        status: 'warn',
        message: `never checked: ${unchecked.map((s) => s.slot).join(', ')}`,
      });
      nextSteps.push('check_unchecked_connections');
    } else {
      const none = unbound.length === slots.length;
      checks.push({
        check: 'connections_healthy',
        status: none ? 'skip' : 'pass',
        message: none ? 'no bound connections' : 'bound connections were healthy when last checked',
      });
    }
  }

  checks.push(model ? mcpToolsCheck(model, await bySlot(), nextSteps) : skipped('no definition to inspect'));

  if (flow.installation) {
    const active = flow.installation.activeVersion;
    checks.push({
      check: 'live_version_released',
      status: active !== null ? 'pass' : 'fail',
      message:
        active !== null
          ? `the installation runs version ${active}`
          : 'the source flow has no released version this installation may run',
    });
    checks.push({
      check: 'installation_enabled',
      status: flow.installation.enabled ? 'pass' : 'fail',
      message: flow.installation.enabled ? 'the installation is enabled' : 'the installation is disabled',
    });
    if (!flow.installation.enabled) nextSteps.push('enable_installation');
  } else if (target === 'live') {
    checks.push(
      flow.liveVersion !== null
        ? { check: 'live_version_released', status: 'pass', message: `live is version ${flow.liveVersion}` }
        : { check: 'live_version_released', status: 'fail', message: 'no version has been released' },
    );
    if (flow.liveVersion === null) nextSteps.push('release_draft');
  } else {
    checks.push({ check: 'live_version_released', status: 'skip', message: 'the draft target was checked' });
  }

  return {
    flowSlug: flow.slug,
    installationId,
    target,
    checkedTarget,
    version: liveMissing ? null : (definition?.version ?? null),
    ready: checks.every((c) => c.status !== 'fail'),
    checks,
    slots,
    diagnostics: { errors, warnings },
    nextSteps,
  };
}
