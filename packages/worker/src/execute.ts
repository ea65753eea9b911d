/**
 * Where a run is executed: one attempt of one claimed run. The definition it runs is read (a released version, or the
 * draft snapshot taken at start), its connections and key-value store are built for its workspace, the journal of
 * earlier attempts is loaded, and the body is evaluated by the run engine, every journal entry and event written
 * under the run's lease before the body goes on. The attempt ends by finishing the run (completed, failed, timed
 * out, cancelled) or parking it (a durable sleep), unless the lease was lost or the worker is stopping: then nothing
 * more is written and the run is resumed elsewhere by replay.
 */
import { type Database, repos } from '@flowgate/db';
import { type FlowModel, validateFlow } from '@flowgate/flows';
import {
  createStepRunner,
  type JournalEntry,
  type JsonValue,
  type McpConnector,
  RunError,
  type RunLimits,
  type RunOutcome,
  runBody,
  type StepEvent,
} from '@flowgate/run-engine';
import type { SecretBox } from '@flowgate/secrets';
import { traceHeaders } from '@flowgate/telemetry';
import { type RunConnections, runConnections, workspaceKv, workspaceLlmQuota } from './ports.js';
import { tracedSteps } from './telemetry.js';

export interface ExecuteDeps {
  db: Database;
  secretBox: SecretBox;
  /** Steps may reach loopback and private addresses: development and tests only. */
  allowPrivateNetwork: boolean;
  limits: Partial<RunLimits>;
  /** A run claimed more often than this fails instead of being tried again (e.g. a body that crashes workers). */
  maxAttempts: number;
  /** NOTIFY channel told the run's id by the statement that ends an attempt (callers waiting elsewhere). */
  endedChannel?: string;
  /** NOTIFY channel told the run's id by each mid-attempt write of events (listen streams following the run). */
  eventsChannel?: string;
  /** Opens sessions with remote MCP servers; without it :mcp steps and :llm :tools fail with connection_unavailable. */
  mcp?: McpConnector;
  /** The clock of quota periods (tests inject one). */
  now?: () => Date;
}

/** Why a worker stopped an attempt on its own: the attempt's writes end, the run itself does not. */
export class AttemptAbandoned extends Error {
  constructor(readonly why: 'lease_lost' | 'shutdown') {
    super(why === 'lease_lost' ? 'the run lease was lost' : 'the worker is stopping');
    this.name = 'AttemptAbandoned';
  }
}

export type AttemptResult =
  | { kind: 'finished'; status: RunOutcome['status']; freedSlot: boolean; run: repos.RunRow }
  /** Nothing more was written: another worker holds the run, or it ended meanwhile. */
  | { kind: 'abandoned'; why: 'lease_lost' | 'shutdown' };

const noConnections: RunConnections = {
  knownSecrets: [],
  resolver: {
    async resolve(slot) {
      throw new RunError('connection_unavailable', `no connection is bound to :${slot} for this run`);
    },
  },
};

/** Bounded previews in final events: the full result is in the run row. */
const EVENT_PREVIEW_CHARS = 500;

/** Released versions never change, so their models are kept per process (bounded, oldest dropped first). */
const VERSION_MODELS_MAX = 256;
const versionModels = new Map<string, FlowModel>();

async function modelOf(db: Database, run: repos.RunRow): Promise<FlowModel | null> {
  if (run.version !== null) {
    const key = `${run.definitionWorkspaceId}|${run.flowId}|${run.version}`;
    const cached = versionModels.get(key);
    if (cached) return cached;
    const model = await repos.getVersionModel(db, run.definitionWorkspaceId, run.flowId, run.version);
    if (model) {
      if (versionModels.size >= VERSION_MODELS_MAX)
        versionModels.delete(versionModels.keys().next().value as string);
      versionModels.set(key, model);
    }
    return model;
  }
  if (run.draftLiteral === null) return null;
  return validateFlow(run.draftLiteral).model ?? null;
}

async function journalOf(db: Database, run: repos.RunRow): Promise<Map<string, JournalEntry>> {
  const journal = new Map<string, JournalEntry>();
  // Each claim counts an attempt, so the first one has nothing journaled yet.
  if (run.attempts <= 1) return journal;
  const entries = await repos.loadJournal(db, run.workspaceId, run.id);
  for (const e of entries) {
    const type = e.type as JournalEntry['type'];
    if (e.status === 'completed')
      journal.set(e.stepId, { status: 'completed', type, result: e.result as JsonValue });
    else if (e.wakeAt) journal.set(e.stepId, { status: 'waiting', type, wakeAt: e.wakeAt.getTime() });
  }
  return journal;
}

