import { fromHex, randomBase62, sha256, sha256Hex, timingSafeEqual } from '@flowgate/core';

export const API_KEY_PREFIX = 'fgk_';
export const API_KEY_ID_LENGTH = 16;
/** 43 base62 characters carry ≈256 bits (43 · log2 62 ≈ 256), above the 32 random bytes a key secret must carry. */
export const API_KEY_SECRET_LENGTH = 43;

const API_KEY_PATTERN = /^fgk_([A-Za-z0-9]{16})_([A-Za-z0-9]{43})$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface GeneratedApiKey {
  keyId: string;
  secret: string;
  /** `fgk_<keyId>_<secret>`: shown to the caller once, never stored. */
  apiKey: string;
  /** What the database keeps. */
  secretHash: string;
}

export function generateApiKey(): GeneratedApiKey {
  const keyId = randomBase62(API_KEY_ID_LENGTH);
  const secret = randomBase62(API_KEY_SECRET_LENGTH);
  return { keyId, secret, apiKey: `${API_KEY_PREFIX}${keyId}_${secret}`, secretHash: hashSecret(secret) };
}

/** Splits a presented key into its parts; `null` for anything that is not exactly a Flowgate key. */
export function parseApiKey(token: string): { keyId: string; secret: string } | null {
  if (typeof token !== 'string') return null;
  const m = API_KEY_PATTERN.exec(token);
  if (!m || m[1] === undefined || m[2] === undefined) return null;
  return { keyId: m[1], secret: m[2] };
}

/** sha256 hex. The secret is 256 random bits, so a slow password hash would add latency and no safety. */
export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

/** Compares in constant time; a malformed stored hash never matches. */
export function verifySecret(secret: string, hash: string): boolean {
  if (typeof secret !== 'string' || typeof hash !== 'string' || !SHA256_HEX.test(hash)) return false;
  return timingSafeEqual(sha256(secret), fromHex(hash));
}
