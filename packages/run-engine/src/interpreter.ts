import { utf8Length } from '@flowgate/core';
import { type EdnList, type EdnNode, type FlowModel, isStepType, type StepType } from '@flowgate/flows';
import { isRunError, RunError, type RunErrorJson, toRunError } from './errors.js';
import {
  BODY_ENV,
  bind,
  type Env,
  Evaluator,
  FUNCTION_ENV,
  forClauses,
  invalidForm,
  isSpecialForm,
  located,
  type SpecialForm,
  symbolName,
} from './evaluator.js';
import { DEFAULT_RUN_LIMITS, emptyUsage, Meter, type RunLimits, type RunUsage } from './limits.js';
import type {
  ExternalStepType,
  JournalEntry,
  StepContext,
  StepEvent,
  StepEventType,
  StepRunner,
  UsageMeter,
} from './ports.js';
import { eventDetail, redactError, scrubSecrets } from './redact.js';
import { type RenderedResult, renderResult } from './results.js';
import {
  decodeValue,
  encodeValue,
  Fn,
  fromJson,
  isTruthy,
  type JsonValue,
  Keyword,
  List,
  seqItems,
  toJson,
  type Value,
  VMap,
} from './values.js';

/**
 * Runs a flow body (packages/run-engine/README.md) to completion, to a durable wait, or to a failure.
 *
 * Replay: the body is deterministic (no clock, randomness or I/O except through steps), so resuming a run means
 * evaluating the body again from the start with the run's journal. A step whose id is in the journal as completed
 * returns its stored result without running; a step waiting for a timer returns nil once the timer is due and
 * suspends the run again before that. Every new result is passed to `record` (and awaited) before the body goes
 * on, so a crash after a step never repeats it.
 *
 * Step ids: the id written in the body, plus one `[i]` per enclosing `for` binding — the position of the bound
 * element in its collection — e.g. `notify[2]`, or `notify[2][0]` for `(for [a as b bs] …)`. Steps in a `for`'s
 * first collection expression get no index from that `for` (they run once).
 *
 * Function steps run here, in a scope of their own: the code sees only its parameter (the evaluated `:input`).
 * Every other step type goes to the `StepRunner` port with its config as plain JSON.
 *
 * Every step result — also on the first run — is normalised through its stored form, so the body sees exactly the
 * same value on the first run and on every replay.
 */
export interface RunBodyOptions {
  steps: StepRunner;
  /** The journal of earlier attempts of this run, by step id. */
  journal?: ReadonlyMap<string, JournalEntry>;
  /** Persists a journal entry; awaited before the body continues. A failure here rejects `runBody`. */
  record?: (stepId: string, entry: JournalEntry) => void | Promise<void>;
  /** Receives redacted, bounded step events; awaited. A failure here rejects `runBody`. */
  onEvent?: (event: StepEvent) => void | Promise<void>;
  limits?: Partial<RunLimits>;
  /** Usage of earlier attempts (counts continue from here). */
  usage?: RunUsage;
  /** Cancels the run (`run_cancelled`). */
  signal?: AbortSignal;
  /** Absolute deadline (epoch ms); the earlier of this and `limits.wallTimeMs` from now applies. */
  deadline?: number;
  /** Secrets to redact from everything that leaves (e.g. every bound connection's credentials). */
  knownSecrets?: readonly string[];
  now?: () => number;
}

export type RunOutcome =
  | { status: 'completed'; result: RenderedResult; usage: RunUsage }
  | { status: 'waiting'; wakeAt: number; stepId: string; usage: RunUsage }
  | { status: 'failed' | 'timed-out' | 'cancelled'; error: RunErrorJson; usage: RunUsage };

/** The run suspends at a step that waits (durable sleep); thrown through the evaluation, never a failure. */
class Suspend {
  constructor(
    readonly wakeAt: number,
    readonly stepId: string,
  ) {}
}

/** A failure of the caller's own ports (record, onEvent): rejects runBody instead of failing the run. */
class PortFailure {
  constructor(readonly cause: unknown) {}
}

const stepMemo = new WeakMap<EdnNode, boolean>();

