import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, paginate } from './cursor.js';

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
      (last) => ({ id: last.id }),
    );
    expect(asked).toEqual([3]);
    expect(first.items.map((r) => r.id)).toEqual(['r0', 'r1']);
    const after = decodeCursor<{ id: string }>(first.nextCursor ?? undefined, ['id']);
    expect(after).toEqual({ id: 'r1' });

    const second = await paginate(3, source(after?.id), (last) => ({ id: last.id }));
    expect(second.items.map((r) => r.id)).toEqual(['r2', 'r3', 'r4']);
    expect(second.nextCursor).toBeNull();
  });

  it('an empty list has no next page', async () => {
    expect(
      await paginate(
        10,
        async () => [],
        () => ({ id: 'x' }),
      ),
    ).toEqual({ items: [], nextCursor: null });
  });

  it('cursors round-trip and a tampered one is invalid_request', () => {
    expect(decodeCursor(encodeCursor({ createdAt: 't', id: 'x' }), ['createdAt', 'id'])).toEqual({
      createdAt: 't',
      id: 'x',
    });
    expect(() => decodeCursor('%%%', ['id'])).toThrow('invalid cursor');
    expect(() => decodeCursor(encodeCursor({ other: 1 }), ['id'])).toThrow('invalid cursor');
  });
});
