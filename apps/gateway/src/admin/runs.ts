import type { Capability } from '@flowgate/auth';
import { AppError, INSTALLATION_ID_PATTERN, RUN_STATUSES } from '@flowgate/core';
import type { RunRecord } from '@flowgate/workspace';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { requireCapability } from '../middleware/workspace-access.js';
import type { AdminCursors } from './cursor.js';
import { jsonBody, params, query } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

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
 * Runs (docs/admin-api.md): list and read with `runs.read`, start and cancel with `flows.run` (running a draft also
 * needs `flows.manage`). Every read and write is the workspace's own run use case, the same the MCP tools call; starts
 * and cancels are audited by the domain (`runs.start`, `runs.cancel`), refusals included.
 */
export function runRoutes(deps: AdminWorkspaces & { cursors: AdminCursors }) {
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
        const page = await workspaceOf(c, deps).runs.list({
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
      const ws = workspaceOf(c, deps);
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
      const cancelled = await workspaceOf(c, deps).runs.cancel(runId);
      if (!cancelled) throw notFound();
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
        const { run: started, created } = await workspaceOf(c, deps).runs.start({
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
        return c.json({ runId: started.id, status: started.status, created }, 202);
      },
    );
}
