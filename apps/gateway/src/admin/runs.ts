import type { Capability } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import { redact } from '@flowgate/secrets';
import { Hono, type MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import { errorResponse } from '../middleware/errors.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { pageQuery } from './schemas.js';

export function requireCapability(capability: Capability): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const access = c.get('access');
    if (!access.isAdmin && !access.capabilities.has(capability)) {
      return errorResponse(c, new AppError('forbidden', `this action needs the ${capability} capability`));
    }
    await next();
  };
}

const RUN_ID = /^run_[A-Za-z0-9]{8,40}$/;
/** A Postgres timestamptz as text, e.g. `2026-11-22 09:10:11.123456+00`. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)?$/;

function runView(r: repos.RunRow) {
  return redact({
    runId: r.id,
    flowSlug: r.flowSlug,
    installationId: r.installationId,
    version: r.version,
    target: r.target,
    toolName: r.toolName,
    status: r.status,
    error: r.error,
    createdAt: r.createdAt.toISOString(),
    startedAt: r.startedAt?.toISOString() ?? null,
    finishedAt: r.finishedAt?.toISOString() ?? null,
  });
}

/** Read-only run routes of spec 11.1 (`runs.read`). Runs are created by the run engine. */
export function runRoutes(db: Database) {
  const app = new Hono<AppEnv>();
  // Per-route guards: a `use('*')` here would also run for every sibling route once mounted.
  const gate = requireCapability('runs.read');
  app.get('/runs', gate, async (c) => {
    const q = pageQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'limit must be 1..200');
    const before = decodeCursor<{ createdAt: string; id: string }>(q.data.cursor, ['createdAt', 'id']);
    if (before && !TIMESTAMP.test(String(before.createdAt)))
      throw new AppError('invalid_request', 'invalid cursor');
    const rows = await repos.listRuns(db, c.get('access').workspaceId, {
      limit: q.data.limit + 1,
      before: before ? { createdAt: String(before.createdAt), id: String(before.id) } : undefined,
    });
    const page = rows.slice(0, q.data.limit);
    const last = page.at(-1);
    return c.json({
      items: page.map(runView),
      nextCursor:
        rows.length > q.data.limit && last ? encodeCursor({ createdAt: last.position, id: last.id }) : null,
    });
  });
  app.get('/runs/:runId', gate, async (c) => {
    const runId = c.req.param('runId');
    if (!RUN_ID.test(runId)) throw new AppError('not_found', 'run not found');
    const row = await repos.getRun(db, c.get('access').workspaceId, runId);
    if (!row) throw new AppError('not_found', 'run not found');
    return c.json(runView(row));
  });
  return app;
}
