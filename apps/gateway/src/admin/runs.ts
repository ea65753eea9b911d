import type { Capability } from '@flowgate/auth';
import { AppError, INSTALLATION_ID_PATTERN, isAppError, RUN_STATUSES } from '@flowgate/core';
import { openWorkspace, type RunRecord, type Workspace, type WorkspaceDeps } from '@flowgate/workspace';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import type { AuditSink } from '../audit/queue.js';
import type { AppEnv } from '../context.js';
import { requireCapability } from '../middleware/workspace-access.js';
import type { AdminCursors } from './cursor.js';
import { jsonBody, params, query } from './validation.js';

/** Steps and events a run read returns at most; the MCP run tools page through more. */
const RUN_READ_STEPS = 200;
const RUN_READ_EVENTS = 200;

const runsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  status: z.enum(RUN_STATUSES).optional(),
  flow: z
    .string()
    .regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,127}$/, 'not a flow slug')
    .optional(),
});

/** Where a runs page ends: the database's own text of the last run's creation time, and its id. */
const runPosition = z.strictObject({ createdAt: z.string().min(1).max(64), id: z.string().min(1).max(64) });

const runParam = z.object({ runId: z.string().max(64) });
const slugParam = z.object({ slug: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,127}$/, 'invalid flow slug') });

const startBody = z.strictObject({
  input: z.record(z.string(), z.unknown()).default({}),
  target: z.enum(['live', 'draft']).optional(),
  installationId: z.string().regex(INSTALLATION_ID_PATTERN, 'not an installation id').optional(),
  invocation: z.string().max(128).optional(),
  idempotencyKey: z.string().min(1).max(200).optional(),
});

/** The caller's workspace use cases, acting as the caller. */
function workspaceOf(c: Context<AppEnv>, deps: WorkspaceDeps): Workspace {
  const access = c.get('access');
  return openWorkspace(deps, {
    workspaceId: access.workspaceId,
    actor: { kind: access.principal.kind, id: access.principal.id },
  });
}

function may(c: Context<AppEnv>, capability: Capability): boolean {
  const access = c.get('access');
  return access.isAdmin || access.capabilities.has(capability);
}

const notFound = () => new AppError('not_found', 'run not found');

function runView(r: RunRecord) {
  return {
    runId: r.id,
    flowSlug: r.flowSlug,
    installationId: r.installationId,
    version: r.version,
    target: r.target,
    toolName: r.toolName,
    invocation: r.invocation,
    status: r.status,
    input: r.input,
    error: r.error,
    resultMimeType: r.resultMimeType,
    attempts: r.attempts,
    usage: r.usage,
    cancelRequested: r.cancelRequested,
    createdAt: r.createdAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    wakeAt: r.wakeAt,
  };
}

/**
 * Audits one admin run action with its outcome, whatever happens in `act`: a refused start (cap, bad input, unbound
 * slot) is as much an admin action as one that queued a run. Arguments name the run and the flow, never the input.
 */
async function audited<T>(
  c: Context<AppEnv>,
  sink: AuditSink,
  action: string,
  args: Record<string, unknown>,
  act: () => Promise<{ value: T; runId: string; flowSlug: string }>,
): Promise<T> {
  const started = performance.now();
  const access = c.get('access');
  const entry = (
    outcome: 'ok' | 'error',
    extra: { runId?: string | null; errorCode?: string | null; flowSlug?: string },
  ) =>
    sink.record({
      workspaceId: access.workspaceId,
      requestId: c.get('requestId'),
      principalType: access.principal.kind,
      principalId: access.principal.id,
      keyId: access.keyId,
      kind: 'admin',
      action,
      arguments: { ...args, ...(extra.flowSlug ? { flowSlug: extra.flowSlug } : {}) },
      outcome,
      errorCode: extra.errorCode ?? null,
      runId: extra.runId ?? null,
      durationMs: Math.round(performance.now() - started),
    });
  try {
    const done = await act();
    entry('ok', { runId: done.runId, flowSlug: done.flowSlug });
    return done.value;
  } catch (error) {
    // A refused action names no run: an id the caller asked about stays in the arguments only.
    entry('error', { errorCode: isAppError(error) ? error.code : 'internal_error' });
    throw error;
  }
}

