import type { repos } from '@flowgate/db';
import type { StepRunner } from '@flowgate/run-engine';
import { recordRunEnded, storedTraceContext, telemetryActive, withSpan } from '@flowgate/telemetry';
import type { AttemptResult } from './execute.js';

/**
 * One attempt of a run as a span continuing the trace of the request that started it (stored with the run), linked
 * to it as well so a backend that splits long traces still relates them. Only identifiers, never input or results.
 */
export function tracedAttempt(
  run: repos.RunRow,
  attempt: () => Promise<AttemptResult>,
): Promise<AttemptResult> {
  if (!telemetryActive()) return attempt();
  const stored = storedTraceContext(run.traceContext);
  return withSpan(
    `run ${run.flowSlug}`,
    {
      attributes: {
        'flowgate.run.id': run.id,
        'flowgate.flow.slug': run.flowSlug,
        'flowgate.run.attempt': run.attempts,
        ...(run.toolName ? { 'gen_ai.tool.name': run.toolName } : {}),
      },
      ...(stored ? { parent: stored.parent, links: stored.links } : {}),
    },
    async (span) => {
      const result = await attempt();
      if (result.kind === 'finished') {
        span?.setAttribute('flowgate.run.status', result.status);
        if (result.status !== 'waiting') recordRunEnded(result.status);
      } else span?.setAttribute('flowgate.run.abandoned', result.why);
      return result;
    },
  );
}

/** Each external step (:http, :llm, :kv, :sleep) in its own span; outbound :http requests carry its context. */
export function tracedSteps(inner: StepRunner): StepRunner {
  return (request, ctx) => {
    if (!telemetryActive()) return inner(request, ctx);
    return withSpan(
      `step ${request.type}`,
      {
        attributes: { 'flowgate.step.id': request.stepId.slice(0, 200), 'flowgate.step.type': request.type },
      },
      () => inner(request, ctx),
    );
  };
}
