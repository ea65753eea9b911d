import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { API_KEY_SECRET_LENGTH, generateApiKey, hashSecret, parseApiKey, verifySecret } from './api-keys.js';

describe('generateApiKey', () => {
  it('produces fgk_<16 base62>_<43 base62> with a sha256 hex hash of the secret', () => {
    const k = generateApiKey();
    expect(k.keyId).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(k.secret).toMatch(/^[A-Za-z0-9]{43}$/);
    expect(k.apiKey).toBe(`fgk_${k.keyId}_${k.secret}`);
    expect(k.secretHash).toBe(createHash('sha256').update(k.secret).digest('hex'));
    expect(k.secretHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('carries at least 256 bits in the secret and never repeats', () => {
    expect(API_KEY_SECRET_LENGTH * Math.log2(62)).toBeGreaterThanOrEqual(256);
    const seen = new Set(Array.from({ length: 200 }, () => generateApiKey().apiKey));
    expect(seen.size).toBe(200);
  });

  it('round-trips through parse, hash and verify', () => {
    const k = generateApiKey();
    expect(parseApiKey(k.apiKey)).toEqual({ keyId: k.keyId, secret: k.secret });
    expect(hashSecret(k.secret)).toBe(k.secretHash);
    expect(verifySecret(k.secret, k.secretHash)).toBe(true);
  });
});

describe('parseApiKey', () => {
  const id = 'A1b2C3d4E5f6G7h8';
  const secret = 'x'.repeat(43);

  it.each([
    ['wrong prefix', `fgx_${id}_${secret}`],
    ['upper-case prefix', `FGK_${id}_${secret}`],
    ['no prefix', `${id}_${secret}`],
    ['missing secret', `fgk_${id}_`],
    ['missing secret and separator', `fgk_${id}`],
    ['missing key id', `fgk__${secret}`],
    ['underscore inside key id', `fgk_A1b2C3d4_5f6G7h8_${secret}`],
    ['extra part', `fgk_${id}_${secret}_x`],
    ['short key id', `fgk_${id.slice(1)}_${secret}`],
    ['long key id', `fgk_${id}Z_${secret}`],
    ['short secret', `fgk_${id}_${secret.slice(1)}`],
    ['long secret', `fgk_${id}_${secret}y`],
    ['base64url dash in secret', `fgk_${id}_${'x'.repeat(42)}-`],
    ['non-ascii in key id', `fgk_${id.slice(0, 15)}é_${secret}`],
    ['whitespace around', ` fgk_${id}_${secret}`],
    ['trailing newline', `fgk_${id}_${secret}\n`],
    ['empty', ''],
  ])('%s → null', (_label, token) => {
    expect(parseApiKey(token)).toBeNull();
  });

  it('does not throw on non-string input', () => {
    expect(parseApiKey(undefined as unknown as string)).toBeNull();
    expect(parseApiKey(42 as unknown as string)).toBeNull();
  });

  it('accepts the exact shape', () => {
    expect(parseApiKey(`fgk_${id}_${secret}`)).toEqual({ keyId: id, secret });
  });
});

describe('verifySecret', () => {
  it('rejects a different secret, a malformed hash and an upper-cased hash', () => {
    const secret = 'a'.repeat(43);
    const hash = hashSecret(secret);
    expect(verifySecret(secret, hash)).toBe(true);
    expect(verifySecret(`${'a'.repeat(42)}b`, hash)).toBe(false);
    expect(verifySecret(secret, hash.slice(1))).toBe(false);
    expect(verifySecret(secret, '')).toBe(false);
    expect(hash).toMatch(/[a-f]/);
    expect(verifySecret(secret, hash.toUpperCase())).toBe(false);
  });
});
