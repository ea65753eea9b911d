import { describe, expect, it } from 'vitest';
import { createCursorCodec, paginate } from './cursor.js';

describe('cursors', () => {
  const codec = createCursorCodec('ws-a', 'key-1');

  it('round-trip positions of their own kind and workspace', () => {
    expect(codec.open('resources/list', codec.seal('resources/list', 50))).toBe(50);
    expect(codec.open('tool:x', codec.seal('tool:x', 'conn_9'))).toBe('conn_9');
  });

  it('accept only the exact spelling of their tag (base64url has spare bits in its last character)', () => {
    const c = codec.seal('resources/list', 50);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const others = [...alphabet].filter((ch) => ch !== c.at(-1));
    expect(others.filter((ch) => codec.open('resources/list', c.slice(0, -1) + ch) !== null)).toEqual([]);
  });

  it('refuse other kinds, workspaces, keys, tampering and junk', () => {
    const c = codec.seal('resources/list', 50);
    expect(codec.open('prompts/list', c)).toBeNull();
    expect(createCursorCodec('ws-b', 'key-1').open('resources/list', c)).toBeNull();
    expect(createCursorCodec('ws-a', 'key-2').open('resources/list', c)).toBeNull();
    const [payload, mac] = c.split('.') as [string, string];
    const altered = Buffer.from(JSON.stringify({ k: 'resources/list', s: 'ws-a', p: 0 })).toString(
      'base64url',
    );
    expect(codec.open('resources/list', `${altered}.${mac}`)).toBeNull();
    for (const junk of [
      undefined,
      null,
      5,
      '',
      '.',
      'abc',
      `${payload}.`,
      `.${mac}`,
      `${payload}.${mac}x`,
      'a'.repeat(2000),
    ]) {
      expect(codec.open('resources/list', junk)).toBeNull();
    }
  });

  it('default to a per-process key that still round-trips', () => {
    const a = createCursorCodec('ws-a');
    expect(a.open('k', a.seal('k', 1))).toBe(1);
    expect(codec.open('k', a.seal('k', 1))).toBeNull();
  });

  it('page in-memory lists and refuse out-of-range offsets', () => {
    const items = Array.from({ length: 5 }, (_, i) => i);
    const first = paginate(items, codec, 'l', undefined, 2);
    expect(first?.items).toEqual([0, 1]);
    const second = paginate(items, codec, 'l', first?.nextCursor, 2);
    expect(second?.items).toEqual([2, 3]);
    const third = paginate(items, codec, 'l', second?.nextCursor, 2);
    expect(third).toEqual({ items: [4], nextCursor: null });
    expect(paginate(items, codec, 'l', codec.seal('l', 99), 2)).toBeNull();
    expect(paginate(items, codec, 'l', codec.seal('l', -1), 2)).toBeNull();
    expect(paginate(items, codec, 'l', codec.seal('l', 'x'), 2)).toBeNull();
  });
});
