/**
 * Parked waits: a tools/call with `wait_ms`, a per-flow tool call and a tasks/result each hold a request open while a
 * run goes on. Each costs a socket, a timer and a listener for up to LIMITS.callFlowToolMaxWaitMs, so their number is
 * bounded per key and per process; past a bound the caller is told `too_many_waits` at once and polls instead.
 */
import type { McpPrincipal } from './context.js';

export const TOO_MANY_WAITS = 'too_many_waits';
export const DEFAULT_MAX_WAITS_PER_KEY = 32;
export const DEFAULT_MAX_WAITS = 512;

export interface WaitLimits {
  maxPerKey: number;
  maxTotal: number;
}

/** Refused: the caller is over one of the bounds. Nothing was started. */
export class TooManyWaits extends Error {
  readonly code = TOO_MANY_WAITS;
  readonly scope: 'key' | 'process';
  readonly limit: number;
  constructor(scope: 'key' | 'process', limit: number) {
    super(
      scope === 'key'
        ? `This key already has ${limit} requests waiting on runs; poll get_run_status or tasks/get instead of waiting`
        : `The gateway already holds ${limit} requests waiting on runs; poll get_run_status or tasks/get instead of waiting`,
    );
    this.name = 'TooManyWaits';
    this.scope = scope;
    this.limit = limit;
  }
}

export interface WaitGate {
  readonly limits: WaitLimits;
  /** Takes a slot or throws TooManyWaits; the returned function gives it back (idempotent). */
  acquire(key: string): () => void;
  /** Slots held now, in all and by key (keys with none are not kept). */
  held(): { total: number; keys: number };
}

export function createWaitGate(limits: Partial<WaitLimits> = {}): WaitGate {
  const bounds: WaitLimits = {
    maxPerKey: limits.maxPerKey ?? DEFAULT_MAX_WAITS_PER_KEY,
    maxTotal: limits.maxTotal ?? DEFAULT_MAX_WAITS,
  };
  const byKey = new Map<string, number>();
  let total = 0;
  return {
    limits: bounds,
    acquire(key) {
      const mine = byKey.get(key) ?? 0;
      if (mine >= bounds.maxPerKey) throw new TooManyWaits('key', bounds.maxPerKey);
      if (total >= bounds.maxTotal) throw new TooManyWaits('process', bounds.maxTotal);
      byKey.set(key, mine + 1);
      total++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        const left = (byKey.get(key) ?? 1) - 1;
        // A key with no wait left is dropped, so the map is as large as the keys waiting now, not every key seen.
        if (left <= 0) byKey.delete(key);
        else byKey.set(key, left);
      };
    },
    held() {
      return { total, keys: byKey.size };
    },
  };
}

/** One process-wide gate for callers that bring none (tests, embedders); the gateway passes its configured one. */
const DEFAULT_GATE = createWaitGate();

/** The key a caller's waits count against: its API key, else the principal. */
export function waitKey(principal: McpPrincipal): string {
  return principal.keyId ?? `${principal.kind}:${principal.id}`;
}

/** Runs `fn` holding one wait slot of the caller's; the slot is given back however `fn` ends. */
export async function withWaitSlot<T>(
  request: { principal: McpPrincipal; waits?: WaitGate | undefined },
  fn: () => Promise<T>,
): Promise<T> {
  const release = (request.waits ?? DEFAULT_GATE).acquire(waitKey(request.principal));
  try {
    return await fn();
  } finally {
    release();
  }
}
