/**
 * Workspace quotas: what each bounds, its period (UTC), and the `quota_exceeded` refusal every edge answers with.
 * The counting itself is the database's (a conditional increment per period), so concurrent starters cannot overshoot.
 */
import { AppError } from './errors.js';

export const QUOTA_NAMES = ['runsPerMonth', 'llmTokensPerMonth', 'toolCallsPerDay'] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];

/** A workspace's quotas; null: no quota. */
export type QuotaLimits = { [K in QuotaName]: number | null };

export const NO_QUOTAS: QuotaLimits = Object.freeze({
  runsPerMonth: null,
  llmTokensPerMonth: null,
  toolCallsPerDay: null,
});

/** Upper bounds of a quota's value (a larger figure is a typo, not a plan). */
export const QUOTA_MAX: Readonly<Record<QuotaName, number>> = Object.freeze({
  runsPerMonth: 1_000_000_000,
  llmTokensPerMonth: 1_000_000_000_000,
  toolCallsPerDay: 1_000_000_000,
});

const WHAT: Readonly<Record<QuotaName, string>> = Object.freeze({
  runsPerMonth: 'run starts per month',
  llmTokensPerMonth: 'LLM tokens per month',
  toolCallsPerDay: 'MCP tool calls per day',
});

export interface QuotaPeriod {
  start: Date;
  /** The next period's start. */
  resetsAt: Date;
  /** The period before: counters older than it are pruned (the last two periods are kept). */
  previousStart: Date;
}

/** The period `now` falls in: a UTC calendar month, or a UTC day for `toolCallsPerDay`. */
export function quotaPeriod(quota: QuotaName, now: Date): QuotaPeriod {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  if (quota === 'toolCallsPerDay') {
    const d = now.getUTCDate();
    return {
      start: new Date(Date.UTC(y, m, d)),
      resetsAt: new Date(Date.UTC(y, m, d + 1)),
      previousStart: new Date(Date.UTC(y, m, d - 1)),
    };
  }
  return {
    start: new Date(Date.UTC(y, m, 1)),
    resetsAt: new Date(Date.UTC(y, m + 1, 1)),
    previousStart: new Date(Date.UTC(y, m - 1, 1)),
  };
}

export interface QuotaExceededDetails {
  quota: QuotaName;
  limit: number;
  /** ISO 8601 instant (UTC) when the period ends and the count starts again. */
  resetsAt: string;
}

/** The work was refused before it started: the workspace used up one of its quotas for this period. */
export class QuotaExceeded extends AppError {
  readonly quota: QuotaName;
  readonly limit: number;
  readonly resetsAt: string;
  readonly retryAfterSeconds: number;

  constructor(quota: QuotaName, limit: number, now: Date) {
    const { resetsAt } = quotaPeriod(quota, now);
    const retryAfterSeconds = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
    super(
      'quota_exceeded',
      `This workspace used its quota of ${limit} ${WHAT[quota]} (${quota}); it resets at ${resetsAt.toISOString()}`,
      undefined,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    );
    this.name = 'QuotaExceeded';
    this.quota = quota;
    this.limit = limit;
    this.resetsAt = resetsAt.toISOString();
    this.retryAfterSeconds = retryAfterSeconds;
  }

  get details(): QuotaExceededDetails {
    return { quota: this.quota, limit: this.limit, resetsAt: this.resetsAt };
  }

  override toBody(): {
    code: 'quota_exceeded';
    message: string;
    quota: QuotaName;
    limit: number;
    resetsAt: string;
    retryAfterSeconds: number;
  } {
    return {
      code: 'quota_exceeded',
      message: this.message,
      quota: this.quota,
      limit: this.limit,
      resetsAt: this.resetsAt,
      retryAfterSeconds: this.retryAfterSeconds,
    };
  }
}

export function isQuotaExceeded(value: unknown): value is QuotaExceeded {
  return value instanceof QuotaExceeded;
}
