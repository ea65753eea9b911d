/**
 * Runs of a workspace's flows: starting one (the definition and interface checked at call time, the input checked
 * against its invocation, nothing stored when anything is off), reading, listing and cancelling. Execution is the
 * worker's (`@flowgate/worker`); this side only queues and reads.
 */
import {
  AppError,
  newId,
  pause,
  QuotaExceeded,
  quotaPeriod,
  type RunStatus,
  type StepStatus,
} from '@flowgate/core';
import { repos } from '@flowgate/db';
import { closest, type FlowModel } from '@flowgate/flows';
import { type JsonValue, storedToJson } from '@flowgate/run-engine';
import { redact } from '@flowgate/secrets';
import { flowUseCases } from '../flows/index.js';
import { endedRunUsage, type SettledRun, type UseCaseContext } from '../scope.js';
import { checkInput, secretInputNames } from './input.js';

export interface RunRecord {
  id: string;
  flowSlug: string;
  installationId: string | null;
  /** The released version that runs; null for a draft run. */
  version: number | null;
  target: 'live' | 'draft';
  toolName: string | null;
  invocation: string;
  status: RunStatus;
  /** The input, with secret-typed inputs and secret-looking values redacted. */
  input: unknown;
  error: { code: string; message: string; stepId?: string } | null;
  resultMimeType: string | null;
  attempts: number;
  usage: { steps: number; httpCalls: number; llmTokens: number };
  cancelRequested: boolean;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  wakeAt: string | null;
}

export interface RunStepRecord {
  stepId: string;
  type: string;
  status: StepStatus;
  attempts: number;
  startedAt: string | null;
  finishedAt: string | null;
  wakeAt: string | null;
  error: { code: string; message: string; stepId?: string } | null;
  /** The step's result as plain JSON, redacted; only when asked for. */
  result?: unknown;
}

export interface RunEventRecord {
  id: number;
  type: string;
  stepId: string | null;
  stepType: string | null;
  status: string | null;
  at: string;
  detail: unknown;
}

export interface RunResult {
  mimeType: string;
  /** JSON for application/json, the text otherwise; redacted. */
  value: unknown;
}

export interface StartRunInput {
  slug: string;
  /** The `:mcp` interface called; its invocation checks the input. Null for a start by invocation. */
  toolName: string | null;
  /** Without a tool name: the invocation (default: `default`, else the first declared). */
  invocation: string | null;
  installationId: string | null;
  /** Default: live (an installation always runs the version it resolves to). */
  target: 'live' | 'draft' | null;
  input: unknown;
  idempotencyKey: string | null;
  /** The caller may see installed flows. */
  includeInstalled: boolean;
  /** The caller may run drafts. */
  allowDraft: boolean;
  /** The caller waits for the run's end: a worker of this process with a free slot may take it at its insert. */
  waits?: boolean;
  /**
   * Told the invocation's secret-typed input names as soon as the invocation is known, before the input is checked:
   * a caller that records the raw input elsewhere (the audit log) redacts them even when the start then fails.
   */
  onSecretInputs?: (names: readonly string[]) => void;
}