/** A sub-step's name inside its step: `llm[0]`, `tool[0][1]`, `tools`. */
const SUB_STEP_NAME = /^[a-z][a-z0-9-]{0,31}(\[\d{1,6}\])*$/;

/** Whether a form contains a `(flow/step …)` call; step-free forms are evaluated synchronously. */
function containsStep(node: EdnNode): boolean {
  if (node.kind !== 'list' && node.kind !== 'vector' && node.kind !== 'set' && node.kind !== 'map')
    return false;
  const memo = stepMemo.get(node);
  if (memo !== undefined) return memo;
  let result: boolean;
  if (node.kind === 'map') result = node.entries.some((e) => containsStep(e.key) || containsStep(e.value));
  else {
    const head = node.items[0];
    if (node.kind === 'list' && head?.kind === 'symbol' && head.name === 'flow/step') result = true;
    else if (node.kind === 'list' && head?.kind === 'symbol' && head.name === 'quote') result = false;
    else result = node.items.some(containsStep);
  }
  stepMemo.set(node, result);
  return result;
}

interface PreparedStep {
  /** The evaluated config (for `:function`: `{:ref … :input …}` with the code shown as a placeholder). */
  config: VMap;
  fn?: Fn;
  input?: Value;
}

class BodyRun extends Evaluator {
  private readonly seen = new Set<string>();
  private readonly forIndex: number[] = [];
  private readonly functions = new Map<string, Fn>();
  readonly usageMeter: UsageMeter;

  constructor(
    meter: Meter,
    input: Value,
    private readonly model: FlowModel,
    private readonly options: RunBodyOptions,
    private readonly usage: RunUsage,
    private readonly secrets: Set<string>,
    private readonly stepSignal: AbortSignal,
    private readonly deadline: number,
    private readonly now: () => number,
  ) {
    super(meter, input);
    const limits = meter.limits;
    this.usageMeter = {
      countHttpCall: () => {
        if (usage.httpCalls >= limits.maxHttpCalls) {
          throw new RunError(
            'http_call_limit_exceeded',
            `the run reached its limit of ${limits.maxHttpCalls} HTTP calls`,
          );
        }
        usage.httpCalls++;
      },
      addLlmTokens: (tokens) => {
        usage.llmTokens += Math.max(0, Math.floor(tokens));
        if (usage.llmTokens > limits.maxLlmTokens) {
          throw new RunError(
            'llm_token_limit_exceeded',
            `the run used more than its limit of ${limits.maxLlmTokens} LLM tokens`,
          );
        }
      },
      llmTokensLeft: () => Math.max(0, limits.maxLlmTokens - usage.llmTokens),
    };
  }

  // ---- asynchronous evaluation of forms that contain steps ----------------------------------------------------

  async evalAsync(node: EdnNode, env: Env): Promise<Value> {
    if (!containsStep(node)) return this.eval(node, env);
    if (node.kind !== 'list') this.meter.tick(1);
    switch (node.kind) {
      case 'vector': {
        const items: Value[] = [];
        for (const n of node.items) items.push(await this.evalAsync(n, env));
        return this.vector(items, node);
      }
      case 'set': {
        const items: Value[] = [];
        for (const n of node.items) items.push(await this.evalAsync(n, env));
        return this.set(items, node);
      }
      case 'map': {
        const entries: [Value, Value][] = [];
        for (const e of node.entries)
          entries.push([await this.evalAsync(e.key, env), await this.evalAsync(e.value, env)]);
        return this.map(entries, node);
      }
      case 'list':
        this.enter(node);
        try {
          this.meter.tick(1);
          return await this.listAsync(node, env);
        } catch (error) {
          throw located(error, node);
        } finally {
          this.leave();
        }
      default:
        return this.eval(node, env);
    }
  }

  private async doAsync(nodes: readonly EdnNode[], env: Env): Promise<Value> {
    let result: Value = null;
    for (const n of nodes) result = await this.evalAsync(n, env);
    return result;
  }

