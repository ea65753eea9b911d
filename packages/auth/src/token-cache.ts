import { sha256Hex } from '@flowgate/core';

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * Bounded cache of verified tokens. Callers hand in the raw token; only its sha256 is ever stored,
 * so a heap dump does not leak bearer credentials. Least recently used entries are evicted first.
 */
export class TokenCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** The key inserted last: already the most recently used, so a hit on it moves nothing. */
  #newest: string | undefined;

  constructor(maxEntries: number, now: () => number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 0)
      throw new RangeError('maxEntries must be a non-negative integer');
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  static keyOf(token: string): string {
    return sha256Hex(token);
  }

  get(token: string): V | undefined {
    return this.getByKey(TokenCache.keyOf(token));
  }

  /** `get` for a caller that already hashed the token with `keyOf` (one hash per request instead of two). */
  getByKey(k: string): V | undefined {
    const entry = this.#entries.get(k);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(k);
      if (k === this.#newest) this.#newest = undefined;
      return undefined;
    }
    // Re-insert to mark as most recently used (Map keeps insertion order); a busy token usually is already.
    if (k !== this.#newest) {
      this.#entries.delete(k);
      this.#entries.set(k, entry);
      this.#newest = k;
    }
    return entry.value;
  }

  /** Stores until `expiresAt` (epoch ms); an expiry not in the future stores nothing. */
  set(token: string, value: V, expiresAt: number): void {
    if (this.#maxEntries === 0 || !(expiresAt > this.#now())) return;
    const k = TokenCache.keyOf(token);
    this.#entries.delete(k);
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(k, { value, expiresAt });
    this.#newest = k;
  }

  /** Drops every entry whose value matches; used for revocation, so a linear scan is fine. */
  deleteWhere(predicate: (value: V) => boolean): number {
    let n = 0;
    for (const [k, entry] of this.#entries) {
      if (predicate(entry.value)) {
        this.#entries.delete(k);
        if (k === this.#newest) this.#newest = undefined;
        n++;
      }
    }
    return n;
  }

  clear(): void {
    this.#entries.clear();
    this.#newest = undefined;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The stored keys (token hashes), for inspection in tests and diagnostics. */
  keys(): string[] {
    return [...this.#entries.keys()];
  }
}