export interface RunUseCases {
  /** Queues a run; with an idempotency key already used, returns that run (`created: false`). */
  start(input: StartRunInput): Promise<{ run: RunRecord; created: boolean }>;
  get(runId: string): Promise<RunRecord | null>;
  list(input: {
    limit: number;
    after: string | null;
    status: RunStatus | null;
    flowSlug: string | null;
    /** Only runs the acting principal started. */
    mine?: boolean;
  }): Promise<{ items: RunRecord[]; nextAfter: string | null }>;
  /** Steps in start order; results only when `includeResults`. Null when the run does not exist here. */
  steps(runId: string, options: { limit: number; includeResults: boolean }): Promise<RunStepRecord[] | null>;
  /** One step, with its result only when `includeResult`. Null when the run or the step does not exist here. */
  step(runId: string, stepId: string, options: { includeResult: boolean }): Promise<RunStepRecord | null>;
  events(
    runId: string,
    options: { limit: number; afterId: number | null; stepId: string | null },
  ): Promise<RunEventRecord[] | null>;
  result(runId: string): Promise<RunResult | null>;
  /**
   * Steps that ended (completed or failed) after event `afterId`, in the order their events were written: the event
   * id, step id and status only, never a step's data — what a caller following the run is told (progress.ts of the
   * MCP surface). Empty for a run that does not exist here.
   */
  stepEnds(
    runId: string,
    options: { limit: number; afterId: number | null },
  ): Promise<Array<{ eventId: number; stepId: string; status: 'completed' | 'failed' }>>;
  /** Null when the run does not exist here; a finished run comes back unchanged. */
  cancel(runId: string): Promise<RunRecord | null>;
  /**
   * The run once it ended, or parked (waiting) with no wake time inside the window, or as it is after `timeoutMs` (or
   * when `signal` aborts), with its result when it completed. A short sleep is waited through: a caller who gives 15 s
   * to a flow that sleeps 2 s gets its end. Null when it does not exist here. `after` is the run as its caller just
   * saw it (e.g. the start's answer): a queued or running record saves the first read.
   */
  wait(
    runId: string,
    timeoutMs: number,
    after?: RunRecord,
    signal?: AbortSignal,
  ): Promise<{ run: RunRecord; result: RunResult | null } | null>;
}

/** Live runs one workspace may have at once; a start beyond it is refused. */
export const MAX_LIVE_RUNS_PER_WORKSPACE = 1_000;
/** Whole-life bound of a run, sleeps included (each evaluation has its own, shorter wall-time limit). */
export const DEFAULT_MAX_RUN_DURATION_MS = 24 * 60 * 60 * 1000;

const RUN_ID = /^run_[A-Za-z0-9]{8,40}$/;

/** JSON with object keys sorted, so two equal inputs compare equal whatever order jsonb keeps their keys in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The input as shown: secret-typed inputs replaced, then secret-looking values redacted. */
function shownInput(row: repos.RunRow): unknown {
  const input = row.input;
  if (!row.secretInputs.length || input === null || typeof input !== 'object' || Array.isArray(input)) {
    return redact(input);
  }
  const copy: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const name of row.secretInputs) if (name in copy) copy[name] = '[redacted]';
  return redact(copy);
}

/** The result of a completed run as shown (redacted); null for any other run. */
function resultOf(row: repos.RunRow): RunResult | null {
  if (row.status !== 'completed' || row.resultMime === null) return null;
  return { mimeType: row.resultMime, value: redact(row.result) };
}

function record(row: repos.RunRow): RunRecord {
  const usage = row.usage;
  return {
    id: row.id,
    flowSlug: row.flowSlug,
    installationId: row.installationId,
    version: row.version,
    target: row.target,
    toolName: row.toolName,
    invocation: row.invocation,
    status: row.status,
    input: shownInput(row),
    error: row.error ? redact(row.error) : null,
    resultMimeType: row.resultMime,
    attempts: row.attempts,
    usage: { steps: usage.steps ?? 0, httpCalls: usage.httpCalls ?? 0, llmTokens: usage.llmTokens ?? 0 },
    cancelRequested: row.cancelRequested,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    wakeAt: iso(row.wakeAt),
  };
}

/**
 * A stored run in the domain's terms, as a waiting caller is answered: the worker package maps the runs its workers
 * settle with it, so the run port carries no database row and the redaction rules stay here.
 */
export function settledRunOf(row: repos.RunRow): SettledRun {
  return { workspaceId: row.workspaceId, run: record(row), result: resultOf(row) };
}

function stepRecord(s: repos.RunStepRow, includeResult: boolean): RunStepRecord {
  return {
    stepId: s.stepId,
    type: s.type,
    status: s.status,
    attempts: s.attempts,
    startedAt: iso(s.startedAt),
    finishedAt: iso(s.finishedAt),
    wakeAt: iso(s.wakeAt),
    error: s.error ? redact(s.error) : null,
    ...(includeResult && s.status === 'completed' ? { result: storedToJson(s.result as JsonValue) } : {}),
  };
}

/**
 * The `:concurrency` key of a start: singleton flows share one key per workspace target (own flow target, or the
 * installation); keyed flows add the values of the key inputs. `:on-new-version :coexist` keys each version apart;
 * `:drain` and `:supersede` share the key across versions (a new version waits for the old one; `:supersede` also
 * drops older versions' queued runs).
 */
