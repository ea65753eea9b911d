// The key kinds createPublicKey told apart before must read the same without node:crypto, in every PEM form it
// accepted; node:crypto (tests run on Node) is the reference for the SPKI handed to Web Crypto.
import * as node from 'node:crypto';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createJwtVerifier } from './jwt.js';
import { readPublicKeyPem } from './public-key-pem.js';

/** A self-signed P-256 certificate (openssl req -x509), a fixed vector for the certificate form. */
const CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIBfjCCASOgAwIBAgIUCVh5LplM/aTD2x1+L23W7MsNSdUwCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIaWRwLnRlc3QwIBcNMjYxMTI3MDg0NDAyWhgPMjEyNjExMDMw
ODQ0MDJaMBMxETAPBgNVBAMMCGlkcC50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEGASmkCdD7wfX7GTYqtKSjBFrotOgzCmeV5tmhO+VL8XbN8ivHOsuILjb
pKG+p1SFueGv+Q6L123Up+/c2+Xs5aNTMFEwHQYDVR0OBBYEFKYanze9iExw5o10
LQBjRB2BVXtcMB8GA1UdIwQYMBaAFKYanze9iExw5o10LQBjRB2BVXtcMA8GA1Ud
EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAPBVPgQHynx5grPj6V6pkkHN
KfXAzxFjisH6w9IiRidAAiEAiLH5dCv5nLEfmn/2MZnChm5HhHEV5GbSwQBL+hit
Qoc=
-----END CERTIFICATE-----
`;

const spkiOf = (pem: string) => node.createPublicKey(pem).export({ type: 'spki', format: 'der' });

describe('readPublicKeyPem', () => {
  it.each([
    ['ec', { namedCurve: 'P-256' }, 'P-256'],
    ['ec', { namedCurve: 'P-384' }, 'P-384'],
    ['ec', { namedCurve: 'P-521' }, 'P-521'],
    ['ec', { namedCurve: 'secp256k1' }, 'other'],
    ['ed25519', {}, 'ed25519'],
    ['ed448', {}, 'other'],
    ['rsa', { modulusLength: 1024 }, 'rsa'],
  ] as const)('reads a %s key (%o) as %s, with its SPKI unchanged', (type, options, kind) => {
    const { publicKey } = node.generateKeyPairSync(type as 'ec', options as { namedCurve: string });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const read = readPublicKeyPem(pem);
    expect(read?.kind).toBe(kind);
    expect(spkiOf(read?.spkiPem ?? '')).toEqual(spkiOf(pem));
  });

  it('reads a PKCS#1 RSA key and an RSA-PSS key as the RSA key Web Crypto imports', () => {
    const rsa = node.generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    const pkcs1 = readPublicKeyPem(rsa.export({ type: 'pkcs1', format: 'pem' }) as string);
    expect(pkcs1?.kind).toBe('rsa');
    expect(spkiOf(pkcs1?.spkiPem ?? '')).toEqual(rsa.export({ type: 'spki', format: 'der' }));

    const pss = node.generateKeyPairSync('rsa-pss', { modulusLength: 1024 }).publicKey;
    const read = readPublicKeyPem(pss.export({ type: 'spki', format: 'pem' }) as string);
    expect(read?.kind).toBe('rsa-pss');
    const restated = node.createPublicKey(read?.spkiPem ?? '');
    expect(restated.asymmetricKeyType).toBe('rsa');
    // The key itself (modulus and exponent) is the same; only the algorithm identifier differs.
    const keyBits = (der: Buffer) => der.subarray(der.length - 140);
    expect(keyBits(restated.export({ type: 'spki', format: 'der' }))).toEqual(
      keyBits(pss.export({ type: 'spki', format: 'der' })),
    );
  });

  it("reads a certificate's subject key", () => {
    const read = readPublicKeyPem(CERTIFICATE);
    expect(read?.kind).toBe('P-256');
    expect(spkiOf(read?.spkiPem ?? '')).toEqual(spkiOf(CERTIFICATE));
  });

  it.each([
    'not a pem',
    '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
    '-----BEGIN PUBLIC KEY-----\nMAMCAQE=\n-----END PUBLIC KEY-----',
    '-----BEGIN SOMETHING-----\nMAMCAQE=\n-----END SOMETHING-----',
  ])('refuses %j', (pem) => {
    expect(readPublicKeyPem(pem)).toBeNull();
  });
});

describe('verifying with a PEM key through Web Crypto', () => {
  it('verifies PS256 with an RSA-PSS key and RS256 with a PKCS#1 key', async () => {
    const claims = { sub: 'user-1', workspaces: [{ id: 'ws-acme', role: 'editor' }] };
    const sign = (key: CryptoKey, alg: string) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg })
        .setIssuer('https://idp.test/')
        .setAudience('flowgate')
        .setExpirationTime('10m')
        .sign(key);
    const config = { issuer: 'https://idp.test/', audience: 'flowgate' };

    // An RSA-PSS key (its SPKI names id-RSASSA-PSS, which Web Crypto does not import), signed by node:crypto.
    const ps = node.generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
    const pssPem = ps.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const psVerifier = createJwtVerifier({ ...config, publicKeyPem: pssPem });
    expect(psVerifier.algorithms).toEqual(['PS256']);
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const exp = Math.floor(Date.now() / 1000) + 600;
    const input = `${part({ alg: 'PS256' })}.${part({ ...claims, iss: config.issuer, aud: config.audience, exp })}`;
    const signature = node.sign('sha256', Buffer.from(input), {
      key: ps.privateKey,
      padding: node.constants.RSA_PKCS1_PSS_PADDING,
      saltLength: 32,
    });
    expect((await psVerifier.verify(`${input}.${signature.toString('base64url')}`)).ok).toBe(true);

    const rs = await generateKeyPair('RS256', { extractable: true });
    const pkcs1 = node
      .createPublicKey(await exportSPKI(rs.publicKey))
      .export({ type: 'pkcs1', format: 'pem' });
    const rsVerifier = createJwtVerifier({ ...config, publicKeyPem: pkcs1 as string });
    expect(rsVerifier.algorithms).toEqual(['RS256']);
    expect((await rsVerifier.verify(await sign(rs.privateKey, 'RS256'))).ok).toBe(true);
    const forged = await sign((await generateKeyPair('RS256')).privateKey, 'RS256');
    expect(await rsVerifier.verify(forged)).toEqual({ ok: false, message: 'token signature is invalid' });
  });
});