  private async listAsync(node: EdnList, env: Env): Promise<Value> {
    const head = node.items[0] as EdnNode;
    if (head.kind === 'symbol') {
      if (head.name === 'flow/step') return this.step(node, env);
      if (isSpecialForm(head.name)) return this.specialAsync(head.name, node, env);
    }
    const f = head.kind === 'symbol' ? undefined : await this.evalAsync(head, env);
    const args: Value[] = [];
    for (let i = 1; i < node.items.length; i++)
      args.push(await this.evalAsync(node.items[i] as EdnNode, env));
    if (head.kind === 'symbol') {
      if (head.name === 'flow/input') return this.flowInput(node, env);
      return this.callSymbol(head.name, args, env, head);
    }
    return this.apply(f as Value, args);
  }

  private async specialAsync(name: SpecialForm, node: EdnList, env: Env): Promise<Value> {
    const items = node.items;
    switch (name) {
      case 'do':
        return this.doAsync(items.slice(1), env);
      case 'if': {
        if (items.length < 3 || items.length > 4)
          throw invalidForm('if takes a test, a then and an optional else');
        const branch = isTruthy(await this.evalAsync(items[1] as EdnNode, env)) ? items[2] : items[3];
        return branch ? this.evalAsync(branch, env) : null;
      }
      case 'when':
      case 'when-not': {
        if (items.length < 2) throw invalidForm(`${name} takes a test and a body`);
        const test = isTruthy(await this.evalAsync(items[1] as EdnNode, env));
        return test === (name === 'when') ? this.doAsync(items.slice(2), env) : null;
      }
      case 'cond':
        if (items.length % 2 === 0) throw invalidForm('cond takes test/expression pairs');
        for (let i = 1; i < items.length; i += 2) {
          if (isTruthy(await this.evalAsync(items[i] as EdnNode, env)))
            return this.evalAsync(items[i + 1] as EdnNode, env);
        }
        return null;
      case 'and':
      case 'or': {
        let result: Value = name === 'and';
        if (name === 'or') result = null;
        for (let i = 1; i < items.length; i++) {
          result = await this.evalAsync(items[i] as EdnNode, env);
          if (isTruthy(result) === (name === 'or')) return result;
        }
        return result;
      }
      case 'let': {
        const bindings = this.letBindings(node);
        let scope = env;
        for (let i = 0; i < bindings.items.length; i += 2) {
          const bound = symbolName(bindings.items[i], 'a let binding');
          scope = bind(scope, bound, await this.evalAsync(bindings.items[i + 1] as EdnNode, scope));
        }
        return this.doAsync(items.slice(2), scope);
      }
      case 'for':
        return this.forAsync(node, env);
      case 'fn':
      case 'quote':
        // A fn is a value (its body runs synchronously when called, where flow/step is refused); quote is data.
        return this.eval(node, env);
    }
  }

  private async forAsync(node: EdnList, env: Env): Promise<Value> {
    const clauses = forClauses(node);
    const body = node.items[2];
    const out: Value[] = [];
    const loop = async (i: number, scope: Env): Promise<void> => {
      const clause = clauses[i];
      if (!clause) {
        out.push(body ? await this.evalAsync(body, scope) : null);
        this.meter.collection(out.length);
        return;
      }
      if (clause.kind === 'when') {
        if (isTruthy(await this.evalAsync(clause.expr, scope))) await loop(i + 1, scope);
        return;
      }
      const coll = seqItems(await this.evalAsync(clause.expr, scope), 'for');
      for (let k = 0; k < coll.length; k++) {
        this.forIndex.push(k);
        try {
          await loop(i + 1, bind(scope, clause.name, coll[k] as Value));
        } finally {
          this.forIndex.pop();
        }
      }
    };
    await loop(0, env);
    return new List(out);
  }

  // ---- steps --------------------------------------------------------------------------------------------------