function concurrencyKey(
  model: FlowModel,
  flowId: string,
  scope: string,
  version: number | null,
  input: Record<string, unknown>,
): string | null {
  const c = model.concurrency;
  if (!c) return null;
  const parts = [flowId, scope];
  if (c.onNewVersion === 'coexist') parts.push(version === null ? 'draft' : `v${version}`);
  if (c.type === 'keyed') parts.push(JSON.stringify((c.key ?? []).map((k) => input[k] ?? null)));
  return parts.join('|');
}

export function runUseCases(ctx: UseCaseContext): RunUseCases {
  const { db, workspaceId } = ctx;
  const flows = flowUseCases(ctx);
  const hooks = ctx.deps.runs;
  const usage = ctx.deps.usage;

  async function own(runId: string): Promise<repos.RunRow | null> {
    return RUN_ID.test(runId) ? repos.getRun(db, workspaceId, runId) : null;
  }

  const didYouMean = (name: string, names: readonly string[]): string => {
    const near = closest(name, names);
    return near === undefined ? '' : ` (did you mean ${near}?)`;
  };
  return {
    async start(input) {
      const open = await flows.open({
        slug: input.slug,
        installationId: input.installationId,
        includeInstalled: input.includeInstalled,
      });
      if (!open)
        throw new AppError(
          'not_found',
          `No flow ${input.slug} in this workspace${input.installationId === null ? await flows.suggestSlug(input.slug) : ''}`,
        );
      const flow = open.record;
      const installation = flow.installation;
      if (installation && input.target === 'draft') {
        throw new AppError(
          'invalid_request',
          'An installed flow runs its released version only; omit target',
        );
      }
      const target = input.target ?? 'live';
      if (target === 'draft' && !input.allowDraft) {
        throw new AppError('forbidden', 'running a draft needs the flows.manage capability');
      }
      if (installation && !installation.enabled) {
        throw new AppError(
          'conflict',
          `Installation ${installation.id} is disabled; a workspace admin must bind its slots and enable it`,
        );
      }
      const definition = await open.definitionFor(target);
      if (!definition) {
        throw new AppError(
          'not_found',
          target === 'draft'
            ? `Flow ${flow.slug} has no draft`
            : `Flow ${flow.slug} has no released version to run${installation ? ' for this installation' : ''}`,
        );
      }
      const model = definition.model;
      let invocation: string;
      if (input.toolName !== null) {
        const iface = model.interfaces.mcp.find((m) => m.toolName === input.toolName);
        if (!iface) {
          const names = model.interfaces.mcp.map((m) => m.toolName);
          throw new AppError(
            'not_found',
            `Flow ${flow.slug} (${target}) has no MCP tool ${input.toolName}${didYouMean(input.toolName, names)}; its tools: ${names.length ? names.join(', ') : 'none'}`,
          );
        }
        invocation = iface.invocation;
      } else {
        const names = model.invocations.map((i) => i.name);
        invocation = input.invocation ?? (names.includes('default') ? 'default' : (names[0] ?? 'default'));
        if (!names.includes(invocation)) {
          throw new AppError(
            'not_found',
            `Flow ${flow.slug} has no invocation ${invocation}; its invocations: ${names.join(', ') || 'none'}`,
          );
        }
      }
      const secretInputs = secretInputNames(model, invocation);
      if (secretInputs.length) input.onSecretInputs?.(secretInputs);
      // A flow without `:requires` slots needs no binding (and no read of them).
      const bindings = model.requires.length ? await open.slotBindings(target) : [];
      const bound = new Set(bindings.filter((b) => b.connection !== null).map((b) => b.slot));
      const unbound = model.requires.map((r) => r.slot).filter((slot) => !bound.has(slot));
      if (unbound.length) {
        throw new AppError(
          'conflict',
          `Flow ${flow.slug} cannot run: slot(s) ${unbound.join(', ')} are not bound to a connection of this workspace`,
        );
      }
      const cacheKey =
        definition.version === null
          ? `draft:${definition.literalSha256}`
          : `${flow.slug}@${definition.version}`;
      const checked = checkInput(
        model,
        invocation,
        input.input,
        `${workspaceId}|${installation?.id ?? ''}|${cacheKey}`,
      );
      const key = concurrencyKey(
        model,
        open.source.flowId,
        installation?.id ?? target,
        definition.version,
        checked,
      );
      // A keyed run must take its key's slot first, which only a claim does.
      const handoff = input.waits && key === null ? (hooks?.handoff?.() ?? null) : null;
      const maxLive = hooks?.maxLiveRuns ?? MAX_LIVE_RUNS_PER_WORKSPACE;
      let outcome:
        | { run: repos.RunRow; created: boolean }
        | repos.LiveRunsCapReached
        | repos.RunsQuotaReached;
      // Every edge starts runs here, so the `runsPerMonth` quota bounds them all (counted in the insert).
      const now = ctx.now();
      try {
        // The cap is counted and held in the insert's own transaction: a count made here first could be overrun.
        outcome = await repos.createRun(
          db,
          workspaceId,
          {
            id: newId('run', 20),
            flowId: open.source.flowId,
            flowSlug: flow.slug,
            definitionWorkspaceId: open.source.workspaceId,
            installationId: installation?.id ?? null,
            version: definition.version,
            target,
            draftLiteral: definition.version === null ? definition.literal : null,
            toolName: input.toolName,
            invocation,
            input: checked,
            secretInputs,
            concurrencyKey: key,
            principalType: ctx.actor.kind,
            principalId: ctx.actor.id,
            idempotencyKey: input.idempotencyKey,
            deadlineAt: new Date(
              ctx.now().getTime() + (hooks?.maxRunDurationMs ?? DEFAULT_MAX_RUN_DURATION_MS),
            ),
          },
          handoff ? { owner: handoff.owner, leaseMs: handoff.leaseMs } : undefined,
          { maxLive, runsQuotaPeriod: quotaPeriod('runsPerMonth', now) },
        );
      } catch (error) {
        handoff?.release();
        throw error;
      }
      if ('quotaReached' in outcome) {
        handoff?.release();
        throw new QuotaExceeded('runsPerMonth', outcome.limit, now);
      }
      if ('capReached' in outcome) {
        handoff?.release();
        throw new AppError(
          'conflict',
          `this workspace has ${maxLive} runs queued, running or waiting (its cap); wait for some to finish`,
        );
      }
      const { run, created } = outcome;
      if (created && handoff) handoff.take(run);
      else handoff?.release();
      if (!created) {
        // A retry must be the same call; a reused key on a different one would silently answer with a run the
        // caller did not ask for.
        const same =
          run.flowSlug === flow.slug &&
          run.installationId === (installation?.id ?? null) &&
          run.target === target &&
          run.invocation === invocation &&
          run.toolName === input.toolName &&
          canonical(run.input) === canonical(checked);
        if (!same) {
          throw new AppError(
            'conflict',
            'this idempotency key was already used for a different call (flow, tool, target or input differ); use a new key',
          );
        }
      }
      if (created) {
        usage?.runStarted({ workspaceId, flowSlug: flow.slug });
        if (key !== null && model.concurrency?.onNewVersion === 'supersede' && definition.version !== null) {
          const superseded = await repos.supersedeQueuedRuns(db, workspaceId, key, definition.version);
          // Queued runs of this flow: ended before a worker had them, so nothing was used.
          for (const _ of superseded) {
            usage?.runEnded({
              workspaceId,
              flowSlug: flow.slug,
              status: 'cancelled',
              steps: 0,
              httpCalls: 0,
              llmTokens: 0,
            });
          }
        }
        // A run handed off is running already: no worker needs waking.
        if (!handoff) hooks?.queued();
      }
      return { run: record(run), created };
    },

    async get(runId) {
      const row = await own(runId);
      return row ? record(row) : null;
    },

    async list({ limit, after, status, flowSlug, mine }) {
      let before: { createdAt: string; id: string } | undefined;
      if (after !== null) {
        const parsed = JSON.parse(after) as { createdAt?: unknown; id?: unknown };
        if (typeof parsed.createdAt !== 'string' || typeof parsed.id !== 'string') {
          throw new AppError(
            'invalid_cursor',
            'Cursor is no longer valid; omit it to start from the first page',
          );
        }
        before = { createdAt: parsed.createdAt, id: parsed.id };
      }
      const rows = await repos.listRuns(db, workspaceId, {
        limit: limit + 1,
        before,
        status: status ?? undefined,
        flowSlug: flowSlug ?? undefined,
        principal: mine ? { type: ctx.actor.kind, id: ctx.actor.id } : undefined,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: page.map(record),
        nextAfter:
          rows.length > limit && last ? JSON.stringify({ createdAt: last.position, id: last.id }) : null,
      };
    },

    async step(runId, stepId, { includeResult }) {
      if (!(await own(runId))) return null;
      const row = await repos.getRunStep(db, workspaceId, runId, stepId);
      return row ? stepRecord(row, includeResult) : null;
    },

    async steps(runId, { limit, includeResults }) {
      if (!(await own(runId))) return null;
      const rows = await repos.listRunSteps(db, workspaceId, runId, { limit });
      return rows.map((s) => stepRecord(s, includeResults));
    },

    async events(runId, { limit, afterId, stepId }) {
      if (!(await own(runId))) return null;
      const rows = await repos.listRunEvents(db, workspaceId, runId, {
        limit,
        afterId: afterId ?? undefined,
        stepId: stepId ?? undefined,
      });
      return rows.map((e) => ({
        id: e.id,
        type: e.type,
        stepId: e.stepId,
        stepType: e.stepType,
        status: e.status,
        at: e.at.toISOString(),
        detail: redact(e.detail),
      }));
    },

    async result(runId) {
      const row = await own(runId);
      return row ? resultOf(row) : null;
    },

    async stepEnds(runId, { limit, afterId }) {
      if (!RUN_ID.test(runId)) return [];
      // Scoped by workspace in the statement itself: another workspace's run id reads nothing.
      const rows = await repos.listRunStepEnds(db, workspaceId, runId, { limit, afterId });
      return rows.flatMap((e) =>
        e.stepId !== null && (e.status === 'completed' || e.status === 'failed')
          ? [{ eventId: e.id, stepId: e.stepId, status: e.status }]
          : [],
      );
    },

    async wait(runId, timeoutMs, after, signal) {
      const until = Date.now() + Math.max(0, timeoutMs);
      // Worth waiting on: it runs, or it sleeps until a time inside the window (a worker wakes it then).
      const live = (run: { status: RunStatus; wakeAt: string | null }) =>
        run.status === 'queued' ||
        run.status === 'running' ||
        (run.status === 'waiting' && run.wakeAt !== null && new Date(run.wakeAt).getTime() < until);
      const read = async () => {
        const row = await own(runId);
        return row ? settledRunOf(row) : null;
      };
      let seen: SettledRun | null = null;
      if (!(after && after.id === runId && live(after))) {
        seen = await read();
        if (!seen) return null;
      }
      while (seen === null || live(seen.run)) {
        const left = until - Date.now();
        if (left <= 0 || signal?.aborted) break;
        // Notified by the worker that ran it; a slow poll covers a missed notification.
        let settled: SettledRun | null = null;
        if (hooks?.settled) settled = await hooks.settled(runId, Math.min(left, 1_000), signal);
        else await pause(Math.min(left, 50), { signals: [signal] });
        // The run as the in-process worker left it spares the read (same run, same workspace: tenancy holds).
        seen =
          settled && settled.run.id === runId && settled.workspaceId === workspaceId ? settled : await read();
        if (!seen) return null;
      }
      seen ??= await read();
      return seen ? { run: seen.run, result: seen.result } : null;
    },

    async cancel(runId) {
      if (!RUN_ID.test(runId)) return null;
      const outcome = await repos.cancelRun(db, workspaceId, runId);
      if (!outcome) return null;
      if (outcome.ended && outcome.run.status === 'cancelled') {
        usage?.runEnded(endedRunUsage({ ...outcome.run, status: 'cancelled' }));
      }
      if (outcome.stopping) hooks?.cancelRequested(runId);
      // Cancelled while queued or asleep: no worker ends it, so no worker tells its followers.
      else if (outcome.run.status === 'cancelled') hooks?.ended?.(runId);
      if (outcome.freedSlot) hooks?.queued();
      return record(outcome.run);
    },
  };
}
