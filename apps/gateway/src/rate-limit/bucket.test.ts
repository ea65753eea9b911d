import { describe, expect, it } from 'vitest';
import { createMemoryLimiter, takeToken } from './bucket.js';

const spec = { capacity: 3, windowMs: 3_000 }; // one token per second

describe('takeToken', () => {
  it('starts full, spends one token per request, then refuses with the wait for the next token', () => {
    let state = takeToken(undefined, spec, 0);
    expect(state.result).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0 });
    state = takeToken(state.state, spec, 0);
    state = takeToken(state.state, spec, 0);
    expect(state.result.remaining).toBe(0);
    const refused = takeToken(state.state, spec, 250);
    expect(refused.result).toEqual({ allowed: false, remaining: 0, retryAfterMs: 750 });
  });

  it('refills evenly and never beyond its capacity', () => {
    let s = takeToken(undefined, spec, 0);
    s = takeToken(s.state, spec, 0);
    s = takeToken(s.state, spec, 0);
    expect(takeToken(s.state, spec, 1_000).result.allowed).toBe(true);
    const later = takeToken(s.state, spec, 3_600_000);
    expect(later.result).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0 });
  });

  it('does not let a clock going backwards mint tokens', () => {
    const s = takeToken({ tokens: 0, at: 10_000 }, spec, 5_000);
    expect(s.result.allowed).toBe(false);
  });
});

describe('createMemoryLimiter', () => {
  it('keeps buckets apart and refuses only the one that is spent', async () => {
    let now = 0;
    const limiter = createMemoryLimiter({ now: () => now });
    for (let i = 0; i < 3; i++) expect((await limiter.take('a', spec)).allowed).toBe(true);
    expect(await limiter.take('a', spec)).toMatchObject({ allowed: false, retryAfterMs: 1_000 });
    expect((await limiter.take('b', spec)).allowed).toBe(true);
    now = 1_000;
    expect((await limiter.take('a', spec)).allowed).toBe(true);
  });

  it('stays bounded: past maxKeys the stalest bucket is dropped and starts full again', async () => {
    const limiter = createMemoryLimiter({ now: () => 0, maxKeys: 2 });
    for (let i = 0; i < 3; i++) await limiter.take('old', spec);
    expect((await limiter.take('old', spec)).allowed).toBe(false);
    await limiter.take('x', spec);
    await limiter.take('y', spec); // evicts 'old'
    expect((await limiter.take('old', spec)).allowed).toBe(true);
  });

  it('orders buckets by their last touch, to within a second', async () => {
    let t = 0;
    const limiter = createMemoryLimiter({ now: () => t, maxKeys: 2 });
    for (let i = 0; i < 3; i++) await limiter.take('a', spec);
    for (let i = 0; i < 3; i++) await limiter.take('b', spec);
    t = 1_500;
    expect((await limiter.take('a', spec)).allowed).toBe(true); // 0.5 left; 'a' moves behind 'b'
    await limiter.take('c', spec); // evicts 'b', now the stalest
    expect((await limiter.take('a', spec)).allowed).toBe(false); // 'a' kept its count
    // 'b' starts full again (kept, it would have had 1.5 tokens: one request).
    for (let i = 0; i < 3; i++) expect((await limiter.take('b', spec)).allowed).toBe(true);
  });
});
