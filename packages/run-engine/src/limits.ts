import { RunError } from './errors.js';

/**
 * Per-run limits (packages/run-engine/README.md, "Limits"). Evaluation limits (fuel, depth, sizes) apply to one
 * evaluation of the body — a replay starts with fresh fuel because it repeats the same work; usage limits (steps, HTTP
 * calls, LLM tokens) accumulate over the whole run through `RunUsage`, which the caller persists between attempts.
 */
export interface RunLimits {
  /**
   * Evaluation steps per body evaluation: one per form evaluated, plus the size of every collection or string built.
   */
  fuel: number;
  /** Nesting of evaluation (forms inside forms, function calls inside calls). */
  maxDepth: number;
  /** Elements of any one vector, list, set or map. */
  maxCollectionSize: number;
  /** UTF-16 code units of any one string. */
  maxStringLength: number;
  /** Wall time of one body evaluation, in milliseconds (the caller may pass an earlier absolute deadline). */
  wallTimeMs: number;
  /** Step executions over the run (replayed steps are not executed again and not counted again). */
  maxSteps: number;
  /** HTTP requests over the run, counting every attempt and redirect of :http and :llm steps. */
  maxHttpCalls: number;
  /** LLM tokens (prompt + completion) over the run. */
  maxLlmTokens: number;
  /** Serialised size of one step result, in bytes. */
  maxStepResultBytes: number;
  /** Serialised size of the run result, in bytes. */
  maxResultBytes: number;
  /** Serialised size of the run input, in bytes. */
  maxInputBytes: number;
}

export const DEFAULT_RUN_LIMITS: Readonly<RunLimits> = Object.freeze({
  fuel: 2_000_000,
  maxDepth: 400,
  maxCollectionSize: 100_000,
  maxStringLength: 2_000_000,
  wallTimeMs: 15 * 60_000,
  maxSteps: 1_000,
  maxHttpCalls: 500,
  maxLlmTokens: 200_000,
  maxStepResultBytes: 4 * 1024 * 1024,
  maxResultBytes: 1024 * 1024,
  maxInputBytes: 1024 * 1024,
});

/** Nesting of any value (built by the body, read from JSON, stored). */
export const MAX_VALUE_DEPTH = 100;

/**
 * Ceiling on `maxDepth` whatever the configuration says: each level of evaluation takes several JS frames, and the
 * engine must stop on its own check, well before the JS stack would overflow.
 */
export const HARD_MAX_DEPTH = 800;

/** What the run has used so far; returned with every outcome so the caller can persist it. */
export interface RunUsage {
  steps: number;
  httpCalls: number;
  llmTokens: number;
}

export function emptyUsage(): RunUsage {
  return { steps: 0, httpCalls: 0, llmTokens: 0 };
}

// Checking the clock on every tick would dominate evaluation; every 1024 ticks keeps overshoot to well under a ms.
const CLOCK_EVERY = 1024;

/**
 * Counts evaluation work and enforces fuel, wall time and cancellation. Synchronous evaluation never yields to the
 * event loop, so the deadline is read from the clock here instead of waiting for a timer to fire.
 */
export class Meter {
  private fuel: number;
  private untilClock = CLOCK_EVERY;

  constructor(
    readonly limits: Readonly<RunLimits>,
    private readonly deadline: number,
    private readonly signal: AbortSignal | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.fuel = limits.fuel;
  }

  tick(n = 1): void {
    this.fuel -= n;
    if (this.fuel < 0) {
      throw new RunError(
        'eval_fuel_exhausted',
        `evaluation used more than ${this.limits.fuel} steps; move heavy data shaping into smaller steps or reduce the data`,
      );
    }
    this.untilClock -= n;
    if (this.untilClock <= 0) {
      this.untilClock = CLOCK_EVERY;
      this.checkTime();
    }
  }

  /** Charges for building or walking `size` elements (copies cost a fraction of a form evaluation each). */
  charge(size: number): void {
    if (size > 16) this.tick(size >>> 4);
  }

  checkTime(): void {
    if (this.signal?.aborted) throw new RunError('run_cancelled', 'the run was cancelled');
    if (this.now() > this.deadline) throw new RunError('run_timed_out', 'the run exceeded its wall time');
  }

  /** Milliseconds left before the deadline (never negative). */
  remainingMs(): number {
    return Math.max(0, this.deadline - this.now());
  }

  get used(): number {
    return this.limits.fuel - this.fuel;
  }

  collection(size: number): void {
    if (size > this.limits.maxCollectionSize) {
      throw new RunError(
        'collection_too_large',
        `a collection of ${size} elements exceeds the limit of ${this.limits.maxCollectionSize}`,
      );
    }
  }

  string(length: number): void {
    if (length > this.limits.maxStringLength) {
      throw new RunError(
        'string_too_large',
        `a string of ${length} characters exceeds the limit of ${this.limits.maxStringLength}`,
      );
    }
  }
}

/** A meter for conversions outside an evaluation (decoding stored values, reading input). */
export function conversionMeter(limits: Partial<RunLimits> = {}): Meter {
  return new Meter({ ...DEFAULT_RUN_LIMITS, ...limits }, Number.POSITIVE_INFINITY, undefined);
}