/**
 * Runs (docs/admin-api.md): list and read with `runs.read`, start and cancel with `flows.run` (running a draft also
 * needs `flows.manage`). Every read and write is the workspace's own run use case, the same the MCP tools call; starts
 * and cancels are audited (`runs.start`, `runs.cancel`) like the MCP path's.
 */
export function runRoutes(deps: { workspaceDeps: WorkspaceDeps; cursors: AdminCursors; audit: AuditSink }) {
  const read = requireCapability('runs.read');
  const run = requireCapability('flows.run');
  return new Hono<AppEnv>()
    .get(
      '/runs',
      read,
      query(
        runsQuery,
        () => new AppError('invalid_request', 'limit must be 1..200, status a run status, flow a slug'),
      ),
      async (c) => {
        const q = c.req.valid('query');
        const before = deps.cursors.open(c, 'runs', q.cursor, runPosition);
        const page = await workspaceOf(c, deps.workspaceDeps).runs.list({
          limit: q.limit,
          after: before ? JSON.stringify(before) : null,
          status: q.status ?? null,
          flowSlug: q.flow ?? null,
        });
        const next = page.nextAfter ? runPosition.parse(JSON.parse(page.nextAfter)) : null;
        return c.json({
          items: page.items.map(runView),
          nextCursor: next ? deps.cursors.seal(c, 'runs', next) : null,
        });
      },
    )
    .get('/runs/:runId', read, params(runParam, notFound), async (c) => {
      const { runId } = c.req.valid('param');
      const ws = workspaceOf(c, deps.workspaceDeps);
      const found = await ws.runs.get(runId);
      if (!found) throw notFound();
      const [steps, events, result] = await Promise.all([
        ws.runs.steps(runId, { limit: RUN_READ_STEPS, includeResults: false }),
        ws.runs.events(runId, { limit: RUN_READ_EVENTS, afterId: null, stepId: null }),
        ws.runs.result(runId),
      ]);
      return c.json({
        ...runView(found),
        result: result ? { mimeType: result.mimeType, value: result.value } : null,
        steps: steps ?? [],
        events: events ?? [],
      });
    })
    .post('/runs/:runId/cancel', run, params(runParam, notFound), async (c) => {
      const { runId } = c.req.valid('param');
      const cancelled = await audited(c, deps.audit, 'runs.cancel', { runId }, async () => {
        const run = await workspaceOf(c, deps.workspaceDeps).runs.cancel(runId);
        if (!run) throw notFound();
        return { value: run, runId: run.id, flowSlug: run.flowSlug };
      });
      return c.json(runView(cancelled));
    })
    .post(
      '/flows/:slug/runs',
      run,
      params(slugParam, () => new AppError('invalid_request', 'invalid flow slug')),
      jsonBody(startBody),
      async (c) => {
        const { slug } = c.req.valid('param');
        const body = c.req.valid('json');
        const what = {
          flowSlug: slug,
          target: body.target ?? 'live',
          ...(body.installationId ? { installationId: body.installationId } : {}),
          ...(body.invocation ? { invocation: body.invocation } : {}),
        };
        const { run: started, created } = await audited(c, deps.audit, 'runs.start', what, async () => {
          const outcome = await workspaceOf(c, deps.workspaceDeps).runs.start({
            slug,
            toolName: null,
            invocation: body.invocation ?? null,
            installationId: body.installationId ?? null,
            target: body.target ?? null,
            input: body.input,
            idempotencyKey: body.idempotencyKey ?? null,
            includeInstalled: may(c, 'installations.read'),
            allowDraft: may(c, 'flows.manage'),
          });
          return { value: outcome, runId: outcome.run.id, flowSlug: outcome.run.flowSlug };
        });
        return c.json({ runId: started.id, status: started.status, created }, 202);
      },
    );
}