  private async step(node: EdnList, env: Env): Promise<Value> {
    const [, typeNode, idNode, configNode] = node.items;
    if (
      node.items.length !== 4 ||
      typeNode?.kind !== 'keyword' ||
      !isStepType(typeNode.name) ||
      idNode?.kind !== 'keyword' ||
      configNode?.kind !== 'map'
    ) {
      throw invalidForm('flow/step takes a step type keyword, a step id keyword and a config map');
    }
    const type = typeNode.name;
    const stepId = idNode.name + this.forIndex.map((i) => `[${i}]`).join('');
    if (this.seen.has(stepId)) {
      throw new RunError(
        'duplicate_step_execution',
        `step ${stepId} was reached twice in one run; a step that repeats must be inside for`,
        { stepId },
      );
    }
    this.seen.add(stepId);
    // The config is evaluated on replay too: it may contain steps of its own, which must replay in order.
    const prepared =
      type === 'function'
        ? await this.functionConfig(configNode, env, stepId)
        : await this.config(configNode, env);
    const entry = this.options.journal?.get(stepId);
    if (entry) {
      if (entry.type !== type) {
        throw new RunError(
          'replay_mismatch',
          `the journal has step ${stepId} as :${entry.type}, the body as :${type}`,
          { stepId },
        );
      }
      if (entry.status === 'completed') return decodeValue(entry.result, this.meter);
      if (this.now() < entry.wakeAt) throw new Suspend(entry.wakeAt, stepId);
      return this.complete(stepId, type, null, this.now());
    }
    return this.execute(stepId, type, prepared);
  }

  private async config(node: EdnNode, env: Env): Promise<PreparedStep> {
    return { config: (await this.evalAsync(node, env)) as VMap };
  }

  /** `:code` and `:ref` become functions over an empty scope; only `:input` is evaluated in the body. */
  private async functionConfig(node: EdnNode, env: Env, stepId: string): Promise<PreparedStep> {
    if (node.kind !== 'map') throw invalidForm('the step config must be a map');
    let fn: Fn | undefined;
    let input: Value = null;
    const shown: [Value, Value][] = [];
    for (const { key, value } of node.entries) {
      const name = key.kind === 'keyword' ? key.name : undefined;
      if (name === 'code') {
        const code = this.eval(value, FUNCTION_ENV);
        if (!(code instanceof Fn))
          throw new RunError('step_config_invalid', ':code must be a function literal', { stepId });
        fn = code;
        shown.push([new Keyword('code'), '(fn …)']);
      } else if (name === 'ref') {
        if (value.kind !== 'keyword')
          throw new RunError('step_config_invalid', ':ref must be a keyword', { stepId });
        fn = this.functionByRef(value.name, stepId);
        shown.push([new Keyword('ref'), new Keyword(value.name)]);
      } else if (name === 'input') {
        input = await this.evalAsync(value, env);
        shown.push([new Keyword('input'), input]);
      } else {
        await this.evalAsync(value, env);
      }
    }
    if (!fn) throw new RunError('step_config_invalid', 'a :function step needs :code or :ref', { stepId });
    return { config: VMap.from(shown, this.meter), fn, input };
  }

  private functionByRef(id: string, stepId: string): Fn {
    const cached = this.functions.get(id);
    if (cached) return cached;
    const declared = this.model.functions.find((f) => f.id === id);
    if (!declared)
      throw new RunError('step_config_invalid', `:ref :${id} names no function in :functions`, { stepId });
    const fn = this.eval(declared.code, FUNCTION_ENV);
    if (!(fn instanceof Fn))
      throw new RunError('step_config_invalid', `function :${id} is not a function literal`, { stepId });
    this.functions.set(id, fn);
    return fn;
  }

  private async execute(stepId: string, type: StepType, prepared: PreparedStep): Promise<Value> {
    const limits = this.meter.limits;
    if (this.usage.steps >= limits.maxSteps) {
      throw new RunError(
        'step_limit_exceeded',
        `the run reached its limit of ${limits.maxSteps} step executions`,
        {
          stepId,
        },
      );
    }
    const config = toJson(prepared.config, this.meter, {
      maxBytes: limits.maxStepResultBytes,
      what: `the config of step ${stepId}`,
    }) as { [key: string]: JsonValue };
    this.usage.steps++;
    const started = this.now();
    await this.emit('step_started', stepId, type, { config });
    try {
      let value: Value;
      if (prepared.fn) {
        const fn = prepared.fn;
        value = fn.call(fn.params === 0 ? [] : [prepared.input ?? null]);
      } else {
        const outcome = await this.options.steps(
          { stepId, type: type as ExternalStepType, config },
          this.stepContext(stepId, type),
        );
        if (outcome.kind === 'wait') {
          await this.record(stepId, { status: 'waiting', type, wakeAt: outcome.wakeAt });
          await this.emit('step_waiting', stepId, type, { wakeAt: new Date(outcome.wakeAt).toISOString() });
          throw new Suspend(outcome.wakeAt, stepId);
        }
        value = outcome.value;
      }
      return await this.complete(stepId, type, value, started);
    } catch (error) {
      if (error instanceof Suspend || error instanceof PortFailure) throw error;
      const failure = this.stepFailure(error, stepId);
      await this.emit('step_failed', stepId, type, { durationMs: this.now() - started }, failure);
      throw failure;
    }
  }

