/**
 * @flowgate/worker — executes queued runs durably: claims them from the shared Postgres (or embedded) queue, holds a
 * renewed lease while the run engine evaluates the body, writes every step result and event under that lease, and
 * resumes interrupted runs by replay. `flowgate worker` runs one in its own process; `serve` and `dev` run one in
 * process, behind the run broker that implements the workspace domain's run port.
 */
export { createRunBroker, type RunBroker, type RunBrokerOptions } from './broker.js';
export type { AttemptResult } from './execute.js';
export {
  CANCEL_CHANNEL,
  createWorker,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_POLL_MS,
  ENDED_CHANNEL,
  EVENTS_CHANNEL,
  type Reservation,
  RUNS_CHANNEL,
  type Worker,
  type WorkerLog,
  type WorkerOptions,
} from './worker.js';
