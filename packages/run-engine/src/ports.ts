import type { StepType } from '@flowgate/flows';
import type { RunErrorJson } from './errors.js';
import type { Meter } from './limits.js';
import type { JsonValue, Value } from './values.js';

/** Step types executed behind the `StepRunner` port; `:function` steps run inside the interpreter. */
export type ExternalStepType = Exclude<StepType, 'function'>;

export interface StepRequest {
  /** The step id with its `for` index suffix, e.g. `notify[2]` (nested loops: `notify[2][0]`). */
  stepId: string;
  type: ExternalStepType;
  /** The evaluated config map as plain JSON: keyword keys and values become their names (`:method :get` → "get"). */
  config: { [key: string]: JsonValue };
}

/** What an executor may use while it runs a step. */
export interface StepContext {
  /** Aborted when the run is cancelled or reaches its deadline. */
  readonly signal: AbortSignal;
  /** Absolute deadline of this evaluation (epoch ms). */
  readonly deadline: number;
  /** For building result values (sizes and depth are checked against the run's limits). */
  readonly meter: Meter;
  readonly usage: UsageMeter;
  now(): number;
  /** Secrets an executor came to know (a connection's credentials): redacted from every event and result. */
  addKnownSecrets(secrets: readonly string[]): void;
  /** Reports a retry (`step_retrying`); the detail is redacted before it leaves. */
  retrying(detail: { attempt: number; delayMs: number; reason: string }): Promise<void>;
  /**
   * Runs one journaled part of this step (a model call or a remote tool call of an :llm step with tools) under the id
   * `<stepId>/<name>`, e.g. `ask/llm[0]` or `ask/tool[0][1]`. Like a step: `step_started`, `step_completed` or
   * `step_failed` events under that id, the result stored (scrubbed of known secrets) through `record` before it is
   * returned, and on replay the stored result is returned without running `run`. A sub-step does not count as a step;
   * its HTTP calls and tokens count through `usage` as usual. A failure is reported under the sub-step id and thrown
   * on (with that `stepId`), so the executor decides whether it fails the step. `name` is letters, digits and `-`,
   * optionally followed by `[i]` indexes; each id runs at most once per run.
   */
  subStep(
    name: string,
    type: StepType,
    run: () => Promise<Value>,
    detail?: { [key: string]: JsonValue },
  ): Promise<Value>;
}

/** Per-run usage counters; each method throws the matching limit error once the limit is reached. */
export interface UsageMeter {
  /** Counts one outgoing HTTP request (every attempt and every redirect hop). */
  countHttpCall(): void;
  /** Adds LLM tokens used by a completed call. */
  addLlmTokens(tokens: number): void;
  /** Tokens left under the run's limit. */
  llmTokensLeft(): number;
}

export type StepOutcome =
  | { kind: 'result'; value: Value }
  /** The step is pending until `wakeAt` (epoch ms): the run suspends and resumes by replay (durable sleep). */
  | { kind: 'wait'; wakeAt: number };

/** Executes one step. Failures are thrown as `RunError`; anything else thrown becomes `step_failed`. */
export type StepRunner = (request: StepRequest, context: StepContext) => Promise<StepOutcome>;

/**
 * What the journal of a run holds per step id. Completed results are stored losslessly (`encodeValue`) and
 * unredacted — replay must see exactly what the first execution saw — so the journal is internal data: never show
 * it without `redact`.
 */
export type JournalEntry =
  | { status: 'completed'; type: StepType; result: JsonValue }
  | { status: 'waiting'; type: StepType; wakeAt: number };

export type StepEventType =
  | 'step_started'
  | 'step_completed'
  | 'step_failed'
  | 'step_retrying'
  | 'step_waiting';

/** A step event; `detail` is redacted with every known secret and bounded in size. */
export interface StepEvent {
  type: StepEventType;
  /** Epoch ms. */
  at: number;
  stepId: string;
  stepType: StepType;
  detail: { [key: string]: JsonValue };
  /** Present on `step_failed`. */
  error?: RunErrorJson;
}
