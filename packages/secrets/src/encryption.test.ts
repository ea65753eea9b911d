// Secrets stored by earlier releases (encrypted with node:crypto) must keep decrypting, and what is written now
// must be what node:crypto would read: fixed envelopes plus a round trip against node:crypto, where tests run on Node.
import * as node from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSecretBox, parseEncryptionKey } from './encryption.js';

const KEY = new Uint8Array(32).fill(7);
const box = createSecretBox(KEY);

function nodeEncrypt(plaintext: string, workspaceId: string): string {
  const nonce = node.randomBytes(12);
  const cipher = node.createCipheriv('aes-256-gcm', KEY, nonce);
  cipher.setAAD(Buffer.from(workspaceId, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', nonce, ct, cipher.getAuthTag()]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

function nodeDecrypt(envelope: string, workspaceId: string): string {
  const [, nonce, ct, tag] = envelope.split('.') as [string, string, string, string];
  const decipher = node.createDecipheriv('aes-256-gcm', KEY, Buffer.from(nonce, 'base64url'));
  decipher.setAAD(Buffer.from(workspaceId, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

describe('secret envelopes written by node:crypto', () => {
  it('decrypt byte for byte (fixed vectors)', () => {
    expect(box.decrypt('v1.CQkJCQkJCQkJCQkJ.VLbn5tuE7KIcT79XjY_N.LmCTblGJVCtn3kqqLsE5XQ', 'acme')).toBe(
      's3cret-ü-token',
    );
    expect(box.decrypt('v1.CQkJCQkJCQkJCQkJ..SwzDPRJLzZDNwK1eLZo40Q', 'acme')).toBe('');
  });

  it('stay bound to their workspace and refuse a changed byte or a cut tag', () => {
    const env = 'v1.CQkJCQkJCQkJCQkJ.VLbn5tuE7KIcT79XjY_N.LmCTblGJVCtn3kqqLsE5XQ';
    expect(() => box.decrypt(env, 'acme2')).toThrow(/could not be decrypted/);
    expect(() => box.decrypt(env.replace('VLbn', 'VLbm'), 'acme')).toThrow(/could not be decrypted/);
    expect(() => box.decrypt(env.slice(0, -4), 'acme')).toThrow(/could not be decrypted/);
    expect(() => box.decrypt('v2.a.b.c', 'acme')).toThrow(/unknown format/);
  });

  it('round-trip both ways with node:crypto', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        (text, ws) => {
          expect(box.decrypt(nodeEncrypt(text, ws), ws)).toBe(text);
          expect(nodeDecrypt(box.encrypt(text, ws), ws)).toBe(text);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('parseEncryptionKey', () => {
  it('reads the key as Buffer did: hex in either case, base64 or base64url, padding and newline tolerated', () => {
    const raw = new Uint8Array(Array.from({ length: 32 }, (_, i) => i * 7 + 250));
    const hex = Buffer.from(raw).toString('hex');
    const b64 = Buffer.from(raw).toString('base64');
    for (const spelling of [
      hex,
      hex.toUpperCase(),
      b64,
      `${b64}\n`,
      b64.replace(/=+$/, ''),
      Buffer.from(raw).toString('base64url'),
    ]) {
      expect(parseEncryptionKey(spelling)).toEqual(raw);
    }
    expect(() => parseEncryptionKey(hex.slice(2))).toThrow(/32 bytes/);
  });
});