function usageRecord(usage: RunOutcome['usage']): Record<string, number> {
  return { steps: usage.steps, httpCalls: usage.httpCalls, llmTokens: usage.llmTokens };
}

/** Runs one attempt. `signal` is aborted with an `AttemptAbandoned` reason, or with a cancellation. */
export async function executeAttempt(
  deps: ExecuteDeps,
  run: repos.RunRow,
  owner: string,
  signal: AbortSignal,
): Promise<AttemptResult> {
  const { db } = deps;
  const lease: repos.Lease = { runId: run.id, workspaceId: run.workspaceId, owner };
  const stored = run.usage;
  const usage: RunOutcome['usage'] = {
    steps: stored.steps ?? 0,
    httpCalls: stored.httpCalls ?? 0,
    llmTokens: stored.llmTokens ?? 0,
  };
  /**
   * Events wait here for the attempt's next write and go out with it, in order and with their own times: before a
   * step with side effects starts (so an observer sees everything up to a running `:http` call), on a retry, when
   * many are waiting, and in the transaction that ends the attempt. A pure `:function` step thus costs one write
   * (its journal entry) instead of four. Held events are lost only with the attempt, whose replay writes new ones.
   */
  const held: repos.EventRecord[] = [];
  /**
   * Completed pure steps' journal entries wait the same way (written before anything with side effects starts, and
   * with the attempt's end): nothing outside can have seen a pure step, so one lost with its attempt is run again by
   * the replay, unobserved.
   */
  const heldSteps: repos.CompletedStep[] = [];
  const HELD_MAX = 32;
  const abandonedBy = (): AttemptAbandoned | null =>
    signal.reason instanceof AttemptAbandoned ? signal.reason : null;

  const finish = async (
    end: repos.RunEnd,
    status: RunOutcome['status'],
    event: repos.EventRecord,
    used: Record<string, number>,
  ): Promise<AttemptResult> => {
    const done = await repos.finishAttempt(
      db,
      lease,
      end,
      used,
      [...held.splice(0), event],
      heldSteps.splice(0),
      deps.endedChannel,
    );
    return done
      ? { kind: 'finished', status, freedSlot: done.freedSlot, run: done.run }
      : { kind: 'abandoned', why: 'lease_lost' };
  };
  const fail = (code: string, message: string) =>
    finish(
      { status: 'failed', error: { code, message } },
      'failed',
      {
        type: 'run_failed',
        status: 'failed',
        detail: { error: { code, message } },
      },
      { ...usage },
    );

  if (run.attempts > deps.maxAttempts) {
    return fail(
      'run_attempts_exhausted',
      `the run was started ${deps.maxAttempts} times without finishing; it is not tried again`,
    );
  }
  const model = await modelOf(db, run);
  if (!model) return fail('definition_unavailable', 'the flow definition this run was started with is gone');

  // A flow without `:requires` slots reaches no connection (validation refuses a step naming an undeclared slot).
  const connections = model.requires.length ? await runConnections(db, deps.secretBox, run) : noConnections;
  // Values of secret-typed inputs are redacted like connection secrets wherever the run lets something out.
  const input = run.input as Record<string, unknown> | null;
  const secretInputs = run.secretInputs
    .map((name) => input?.[name])
    .filter((v): v is string => typeof v === 'string' && v.length > 0);
  const journal = await journalOf(db, run);
  held.push(
    run.attempts <= 1
      ? { type: 'run_started', status: 'running', detail: { flowSlug: run.flowSlug, version: run.version } }
      : { type: 'run_resumed', status: 'running', detail: { attempt: run.attempts } },
  );

  const lost = () => {
    throw new AttemptAbandoned('lease_lost');
  };
  const flushSteps = async () => {
    for (const step of heldSteps.splice(0)) {
      if (!(await repos.recordStep(db, lease, { ...step, status: 'completed', countsStart: true }))) lost();
    }
  };
  const flush = async () => {
    await flushSteps();
    if (held.length === 0) return;
    if (!(await repos.appendEvents(db, lease, held.splice(0), deps.eventsChannel))) lost();
  };
  // A pure step has no `running` journal row (nothing outside can have seen it); its start time goes with its result.
  const pureStarts = new Map<string, Date>();
  const onEvent = async (event: StepEvent) => {
    const at = new Date(event.at);
    let flushNow = held.length + 1 >= HELD_MAX || event.type === 'step_retrying';
    if (event.type === 'step_started' && event.stepType === 'function') {
      pureStarts.set(event.stepId, at);
    } else if (event.type === 'step_started') {
      flushNow = true;
      // The journal before the side effect: pure steps first, then this step's `running` row.
      await flushSteps();
      if (
        !(await repos.recordStep(db, lease, {
          stepId: event.stepId,
          type: event.stepType,
          status: 'running',
          startedAt: at,
        }))
      )
        lost();
    } else if (event.type === 'step_failed') {
      const error = event.error ? { code: event.error.code, message: event.error.message } : null;
      if (
        !(await repos.recordStep(db, lease, {
          stepId: event.stepId,
          type: event.stepType,
          status: 'failed',
          error,
          finishedAt: at,
          ...(pureStarts.has(event.stepId)
            ? { startedAt: pureStarts.get(event.stepId), countsStart: true }
            : {}),
        }))
      )
        lost();
      pureStarts.delete(event.stepId);
    }
    held.push({
      type: event.type,
      stepId: event.stepId,
      stepType: event.stepType,
      status: event.type.replace(/^step_/, ''),
      detail: event.error ? { ...event.detail, error: event.error } : event.detail,
      at,
    });
    if (flushNow) await flush();
  };
  const record = async (stepId: string, entry: JournalEntry) => {
    const pureStart = pureStarts.get(stepId);
    if (pureStart && entry.status === 'completed') {
      pureStarts.delete(stepId);
      heldSteps.push({
        stepId,
        type: entry.type,
        result: entry.result,
        startedAt: pureStart,
        finishedAt: new Date(),
      });
      if (heldSteps.length >= HELD_MAX) await flush();
      return;
    }
    const ok = await repos.recordStep(db, lease, {
      stepId,
      type: entry.type,
      status: entry.status,
      ...(entry.status === 'completed'
        ? { result: entry.result, finishedAt: new Date() }
        : { wakeAt: new Date(entry.wakeAt) }),
      ...(pureStarts.has(stepId) ? { startedAt: pureStarts.get(stepId), countsStart: true } : {}),
    });
    pureStarts.delete(stepId);
    if (!ok) lost();
  };

  let outcome: RunOutcome;
  try {
    outcome = await runBody(model, run.input, {
      steps: tracedSteps(
        createStepRunner({
          connections: connections.resolver,
          kv: workspaceKv(db, run.workspaceId),
          llmQuota: workspaceLlmQuota(db, run.workspaceId, deps.now),
          allowPrivateNetwork: deps.allowPrivateNetwork,
          outboundHeaders: traceHeaders,
          ...(deps.mcp ? { mcp: deps.mcp } : {}),
        }),
      ),
      journal,
      record,
      onEvent,
      limits: deps.limits,
      usage,
      signal,
      ...(run.deadlineAt ? { deadline: run.deadlineAt.getTime() } : {}),
      knownSecrets: [...connections.knownSecrets, ...secretInputs],
    });
  } catch (error) {
    if (error instanceof AttemptAbandoned) return { kind: 'abandoned', why: error.why };
    throw error;
  }
  // A cancellation the worker itself caused (shutdown, lost lease) is not the run's end.
  const abandoned = abandonedBy();
  if (abandoned && outcome.status === 'cancelled') return { kind: 'abandoned', why: abandoned.why };

  const used = usageRecord(outcome.usage);
  switch (outcome.status) {
    case 'completed': {
      const r = outcome.result;
      return finish(
        {
          status: 'completed',
          result: r.mimeType === 'application/json' && r.json !== undefined ? r.json : r.text,
          resultMime: r.mimeType,
        },
        'completed',
        {
          type: 'run_completed',
          status: 'completed',
          detail: { mimeType: r.mimeType, bytes: r.bytes, preview: r.preview.slice(0, EVENT_PREVIEW_CHARS) },
        },
        used,
      );
    }
    case 'waiting':
      return finish(
        { status: 'waiting', wakeAt: new Date(outcome.wakeAt) },
        'waiting',
        {
          type: 'run_waiting',
          stepId: outcome.stepId,
          status: 'waiting',
          detail: { wakeAt: new Date(outcome.wakeAt).toISOString() },
        },
        used,
      );
    default: {
      // The failing step is named in the message and kept as a field: an agent goes straight to inspect_run_step.
      const stepId = outcome.error.stepId;
      const error = {
        code: outcome.error.code,
        message:
          stepId && outcome.status === 'failed'
            ? `step \`${stepId}\` failed: ${outcome.error.message}`
            : outcome.error.message,
        ...(stepId ? { stepId } : {}),
      };
      const type =
        outcome.status === 'timed-out'
          ? 'run_timed_out'
          : outcome.status === 'cancelled'
            ? 'run_cancelled'
            : 'run_failed';
      return finish(
        { status: outcome.status, error },
        outcome.status,
        {
          type,
          status: outcome.status,
          ...(outcome.error.stepId ? { stepId: outcome.error.stepId } : {}),
          detail: { error: outcome.error },
        },
        used,
      );
    }
  }
}
