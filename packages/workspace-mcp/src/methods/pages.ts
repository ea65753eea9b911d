/** One page of a list method: the list cut at the sealed cursor, answered under the method's own key. */
import { paginate } from '../cursor.js';
import { LIMITS } from '../limits.js';
import { invalidParams } from '../protocol.js';
import type { Scope } from './scope.js';

export function listPage<T>(
  key: string,
  items: readonly T[],
  scope: Scope,
  kind: string,
  cursor: unknown,
): Record<string, unknown> {
  const page = paginate(items, scope.cursors, kind, cursor, LIMITS.listPageSize);
  if (!page) throw invalidParams('Invalid cursor');
  return page.nextCursor ? { [key]: page.items, nextCursor: page.nextCursor } : { [key]: page.items };
}
