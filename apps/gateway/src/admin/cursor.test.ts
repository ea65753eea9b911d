import { describe, expect, it } from 'vitest';
import { paginate } from './cursor.js';

const rows = Array.from({ length: 5 }, (_, i) => ({ id: `r${i}` }));
/** A keyset source over `rows`: what a repository does with `afterId` and `limit`. */
const source = (after?: string) => async (take: number) =>
  rows.filter((r) => after === undefined || r.id > after).slice(0, take);

describe('paginate', () => {
  it('asks for one row more than the page and links to the next page only when there is one', async () => {
    const asked: number[] = [];
    const first = await paginate(
      2,
      (take) => {
        asked.push(take);
        return source()(take);
      },
      (last) => last.id,
    );
    expect(asked).toEqual([3]);
    expect(first.items.map((r) => r.id)).toEqual(['r0', 'r1']);
    expect(first.nextCursor).toBe('r1');

    const second = await paginate(3, source(first.nextCursor ?? undefined), (last) => last.id);
    expect(second.items.map((r) => r.id)).toEqual(['r2', 'r3', 'r4']);
    expect(second.nextCursor).toBeNull();
  });

  it('an empty list has no next page', async () => {
    expect(
      await paginate(
        10,
        async () => [],
        () => 'x',
      ),
    ).toEqual({ items: [], nextCursor: null });
  });
});
