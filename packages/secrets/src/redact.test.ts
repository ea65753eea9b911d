import { describe, expect, it } from 'vitest';
import { createSecretBox, generateEncryptionKey, parseEncryptionKey } from './encryption.js';
import { REDACTED, redact, redactString } from './redact.js';

describe('secret box', () => {
  const box = createSecretBox(parseEncryptionKey(generateEncryptionKey()));

  it('round-trips and never contains the plaintext', () => {
    const env = box.encrypt('s3cr3t-value-123', 'ws-a');
    expect(env).not.toContain('s3cr3t');
    expect(env.startsWith('v1.')).toBe(true);
    expect(box.decrypt(env, 'ws-a')).toBe('s3cr3t-value-123');
  });

  it('binds the ciphertext to its workspace', () => {
    const env = box.encrypt('value', 'ws-a');
    expect(() => box.decrypt(env, 'ws-b')).toThrow(/could not be decrypted/);
  });

  it('rejects a short key', () => {
    expect(() => parseEncryptionKey(Buffer.alloc(16).toString('base64'))).toThrow(/32 bytes/);
  });
});

describe('redaction', () => {
  it('redacts values under secret-looking keys, at any depth', () => {
    const out = redact({
      a: 1,
      headers: { Authorization: 'Bearer abc', 'X-Api-Key': 'k' },
      nested: [{ password: 'p' }],
    });
    expect(out).toEqual({
      a: 1,
      headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED },
      nested: [{ password: REDACTED }],
    });
  });

  it('redacts token shapes inside free text', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const text = `key fgk_abc123_${'x'.repeat(40)} and ${jwt} and Bearer zzzzzzzzzzzz`;
    const out = redactString(text);
    expect(out).not.toContain('fgk_abc123');
    expect(out).not.toContain(jwt);
    expect(out).not.toContain('zzzzzzzzzzzz');
    expect(out.match(/\[redacted\]/g)).toHaveLength(3);
  });

  it('redacts PEM private keys and known secrets', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----';
    expect(redactString(`x ${pem} y`)).toBe(`x ${REDACTED} y`);
    expect(redactString('the value hunter22 leaked', { knownSecrets: ['hunter22'] })).toBe(
      `the value ${REDACTED} leaked`,
    );
  });

  it('redacts credentials inside URLs but keeps the URL readable', () => {
    expect(redactString('see https://bob:hunter2@db.example.test/x?a=1')).toBe(
      `see https://${REDACTED}@db.example.test/x?a=1`,
    );
    expect(redactString('https://api.test/v1?api_key=abc123&page=2&access_token=zz')).toBe(
      `https://api.test/v1?api_key=${REDACTED}&page=2&access_token=${REDACTED}`,
    );
    expect(redactString('https://api.test/v1?page=2&q=tokenizer')).toBe(
      'https://api.test/v1?page=2&q=tokenizer',
    );
  });

  it('stays linear on adversarial input', () => {
    const inputs = [
      `?${'token'.repeat(200_000)}`,
      `-----BEGIN ${'A'.repeat(500_000)}`,
      `-----BEGIN PRIVATE KEY-----${'x'.repeat(500_000)}`,
      'Bearer '.repeat(100_000),
      `https://${'a:'.repeat(200_000)}`,
      `fgk_${'a'.repeat(500_000)}`,
      'a.'.repeat(250_000),
      'x://a:'.repeat(100_000),
      'eyJaaaaa.'.repeat(50_000),
    ];
    for (const input of inputs) {
      const started = performance.now();
      redactString(input);
      // A guard against catastrophic backtracking (minutes when it regresses), not a speed target.
      expect(performance.now() - started).toBeLessThan(5_000);
    }
  });

  it('redacts an unterminated private key to the end and keeps a certificate', () => {
    expect(redactString('a -----BEGIN RSA PRIVATE KEY-----\nMIIE')).toBe(`a ${REDACTED}`);
    const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    expect(redactString(cert)).toBe(cert);
  });

  it('keeps an own __proto__ key as data', () => {
    const input = JSON.parse('{"__proto__": {"x": 1}, "a": 2}');
    const out = redact(input) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"x":1},"a":2}');
  });

  it('keeps the shape of an auth object while removing its secret', () => {
    expect(redact({ auth: { type: 'bearer', secret: 'x' } })).toEqual({
      auth: { type: 'bearer', secret: REDACTED },
    });
  });

  it('leaves ordinary data alone and bounds depth', () => {
    expect(
      redact({ name: 'acme', prompt_tokens: 3, maxTokens: 9, clientSecret: 'x', access_token: 'y' }),
    ).toEqual({
      name: 'acme',
      prompt_tokens: 3,
      maxTokens: 9,
      clientSecret: REDACTED,
      access_token: REDACTED,
    });
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) deep = [deep];
    expect(JSON.stringify(redact(deep, { maxDepth: 10 }))).toContain('[truncated]');
  });
});
