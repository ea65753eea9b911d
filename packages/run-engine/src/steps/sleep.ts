import { STEP_LIMITS } from '@flowgate/flows';
import { z } from 'zod';
import type { StepContext, StepOutcome } from '../ports.js';
import { parseConfig } from './common.js';

export const sleepConfigSchema = z.strictObject({
  'duration-ms': z.number().int().min(0).max(STEP_LIMITS.sleep.durationMsMax),
});

/**
 * A :sleep step never blocks: it answers with the wake time and the run suspends (`waiting`). The durable timer
 * belongs to the queue, which runs the body again once the time has come; replay then completes the step with nil.
 */
export function runSleepStep(rawConfig: unknown, ctx: StepContext): StepOutcome {
  const config = parseConfig(sleepConfigSchema, rawConfig, ':sleep');
  // A computed delay of zero (e.g. "follow up after 0 hours") means no pause, not a failure halfway through a flow.
  if (config['duration-ms'] === 0) return { kind: 'result', value: null };
  return { kind: 'wait', wakeAt: ctx.now() + config['duration-ms'] };
}
