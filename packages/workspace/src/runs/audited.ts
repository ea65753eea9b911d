/**
 * Starts and cancels as audit events: a refused start (cap, bad input, unbound slot) is as much an action as one that
 * queued a run, so both outcomes are recorded. Arguments name the run and the flow, never the input.
 */
import { audited } from '../audit.js';
import type { UseCaseContext } from '../scope.js';
import type { RunUseCases } from './index.js';

export function auditedRuns(ctx: UseCaseContext, runs: RunUseCases): RunUseCases {
  return {
    ...runs,
    start(input) {
      const what = {
        flowSlug: input.slug,
        target: input.target ?? 'live',
        ...(input.installationId ? { installationId: input.installationId } : {}),
        ...(input.invocation ? { invocation: input.invocation } : {}),
      };
      return audited(
        ctx,
        'runs.start',
        {
          ok: ({ run }) => ({ arguments: { ...what, flowSlug: run.flowSlug }, runId: run.id }),
          failed: what,
        },
        () => runs.start(input),
      );
    },
    cancel(runId) {
      // An unknown run names no run: the id asked about stays in the arguments only.
      return audited(
        ctx,
        'runs.cancel',
        {
          ok: (run) =>
            run
              ? { arguments: { runId, flowSlug: run.flowSlug }, runId: run.id }
              : { outcome: 'error', errorCode: 'not_found', arguments: { runId } },
          failed: { runId },
        },
        () => runs.cancel(runId),
      );
    },
  };
}
