/**
 * The gateway's hashing, MACs, key derivation and randomness, the same on Node, Bun, Deno and workerd: no
 * `node:crypto`. Hashes and MACs are synchronous pure JS (@noble/hashes, audited) because they sit on the hot path
 * of every request (the API key's hash, cursor seals) and their callers are synchronous; Web Crypto's `subtle` would
 * make each of them async. Randomness is `crypto.getRandomValues`, which every one of those runtimes has.
 * Outputs are byte for byte those of `node:crypto`: stored hashes, cursors and tokens keep verifying.
 */
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha1 } from '@noble/hashes/legacy.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { toHex, utf8Bytes } from './bytes.js';

/** Text is hashed as its UTF-8 bytes, as `hash.update(text)` does. */
export type BytesLike = string | Uint8Array;

const bytesOf = (data: BytesLike): Uint8Array => (typeof data === 'string' ? utf8Bytes(data) : data);

/** A runtime's own SHA-256, byte for byte the same as the pure-JS one. */
export interface NativeSha256 {
  bytes(data: BytesLike): Uint8Array;
  hex(data: BytesLike): string;
}

let native: NativeSha256 | null = null;

/**
 * Hash with the runtime's native SHA-256 from now on. A Node entry passes node:crypto's: every authenticated request
 * hashes its bearer token, and for a token that is ≈15× cheaper than pure JS. The app itself imports no node:crypto,
 * so it still runs where there is none. Null goes back to pure JS.
 */
export function useNativeSha256(impl: NativeSha256 | null): void {
  native = impl;
}

export function sha256(data: BytesLike): Uint8Array {
  return native ? native.bytes(data) : nobleSha256(bytesOf(data));
}

export function sha256Hex(data: BytesLike): string {
  return native ? native.hex(data) : toHex(nobleSha256(bytesOf(data)));
}

/** SHA-1 hex: only for names that must be short and stable (prepared statements), never for security. */
export function sha1Hex(data: BytesLike): string {
  return toHex(sha1(bytesOf(data)));
}

/**
 * HMAC-SHA256 under one key, for a key that signs many messages (cursors, tokens): the key's inner and outer
 * states are computed once and copied per message instead of hashing the key again each time.
 */
export function hmacSha256With(key: BytesLike): (message: BytesLike) => Uint8Array {
  const keyed = hmac.create(nobleSha256, bytesOf(key));
  return (message) => keyed.clone().update(bytesOf(message)).digest();
}

export function hmacSha256(key: BytesLike, message: BytesLike): Uint8Array {
  return hmac(nobleSha256, bytesOf(key), bytesOf(message));
}

/** HKDF-SHA256 (RFC 5869); no salt means HashLen zero bytes, as with `hkdfSync` and an empty salt. */
export function hkdfSha256(
  ikm: Uint8Array,
  info: BytesLike,
  length: number,
  salt: Uint8Array = new Uint8Array(0),
): Uint8Array {
  return hkdf(nobleSha256, ikm, salt, bytesOf(info), length);
}

/**
 * Compares in time that depends only on the length: false for different lengths (unlike `node:crypto`'s, which
 * throws), so callers need no length check of their own.
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/**
 * `timingSafeEqual` of two texts (e.g. a presented MAC against the expected one), over their UTF-16 code units: the
 * same answer as over their UTF-8 bytes, without encoding either (it runs on every authenticated request).
 */
export function timingSafeEqualText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

// getRandomValues fills at most 65 536 bytes per call.
const MAX_RANDOM_CHUNK = 65_536;

/** Bytes from the runtime's CSPRNG. */
export function randomBytes(length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i += MAX_RANDOM_CHUNK) {
    globalThis.crypto.getRandomValues(out.subarray(i, Math.min(length, i + MAX_RANDOM_CHUNK)));
  }
  return out;
}

/** A random UUID (v4), as `crypto.randomUUID()`, present on every runtime in secure contexts. */
export function randomUuid(): string {
  return globalThis.crypto.randomUUID();
}