  /** Stores a result (normalised through its stored form, so replay sees the same value) and reports it. */
  private async complete(stepId: string, type: StepType, value: Value, started: number): Promise<Value> {
    const stored = scrubSecrets(
      encodeValue(value, this.meter, {
        maxBytes: this.meter.limits.maxStepResultBytes,
        what: `the result of step ${stepId}`,
      }),
      this.knownSecrets(),
    );
    const result = decodeValue(stored, this.meter);
    await this.record(stepId, { status: 'completed', type, result: stored });
    await this.emit('step_completed', stepId, type, {
      durationMs: Math.max(0, this.now() - started),
      result: toJson(result, this.meter),
    });
    return result;
  }

  private stepFailure(error: unknown, stepId: string): RunError {
    let failure: RunError;
    // The deadline timer aborts the step signal with a run_timed_out reason; it may fire a hair before the clock
    // reads past the deadline, so the reason decides, not the clock alone.
    const deadlineReached =
      (this.stepSignal.aborted &&
        isRunError(this.stepSignal.reason) &&
        this.stepSignal.reason.code === 'run_timed_out') ||
      this.now() >= this.deadline;
    if (this.options.signal?.aborted) failure = new RunError('run_cancelled', 'the run was cancelled');
    else if (deadlineReached) failure = new RunError('run_timed_out', 'the run exceeded its wall time');
    else if (isRunError(error)) failure = error;
    else failure = new RunError('step_failed', `step ${stepId} failed unexpectedly`);
    failure.stepId ??= stepId;
    return failure;
  }

  private stepContext(stepId: string, type: StepType): StepContext {
    return {
      signal: this.stepSignal,
      deadline: this.deadline,
      meter: this.meter,
      usage: this.usageMeter,
      now: this.now,
      addKnownSecrets: (secrets) => {
        for (const s of secrets) if (s) this.secrets.add(s);
      },
      retrying: (detail) => this.emit('step_retrying', stepId, type, detail),
      subStep: (name, subType, run, detail) => this.subStep(stepId, name, subType, run, detail),
    };
  }

  private async subStep(
    parent: string,
    name: string,
    type: StepType,
    run: () => Promise<Value>,
    detail: { [key: string]: JsonValue } = {},
  ): Promise<Value> {
    if (!SUB_STEP_NAME.test(name))
      throw new RunError('internal_error', 'invalid sub-step name', { stepId: parent });
    const stepId = `${parent}/${name}`;
    if (this.seen.has(stepId)) {
      throw new RunError('duplicate_step_execution', `sub-step ${stepId} was reached twice in one run`, {
        stepId,
      });
    }
    this.seen.add(stepId);
    const entry = this.options.journal?.get(stepId);
    if (entry) {
      if (entry.type !== type || entry.status !== 'completed') {
        throw new RunError(
          'replay_mismatch',
          `the journal has sub-step ${stepId} as :${entry.type} (${entry.status}), the step runs it as :${type}`,
          { stepId },
        );
      }
      return decodeValue(entry.result, this.meter);
    }
    const started = this.now();
    await this.emit('step_started', stepId, type, detail);
    try {
      return await this.complete(stepId, type, await run(), started);
    } catch (error) {
      if (error instanceof Suspend || error instanceof PortFailure) throw error;
      const failure = this.stepFailure(error, stepId);
      await this.emit('step_failed', stepId, type, { durationMs: this.now() - started }, failure);
      throw failure;
    }
  }

