/**
 * A run's states, named once for every layer that stores, shows, filters or maps them: `queued`, `running` and
 * `waiting` are live (the run can still make progress), the others final.
 */
export const RUN_STATUSES = [
  'queued',
  'running',
  'waiting',
  'completed',
  'failed',
  'cancelled',
  'timed-out',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const LIVE_RUN_STATUSES = ['queued', 'running', 'waiting'] as const satisfies readonly RunStatus[];
export type LiveRunStatus = (typeof LIVE_RUN_STATUSES)[number];

export const FINAL_RUN_STATUSES = [
  'completed',
  'failed',
  'cancelled',
  'timed-out',
] as const satisfies readonly RunStatus[];
export type FinalRunStatus = (typeof FINAL_RUN_STATUSES)[number];

/** A step's states in a run's journal: `waiting` is a step that sleeps until its wake time. */
export const STEP_STATUSES = ['running', 'completed', 'waiting', 'failed'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** Takes any string: callers reading a status off the wire need not narrow it first. */
export function isFinalRunStatus(status: string): status is FinalRunStatus {
  return (FINAL_RUN_STATUSES as readonly string[]).includes(status);
}

export function isLiveRunStatus(status: string): status is LiveRunStatus {
  return (LIVE_RUN_STATUSES as readonly string[]).includes(status);
}
