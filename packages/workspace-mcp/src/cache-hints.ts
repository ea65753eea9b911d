/**
 * 2026-07-28 cache hints (`CacheableResult`, SEP-2549): `ttlMs` (how long the result may be treated as fresh) and
 * `cacheScope` on tools/list, prompts/list, resources/list, resources/templates/list, resources/read and
 * server/discover. Earlier revisions have no such fields and never get them.
 */
import type { McpRequestContext } from './context.js';
import type { McpSurface } from './surface.js';

export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);

/** The lists whose content follows only from the caller's key, the workspace policy and the request itself. */
const KEYED_LISTS: ReadonlySet<string> = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
]);

/**
 * How long a list answered on this endpoint stays valid for this key, in ms. The workspace endpoint's lists are
 * the catalog filtered by the key's capabilities and the workspace policy, which the gateway itself reads through
 * caches (`listCacheTtlMs`: the shorter of the auth and policy cache lifetimes), so a client reusing a list that
 * long lags a change no more than the gateway's own bound. A per-flow endpoint's tools change with every release of
 * its flow (read fresh on each request): 0. Absent: 0.
 */
export function listTtlMs(surface: McpSurface, ctx: McpRequestContext): number {
  if (surface.flowSlug !== null) return 0;
  const ttl = ctx.listCacheTtlMs ?? 0;
  return Number.isFinite(ttl) && ttl > 0 ? Math.floor(ttl) : 0;
}

/**
 * The hint for one method's result, or null when it is not cacheable. Always `private`: what a caller sees depends
 * on its key, its narrowing headers and the workspace policy, so nothing may be shared across callers. Reads and
 * server/discover stay at 0 (a run resource is live; discover's instructions follow the same inputs but are read
 * once per connection anyway).
 */
export function cacheHint(method: string, listTtl: number): { ttlMs: number; cacheScope: 'private' } | null {
  if (!CACHEABLE_METHODS.has(method)) return null;
  return { ttlMs: KEYED_LISTS.has(method) ? listTtl : 0, cacheScope: 'private' };
}