  private async record(stepId: string, entry: JournalEntry): Promise<void> {
    if (!this.options.record) return;
    try {
      await this.options.record(stepId, entry);
    } catch (error) {
      throw new PortFailure(error);
    }
  }

  async emit(
    type: StepEventType,
    stepId: string,
    stepType: StepType,
    detail: { [key: string]: JsonValue },
    error?: RunError,
  ): Promise<void> {
    if (!this.options.onEvent) return;
    const secrets = this.knownSecrets();
    const event: StepEvent = {
      type,
      at: this.now(),
      stepId,
      stepType,
      detail: eventDetail(detail, secrets) as { [key: string]: JsonValue },
    };
    if (error) event.error = redactError(error.toJSON(), secrets);
    try {
      await this.options.onEvent(event);
    } catch (cause) {
      throw new PortFailure(cause);
    }
  }

  knownSecrets(): string[] {
    return [...this.secrets];
  }
}

function readInput(input: unknown, meter: Meter): Value {
  if (input === null || input === undefined) return VMap.EMPTY;
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new RunError('input_invalid', 'the run input must be a JSON object');
  }
  let size: number;
  try {
    size = utf8Length(JSON.stringify(input));
  } catch {
    throw new RunError('input_invalid', 'the run input is not JSON data');
  }
  if (size > meter.limits.maxInputBytes) {
    throw new RunError('input_invalid', `the run input is larger than ${meter.limits.maxInputBytes} bytes`);
  }
  try {
    return fromJson(input, meter);
  } catch (error) {
    throw new RunError('input_invalid', `the run input was refused: ${toRunError(error).message}`);
  }
}

const STATUS_OF: Partial<Record<RunError['code'], 'timed-out' | 'cancelled'>> = {
  run_timed_out: 'timed-out',
  run_cancelled: 'cancelled',
};

// setTimeout cannot wait longer than 2^31−1 ms; longer deadlines are enforced by the clock checks alone.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Evaluates `model.flow` with `input` (a JSON object; keys become keywords). Resolves to the outcome; rejects only
 * when the caller's own `record` or `onEvent` fails (the attempt should then be retried by replay).
 */
export async function runBody(
  model: FlowModel,
  input: unknown,
  options: RunBodyOptions,
): Promise<RunOutcome> {
  const limits: RunLimits = { ...DEFAULT_RUN_LIMITS, ...options.limits };
  const now = options.now ?? Date.now;
  const started = now();
  const deadline = Math.min(options.deadline ?? Number.POSITIVE_INFINITY, started + limits.wallTimeMs);
  const meter = new Meter(limits, deadline, options.signal, now);
  const usage: RunUsage = { ...emptyUsage(), ...options.usage };
  const secrets = new Set((options.knownSecrets ?? []).filter(Boolean));

  // Steps get one signal for both ways a run stops early: cancellation and the deadline.
  const stepController = new AbortController();
  const onAbort = () => stepController.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const wait = deadline - started;
  const timer =
    wait < MAX_TIMER_MS
      ? setTimeout(
          () => stepController.abort(new RunError('run_timed_out', 'the run exceeded its wall time')),
          Math.max(0, wait),
        )
      : undefined;
  timer?.unref?.();

  try {
    meter.checkTime();
    const run = new BodyRun(
      meter,
      readInput(input, meter),
      model,
      options,
      usage,
      secrets,
      stepController.signal,
      deadline,
      now,
    );
    const value = await run.evalAsync(model.flow, BODY_ENV);
    const result = renderResult(value, {
      meter,
      knownSecrets: run.knownSecrets(),
      maxBytes: limits.maxResultBytes,
    });
    return { status: 'completed', result, usage };
  } catch (error) {
    if (error instanceof Suspend)
      return { status: 'waiting', wakeAt: error.wakeAt, stepId: error.stepId, usage };
    if (error instanceof PortFailure) throw error.cause;
    const failure = toRunError(error);
    return {
      status: STATUS_OF[failure.code] ?? 'failed',
      error: redactError(failure.toJSON(), [...secrets]),
      usage,
    };
  } finally {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
