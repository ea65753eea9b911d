import { describe, expect, it } from 'vitest';
import { TokenCache } from './token-cache.js';

describe('TokenCache', () => {
  it('stores only sha256 hex keys, never the raw token', () => {
    const cache = new TokenCache<string>(10, () => 0);
    const token = 'fgk_A1b2C3d4E5f6G7h8_secretsecretsecretsecretsecretsecretsecret1';
    cache.set(token, 'v', 1000);
    expect(cache.get(token)).toBe('v');
    const keys = cache.keys();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(keys[0]).toBe(TokenCache.keyOf(token));
    expect(keys.some((k) => k.includes('secret'))).toBe(false);
  });

  it('expires entries at their deadline and refuses deadlines not in the future', () => {
    let t = 100;
    const cache = new TokenCache<string>(10, () => t);
    cache.set('a', 'A', 200);
    cache.set('b', 'B', 100);
    cache.set('c', 'C', 50);
    expect(cache.size).toBe(1);
    t = 199;
    expect(cache.get('a')).toBe('A');
    t = 200;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entry when full', () => {
    const cache = new TokenCache<string>(2, () => 0);
    cache.set('a', 'A', 10);
    cache.set('b', 'B', 10);
    expect(cache.get('a')).toBe('A'); // a is now the most recent
    cache.set('c', 'C', 10);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('A');
    expect(cache.get('c')).toBe('C');
  });

  it('keeps the order when the most recent entry is hit again, also after it was deleted and set anew', () => {
    const cache = new TokenCache<string>(2, () => 0);
    cache.set('a', 'A', 10);
    cache.set('b', 'B', 10);
    expect(cache.get('b')).toBe('B');
    expect(cache.get('b')).toBe('B');
    cache.set('c', 'C', 10); // a is the least recently used
    expect(cache.get('a')).toBeUndefined();
    expect(cache.deleteWhere((v) => v === 'C')).toBe(1);
    cache.set('c', 'C2', 10);
    expect(cache.get('b')).toBe('B'); // b moves after c
    cache.set('d', 'D', 10); // c is the least recently used now
    expect(cache.get('c')).toBeUndefined();
    expect(cache.get('b')).toBe('B');
    expect(cache.get('d')).toBe('D');
  });

  it('deletes by predicate and clears', () => {
    const cache = new TokenCache<{ k: string }>(10, () => 0);
    cache.set('1', { k: 'x' }, 10);
    cache.set('2', { k: 'y' }, 10);
    cache.set('3', { k: 'x' }, 10);
    expect(cache.deleteWhere((v) => v.k === 'x')).toBe(2);
    expect(cache.get('2')).toEqual({ k: 'y' });
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it('with zero capacity stores nothing', () => {
    const cache = new TokenCache<string>(0, () => 0);
    cache.set('a', 'A', 10);
    expect(cache.size).toBe(0);
    expect(cache.get('a')).toBeUndefined();
  });
});
