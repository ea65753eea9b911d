/**
 * What the run tools and run resources output: a run's state, its events and steps, and its result — bounded. A
 * result small enough is returned inline; a larger one as a preview with the resource URI to read it whole. Everything
 * here was redacted by the workspace before it arrives.
 */
import { AppError, RUN_STATUSES, STEP_STATUSES } from '@flowgate/core';
import type { RunEventRecord, RunRecord, RunResult, RunStepRecord, Workspace } from '@flowgate/workspace';
import { z } from 'zod';
import { LIMITS } from './limits.js';
import type { ContentBlock } from './protocol.js';
import { runEventsUri, runResultUri, runUri } from './uris.js';

const errorSchema = z
  .strictObject({
    code: z.string(),
    message: z.string(),
    /** The step that failed, when a step did (also named in `message`). */
    stepId: z.string().optional(),
  })
  .nullable();

export const runViewSchema = z.strictObject({
  runId: z.string(),
  status: z.enum(RUN_STATUSES),
  flowSlug: z.string(),
  toolName: z.string().nullable(),
  installationId: z.string().nullable(),
  target: z.enum(['live', 'draft']),
  version: z.number().int().nullable(),
  error: errorSchema,
  attempts: z.number().int(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  wakeAt: z.string().nullable(),
  resourceUri: z.string(),
  resultUri: z.string().nullable(),
});
export type RunView = z.infer<typeof runViewSchema>;

/** A value returned inline when small; otherwise a preview of its text and the URI to read it whole. */
export const resultViewSchema = z.strictObject({
  mimeType: z.string(),
  /** Characters of the whole value as text (JSON for JSON values). */
  chars: z.number().int(),
  /** The whole value, when small enough. */
  value: z.unknown().optional(),
  /** The beginning of the value's text, when too large to inline. */
  preview: z.string().optional(),
  truncated: z.boolean(),
  resourceUri: z.string().nullable(),
});
export type ResultView = z.infer<typeof resultViewSchema>;

export const eventViewSchema = z.strictObject({
  id: z.number().int(),
  type: z.string(),
  stepId: z.string().nullable(),
  status: z.string().nullable(),
  at: z.string(),
  detail: z.unknown(),
});

export const stepViewSchema = z.strictObject({
  stepId: z.string(),
  type: z.string(),
  status: z.enum(STEP_STATUSES),
  attempts: z.number().int(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  wakeAt: z.string().nullable(),
  error: errorSchema,
});

export function runView(run: RunRecord): RunView {
  return {
    runId: run.id,
    status: run.status,
    flowSlug: run.flowSlug,
    toolName: run.toolName,
    installationId: run.installationId,
    target: run.target,
    version: run.version,
    error: run.error,
    attempts: run.attempts,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    wakeAt: run.wakeAt,
    resourceUri: runUri(run.id),
    resultUri: run.status === 'completed' ? runResultUri(run.id) : null,
  };
}

/** The text a value is read as: itself for text types, its JSON otherwise. */
export function resultText(mimeType: string, value: unknown): string {
  if (mimeType !== 'application/json' && typeof value === 'string') return value;
  return JSON.stringify(value ?? null);
}

export function resultView(result: RunResult, resourceUri: string | null): ResultView {
  const text = resultText(result.mimeType, result.value);
  if (text.length <= LIMITS.resultInlineMaxChars) {
    return {
      mimeType: result.mimeType,
      chars: text.length,
      value: result.value,
      truncated: false,
      resourceUri,
    };
  }
  return {
    mimeType: result.mimeType,
    chars: text.length,
    preview: text.slice(0, LIMITS.resultPreviewChars),
    truncated: true,
    resourceUri,
  };
}

export function eventView(e: RunEventRecord) {
  return { id: e.id, type: e.type, stepId: e.stepId, status: e.status, at: e.at, detail: e.detail };
}

export function stepView(s: RunStepRecord) {
  return {
    stepId: s.stepId,
    type: s.type,
    status: s.status,
    attempts: s.attempts,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    wakeAt: s.wakeAt,
    error: s.error,
  };
}

/** Statuses after which a run never has a result: linking `/result` would send the agent to a dead read. */
const ENDED_WITHOUT_RESULT: ReadonlySet<RunRecord['status']> = new Set(['failed', 'cancelled', 'timed-out']);

/**
 * Links to a run and, unless it ended without one, its result (a run still going gets the link it can read once
 * completed); downgraded to text for 2025-03-26 clients by dispatch.
 */
export function runLinks(run: RunRecord): ContentBlock[] {
  const links: ContentBlock[] = [
    {
      type: 'resource_link',
      uri: runUri(run.id),
      name: `run-${run.id}`,
      title: `Run ${run.id}`,
      description: 'Run status and summary',
      mimeType: 'application/json',
    },
  ];
  if (ENDED_WITHOUT_RESULT.has(run.status)) return links;
  links.push({
    type: 'resource_link',
    uri: runResultUri(run.id),
    name: `run-${run.id}-result`,
    title: `Result of run ${run.id}`,
    description: 'The run result once completed',
    ...(run.resultMimeType ? { mimeType: run.resultMimeType } : {}),
  });
  return links;
}

/** A run of this workspace, or a `not_found` that says the same whether it is missing or another workspace's. */
export async function requireRun(workspace: Workspace, runId: string): Promise<RunRecord> {
  const run = await workspace.runs.get(runId);
  if (!run) throw new AppError('not_found', `No run ${runId} in this workspace`);
  return run;
}

export { runEventsUri };
