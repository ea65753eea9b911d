import { AppError, FLOW_SLUG_PATTERN, INSTALLATION_ID_PATTERN } from '@flowgate/core';
import { createTwoFilesPatch } from 'diff';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { params, query } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

const slugParam = z.object({ slug: z.string().regex(FLOW_SLUG_PATTERN) });
const installationParam = z.object({ id: z.string().regex(INSTALLATION_ID_PATTERN) });
const version = z.coerce.number().int().min(1).max(1_000_000_000);
const diffQuery = z.object({ from: version, to: version });

const flowNotFound = (c: Context<AppEnv>) =>
  new AppError('not_found', `flow ${c.req.param('slug')} not found`);

/**
 * What an admin reviews before a decision (docs/admin-api.md, "Review"): the text a metadata trust opt-in would
 * cover, of an own flow or an installation, and the difference between two released versions of a flow.
 */
export function reviewRoutes(deps: AdminWorkspaces) {
  return new Hono<AppEnv>()
    .get(
      '/flows/:slug/diff',
      requireWorkspaceAdmin,
      params(slugParam, () => new AppError('not_found', 'no such version of this flow')),
      query(diffQuery, () => new AppError('invalid_request', 'from and to are version numbers')),
      async (c) => {
        const { slug } = c.req.valid('param');
        const q = c.req.valid('query');
        const flow = await workspaceOf(c, deps).flows.open({
          slug,
          installationId: null,
          includeInstalled: false,
        });
        const [from, to] = flow
          ? await Promise.all([flow.definition({ version: q.from }), flow.definition({ version: q.to })])
          : [null, null];
        if (!from || !to) throw new AppError('not_found', 'no such version of this flow');
        const patch = createTwoFilesPatch(`${slug} v${q.from}`, `${slug} v${q.to}`, from.literal, to.literal);
        return c.json({ from: q.from, to: q.to, patch });
      },
    )
    .get(
      '/flows/:slug/trust',
      requireWorkspaceAdmin,
      params(slugParam, () => new AppError('not_found', 'flow not found')),
      async (c) => {
        const review = await workspaceOf(c, deps).flows.reviewTrust({ slug: c.req.valid('param').slug });
        if (!review) throw flowNotFound(c);
        return c.json(review);
      },
    )
    .get(
      '/installations/:id/trust',
      requireWorkspaceAdmin,
      params(installationParam, () => new AppError('not_found', 'installation not found')),
      async (c) => {
        const review = await workspaceOf(c, deps).flows.reviewTrust({
          installationId: c.req.valid('param').id,
        });
        if (!review) throw new AppError('not_found', 'installation not found');
        return c.json(review);
      },
    );
}
