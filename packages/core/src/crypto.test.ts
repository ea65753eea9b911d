// The neutral module must answer exactly what node:crypto and Buffer answered, or stored hashes, sealed cursors and
// signed tokens would stop verifying: fixed vectors (computed with node:crypto) plus properties against it here,
// where tests run on Node.
import * as node from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64, fromHex, toBase64, toBase64Url, toHex, utf8Bytes, utf8Text } from './bytes.js';
import {
  hkdfSha256,
  hmacSha256,
  hmacSha256With,
  randomBytes,
  randomUuid,
  sha1Hex,
  sha256,
  sha256Hex,
  timingSafeEqual,
  timingSafeEqualText,
  useNativeSha256,
} from './crypto.js';

const KEY = new Uint8Array(32).fill(7);

describe('fixed vectors (computed with node:crypto)', () => {
  it('hashes text as UTF-8, lone surrogates as U+FFFD', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('a\ud800b')).toBe('05087813392efc16fe8ff448920c6328e53af865df39419436659d9ffda90f7b');
    expect(sha1Hex('select 1')).toBe('3232003928f9fe86a9cb634f450d5a53a4025819');
  });

  it('HMACs and derives keys as before', () => {
    expect(toBase64Url(hmacSha256(KEY, 'payload'))).toBe('Ptsv8pmbZgoaLIZZ1ldFr7JNe7WSSFUYh0D8_9bejxs');
    expect(toBase64Url(hmacSha256With(KEY)('payload'))).toBe('Ptsv8pmbZgoaLIZZ1ldFr7JNe7WSSFUYh0D8_9bejxs');
    expect(toHex(hmacSha256('key', 'payload'))).toBe(
      '5d98b45c90a207fa998ce639fea6f02ecc8cc3f36fef81d694fb856b4d0a28ca',
    );
    expect(toHex(hkdfSha256(KEY, 'flowgate/cursor-signing/v1', 32))).toBe(
      '3df7ba77222aed152c91325713128a0d36952122f28503c711d2fc13f6f86aa8',
    );
    expect(toHex(hkdfSha256(KEY, 'flowgate/mcp-client-token/v1', 32))).toBe(
      '26e21473ca24a988e2201ba8b6efa2c12d44d3404ddd8766cd540c22a6a3e81b',
    );
  });
});

describe('same answers as node:crypto and Buffer', () => {
  const bytes = fc.uint8Array({ maxLength: 300 });
  const text = fc.string({ unit: 'binary', maxLength: 200 });

  it('hashes and MACs', () => {
    fc.assert(
      fc.property(text, bytes, bytes, (t, k, m) => {
        expect(sha256Hex(t)).toBe(node.createHash('sha256').update(t).digest('hex'));
        expect(toHex(sha256(m))).toBe(node.createHash('sha256').update(m).digest('hex'));
        expect(sha1Hex(t)).toBe(node.createHash('sha1').update(t).digest('hex'));
        const mac = node.createHmac('sha256', k).update(t).digest('hex');
        expect(toHex(hmacSha256(k, t))).toBe(mac);
        const keyed = hmacSha256With(k);
        expect(toHex(keyed(t))).toBe(mac);
        expect(toHex(keyed(t))).toBe(mac); // a keyed MAC is reusable
        const info = t.slice(0, 40);
        const derived = Buffer.from(node.hkdfSync('sha256', k, Buffer.alloc(0), info, 32)).toString('hex');
        expect(toHex(hkdfSha256(k, info, 32))).toBe(derived);
      }),
      { numRuns: 200 },
    );
  });

  it('encodes and decodes bytes', () => {
    fc.assert(
      fc.property(bytes, text, (b, t) => {
        const buf = Buffer.from(b);
        expect(toBase64(b)).toBe(buf.toString('base64'));
        expect(toBase64Url(b)).toBe(buf.toString('base64url'));
        expect(toHex(b)).toBe(buf.toString('hex'));
        expect(fromHex(buf.toString('hex'))).toEqual(new Uint8Array(b));
        expect(utf8Bytes(t)).toEqual(new Uint8Array(Buffer.from(t, 'utf8')));
        expect(utf8Text(b)).toBe(buf.toString('utf8'));
      }),
      { numRuns: 300 },
    );
  });

  it('decodes base64 as leniently as Buffer: either alphabet, stray characters, padding', () => {
    const soup = fc.string({ unit: fc.constantFrom(...'AZaz09+/-_=\n $.'.split('')), maxLength: 80 });
    fc.assert(
      fc.property(fc.oneof(soup, fc.string({ maxLength: 40 })), (s) => {
        expect(fromBase64(s)).toEqual(new Uint8Array(Buffer.from(s, 'base64')));
        expect(fromBase64(s)).toEqual(new Uint8Array(Buffer.from(s, 'base64url')));
      }),
      { numRuns: 500 },
    );
  });
});

describe('comparison and randomness', () => {
  it('compares in full, different lengths never equal', () => {
    expect(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false);
    expect(timingSafeEqual(new Uint8Array([1]), new Uint8Array([1, 0]))).toBe(false);
    expect(timingSafeEqualText('abc', 'abc')).toBe(true);
    expect(timingSafeEqualText('abc', 'abd')).toBe(false);
    expect(timingSafeEqualText('', 'a')).toBe(false);
    expect(timingSafeEqualText('', '')).toBe(true);
    // Beyond ASCII and across surrogate pairs: equal exactly when the texts are.
    expect(timingSafeEqualText('é😀', 'é😀')).toBe(true);
    expect(timingSafeEqualText('é😀', 'é😁')).toBe(false);
    expect(timingSafeEqualText('a', 'A')).toBe(false);
    // The last unit differs: the whole text is compared, not a prefix.
    expect(timingSafeEqualText(`${'f'.repeat(63)}0`, `${'f'.repeat(63)}1`)).toBe(false);
  });

  it('draws fresh random bytes of any length, beyond one getRandomValues call', () => {
    expect(randomBytes(0)).toHaveLength(0);
    const big = randomBytes(70_000);
    expect(big).toHaveLength(70_000);
    expect(big.subarray(65_536).some((b) => b !== 0)).toBe(true);
    expect(toHex(randomBytes(16))).not.toBe(toHex(randomBytes(16)));
    expect(randomUuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('a native SHA-256', () => {
  it('is used once plugged in, with the same bytes as pure JS, and null goes back to pure JS', () => {
    const pure = sha256Hex('fgk_token');
    const calls: string[] = [];
    useNativeSha256({
      bytes: (data) => {
        calls.push('bytes');
        return new Uint8Array(node.createHash('sha256').update(data).digest());
      },
      hex: (data) => {
        calls.push('hex');
        return node.createHash('sha256').update(data).digest('hex');
      },
    });
    try {
      expect(sha256Hex('fgk_token')).toBe(pure);
      expect(toHex(sha256('fgk_token'))).toBe(pure);
      expect(calls).toEqual(['hex', 'bytes']);
    } finally {
      useNativeSha256(null);
    }
    expect(sha256Hex('fgk_token')).toBe(pure);
    expect(calls).toEqual(['hex', 'bytes']);
  });
});
