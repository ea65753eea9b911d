/**
 * Token buckets: `capacity` tokens, refilled continuously at `capacity` per `windowMs`. A request takes one token;
 * with none left it is refused, and `retryAfterMs` says when the next token arrives.
 */
export interface BucketSpec {
  capacity: number;
  windowMs: number;
}

export interface TakeResult {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** 0 when allowed; otherwise how long until one token is back. */
  retryAfterMs: number;
}

/**
 * Where buckets live right now (`/readyz` shows it): `memory` for a gateway without Redis, `redis` when shared,
 * `local-fallback` while a configured Redis does not answer and each process counts on its own.
 */
export type RateLimitStore = 'memory' | 'redis' | 'local-fallback';

export interface RateLimiter {
  readonly kind: 'memory' | 'redis';
  store(): RateLimitStore;
  take(key: string, spec: BucketSpec): Promise<TakeResult>;
  close(): Promise<void>;
}

export interface BucketState {
  tokens: number;
  at: number;
}

/** One step of the bucket, shared by the in-process limiter and mirrored by the Redis script. */
export function takeToken(
  state: BucketState | undefined,
  spec: BucketSpec,
  now: number,
): { state: BucketState; result: TakeResult } {
  const rate = spec.capacity / spec.windowMs;
  const elapsed = state ? Math.max(0, now - state.at) : 0;
  const tokens = state ? Math.min(spec.capacity, state.tokens + elapsed * rate) : spec.capacity;
  if (tokens >= 1) {
    const left = tokens - 1;
    return {
      state: { tokens: left, at: now },
      result: { allowed: true, remaining: Math.floor(left), retryAfterMs: 0 },
    };
  }
  return {
    state: { tokens, at: now },
    result: { allowed: false, remaining: 0, retryAfterMs: Math.ceil((1 - tokens) / rate) },
  };
}

/**
 * Buckets in this process. Bounded: past `maxKeys` the least recently touched buckets go first (a flood of
 * distinct addresses cannot grow memory without limit; a dropped bucket simply starts full again). A bucket moves to
 * the back of that order at most once a second: a busy one is never first for longer, and its entry is not deleted
 * and inserted again on every request (which also made the map rebuild its table now and then).
 */
const MOVE_EVERY_MS = 1000;

export function createMemoryLimiter(options: { now?: () => number; maxKeys?: number } = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 100_000;
  const buckets = new Map<string, BucketState & { movedAt: number }>();
  return {
    kind: 'memory',
    store: () => 'memory',
    async take(key, spec) {
      const t = now();
      const previous = buckets.get(key);
      const { state, result } = takeToken(previous, spec, t);
      if (previous !== undefined && t - previous.movedAt < MOVE_EVERY_MS) {
        // Set on a key already there keeps its place.
        buckets.set(key, { tokens: state.tokens, at: state.at, movedAt: previous.movedAt });
        return result;
      }
      // Re-inserting moves the key to the end of the Map's order, which makes the first key the stalest.
      buckets.delete(key);
      buckets.set(key, { tokens: state.tokens, at: state.at, movedAt: t });
      if (buckets.size > maxKeys) {
        const oldest = buckets.keys().next().value;
        if (oldest !== undefined) buckets.delete(oldest);
      }
      return result;
    },
    async close() {
      buckets.clear();
    },
  };
}
