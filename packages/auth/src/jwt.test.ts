import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '@flowgate/core';
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_CAPABILITIES } from './capabilities.js';
import { createJwtVerifier, looksLikeJwt, principalFromClaims } from './jwt.js';

const ISS = 'https://idp.test/';
const AUD = 'flowgate';
const HS_SECRET = 'a-shared-secret-of-at-least-32-characters!';
const nowSec = () => Math.floor(Date.now() / 1000);

type SigningKey = Parameters<SignJWT['sign']>[0];

async function sign(
  key: SigningKey,
  alg: string,
  claims: JWTPayload,
  opts: { iss?: string; aud?: string; exp?: number | null; kid?: string } = {},
): Promise<string> {
  let jwt = new SignJWT(claims).setProtectedHeader(opts.kid ? { alg, kid: opts.kid } : { alg }).setIssuedAt();
  jwt = jwt.setIssuer(opts.iss ?? ISS).setAudience(opts.aud ?? AUD);
  if (opts.exp !== null) jwt = jwt.setExpirationTime(opts.exp ?? nowSec() + 600);
  return jwt.sign(key);
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const member = { sub: 'user-1', workspaces: [{ id: 'ws-acme', role: 'editor' }] };

let es: Awaited<ReturnType<typeof generateKeyPair>>;
let esPem: string;
let other: Awaited<ReturnType<typeof generateKeyPair>>;

beforeAll(async () => {
  es = await generateKeyPair('ES256', { extractable: true });
  esPem = await exportSPKI(es.publicKey);
  other = await generateKeyPair('ES256', { extractable: true });
});

describe('ES256 with a configured public key', () => {
  it('accepts a valid token and maps claims to a user principal', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    expect(v.algorithms).toEqual(['ES256']);
    const exp = nowSec() + 600;
    const r = await v.verify(await sign(es.privateKey, 'ES256', member, { exp }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.principal.kind).toBe('user');
    expect(r.principal.id).toBe('user-1');
    expect(r.principal.expiresAt?.getTime()).toBe(exp * 1000);
    const ws = r.principal.workspaces.get('ws-acme');
    expect(ws?.role).toBe('editor');
    expect([...(ws?.capabilities ?? [])].sort()).toEqual([...ROLE_CAPABILITIES.editor].sort());
  });

  it('refuses an expired token', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    const r = await v.verify(await sign(es.privateKey, 'ES256', member, { exp: nowSec() - 120 }));
    expect(r).toEqual({ ok: false, message: 'token has expired' });
  });

  it('tolerates small clock skew on exp but not beyond the tolerance', async () => {
    const v = createJwtVerifier({
      issuer: ISS,
      audience: AUD,
      publicKeyPem: esPem,
      clockToleranceSeconds: 30,
    });
    expect((await v.verify(await sign(es.privateKey, 'ES256', member, { exp: nowSec() - 10 }))).ok).toBe(
      true,
    );
    expect((await v.verify(await sign(es.privateKey, 'ES256', member, { exp: nowSec() - 60 }))).ok).toBe(
      false,
    );
  });

  it('refuses a token whose nbf is in the future beyond the tolerance, accepts within it', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    const far = await sign(es.privateKey, 'ES256', { ...member, nbf: nowSec() + 300 });
    expect(await v.verify(far)).toEqual({ ok: false, message: 'token is not yet valid' });
    const near = await sign(es.privateKey, 'ES256', { ...member, nbf: nowSec() + 5 });
    expect((await v.verify(near)).ok).toBe(true);
  });

  it('uses the injected clock', async () => {
    const token = await sign(es.privateKey, 'ES256', member, { exp: nowSec() + 600 });
    const later = createJwtVerifier(
      { issuer: ISS, audience: AUD, publicKeyPem: esPem },
      () => Date.now() + 3_600_000,
    );
    expect(await later.verify(token)).toEqual({ ok: false, message: 'token has expired' });
  });

  it('refuses a wrong audience and a wrong issuer', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    expect(await v.verify(await sign(es.privateKey, 'ES256', member, { aud: 'someone-else' }))).toEqual({
      ok: false,
      message: 'token audience is not accepted',
    });
    expect(await v.verify(await sign(es.privateKey, 'ES256', member, { iss: 'https://evil.test/' }))).toEqual(
      {
        ok: false,
        message: 'token issuer is not accepted',
      },
    );
  });

  it('binds the audience to the endpoint: a configured audience anywhere, a resource URL only on itself', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    const mine = 'https://gw.test/api/workspaces/ws-acme/mcp';
    const forMine = await sign(es.privateKey, 'ES256', member, { aud: mine });
    expect((await v.verify(forMine, mine)).ok).toBe(true);
    const refused = { ok: false, message: 'token audience is not accepted' };
    expect(await v.verify(forMine, 'https://gw.test/api/workspaces/ws-beta/mcp')).toEqual(refused);
    expect(await v.verify(forMine, `${mine}/`)).toEqual(refused);
    expect(await v.verify(forMine)).toEqual(refused);
    const general = await sign(es.privateKey, 'ES256', member);
    expect((await v.verify(general, mine)).ok).toBe(true);
    expect((await v.verify(general)).ok).toBe(true);
    const unbound = await v.verifyUnbound(forMine);
    if (!unbound.ok) throw new Error('expected a verified token');
    expect(unbound.principal.audiences).toEqual([mine]);
    expect(v.acceptsAudience(unbound.principal, mine)).toBe(true);
    expect(v.acceptsAudience(unbound.principal, 'https://gw.test/other')).toBe(false);
  });

  it('refuses a token without aud', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    const t = await new SignJWT(member)
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(ISS)
      .setExpirationTime(nowSec() + 600)
      .sign(es.privateKey);
    expect(await v.verify(t, 'https://gw.test/api/workspaces/ws-acme/mcp')).toEqual({
      ok: false,
      message: 'token audience is not accepted',
    });
  });

  it('requires exp', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    const r = await v.verify(await sign(es.privateKey, 'ES256', member, { exp: null }));
    expect(r).toEqual({ ok: false, message: 'token must carry a valid exp claim' });
  });

  it('refuses alg none', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    const payload = { ...member, iss: ISS, aud: AUD, exp: nowSec() + 600 };
    const token = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
    expect(looksLikeJwt(token)).toBe(true);
    expect(await v.verify(token)).toEqual({ ok: false, message: 'token algorithm is not allowed' });
    // Even with "none" nowhere near the configuration, a forged signature part does not help.
    expect((await v.verify(`${token}AAAA`)).ok).toBe(false);
  });

  it('refuses a token signed with another key', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    const r = await v.verify(await sign(other.privateKey, 'ES256', member));
    expect(r).toEqual({ ok: false, message: 'token signature is invalid' });
  });

  it('refuses an algorithm outside the pinned list, including HMAC keyed with the public key', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    const hs = await sign(new TextEncoder().encode(HS_SECRET), 'HS256', member);
    expect(await v.verify(hs)).toEqual({ ok: false, message: 'token algorithm is not allowed' });
    const confused = await sign(new TextEncoder().encode(esPem), 'HS256', member);
    expect(await v.verify(confused)).toEqual({ ok: false, message: 'token algorithm is not allowed' });
  });

  it('rejects garbage without throwing and never echoes the token', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });
    for (const t of ['abc.def.ghi', `${b64url({ alg: 'ES256' })}.not-json.sig`, 'a.b']) {
      const r = await v.verify(t);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).not.toContain(t);
    }
  });
});

describe('claims', () => {
  const v = () => createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: esPem });

  it('rejects an unknown capability name', async () => {
    const r = await v().verify(
      await sign(es.privateKey, 'ES256', {
        sub: 'u',
        workspaces: [{ id: 'ws-acme', capabilities: ['flows.read', 'keys.manage'] }],
      }),
    );
    expect(r).toEqual({ ok: false, message: 'token claims are invalid: workspaces.0.capabilities.1' });
  });

  it('rejects an unknown role, a missing sub, and an entry with neither role nor capabilities', async () => {
    const bad = [
      { sub: 'u', workspaces: [{ id: 'ws-acme', role: 'owner' }] },
      { workspaces: [{ id: 'ws-acme', role: 'viewer' }] },
      { sub: 'u', workspaces: [{ id: 'ws-acme' }] },
      { sub: 'u', workspace_id: 'ws-acme' },
      { sub: 'u', workspaces: [{ id: 'Not A Workspace', role: 'viewer' }] },
    ];
    for (const claims of bad)
      expect((await v().verify(await sign(es.privateKey, 'ES256', claims))).ok).toBe(false);
  });

  it('gives exactly the listed capabilities, expanding workspace.full', async () => {
    const r = await v().verify(
      await sign(es.privateKey, 'ES256', {
        sub: 'u',
        workspaces: [
          { id: 'ws-a', capabilities: ['runs.read'] },
          { id: 'ws-b', capabilities: ['workspace.full'] },
        ],
      }),
    );
    if (!r.ok) throw new Error(r.message);
    expect([...(r.principal.workspaces.get('ws-a')?.capabilities ?? [])]).toEqual(['runs.read']);
    expect(r.principal.workspaces.get('ws-a')?.role).toBeNull();
    const b = r.principal.workspaces.get('ws-b')?.capabilities;
    expect(b?.has('flows.manage')).toBe(true);
    expect(b?.has('workspace.full')).toBe(false);
  });

  it('accepts the short form and takes the union of role and capabilities', async () => {
    const r = await v().verify(
      await sign(es.privateKey, 'ES256', {
        sub: 'u',
        workspace_id: 'ws-acme',
        role: 'viewer',
        capabilities: ['flows.run'],
      }),
    );
    if (!r.ok) throw new Error(r.message);
    const ws = r.principal.workspaces.get('ws-acme');
    expect(ws?.role).toBe('viewer');
    expect([...(ws?.capabilities ?? [])].sort()).toEqual([...ROLE_CAPABILITIES.viewer, 'flows.run'].sort());
    expect(r.principal.workspaces.size).toBe(1);
  });

  it('merges both forms and keeps the stronger role for a repeated workspace', () => {
    const r = principalFromClaims({
      sub: 'u',
      exp: 2_000_000_000,
      workspaces: [
        { id: 'ws-a', role: 'viewer' },
        { id: 'ws-b', capabilities: ['steps.read'] },
      ],
      workspace_id: 'ws-a',
      role: 'admin',
    });
    if (!r.ok) throw new Error(r.message);
    expect(r.principal.workspaces.get('ws-a')?.role).toBe('admin');
    expect(r.principal.workspaces.get('ws-b')?.role).toBeNull();
    expect(r.principal.expiresAt?.toISOString()).toBe(new Date(2_000_000_000_000).toISOString());
  });

  it('a token with no workspaces is a principal with no memberships', () => {
    const r = principalFromClaims({ sub: 'u', exp: 2_000_000_000 });
    expect(r.ok && r.principal.workspaces.size).toBe(0);
  });
});

describe('HS256 with a shared secret', () => {
  it('accepts a token signed with the secret and refuses one signed with another', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, secret: HS_SECRET });
    expect(v.algorithms).toEqual(['HS256']);
    expect((await v.verify(await sign(new TextEncoder().encode(HS_SECRET), 'HS256', member))).ok).toBe(true);
    expect(await v.verify(await sign(new TextEncoder().encode(`${HS_SECRET}x`), 'HS256', member))).toEqual({
      ok: false,
      message: 'token signature is invalid',
    });
    // An asymmetric token cannot be presented to a secret-configured verifier.
    expect(await v.verify(await sign(es.privateKey, 'ES256', member))).toEqual({
      ok: false,
      message: 'token algorithm is not allowed',
    });
  });
});

describe('configuration', () => {
  it.each([
    ['no key source', { issuer: ISS, audience: AUD }],
    ['two key sources', { issuer: ISS, audience: AUD, secret: HS_SECRET, jwksUrl: 'https://idp.test/jwks' }],
    ['short secret', { issuer: ISS, audience: AUD, secret: 'short' }],
    [
      'asymmetric alg with a secret',
      { issuer: ISS, audience: AUD, secret: HS_SECRET, algorithms: ['ES256'] },
    ],
    [
      'HMAC alg with a JWKS',
      { issuer: ISS, audience: AUD, jwksUrl: 'https://idp.test/jwks', algorithms: ['HS256'] },
    ],
    ['alg none', { issuer: ISS, audience: AUD, jwksUrl: 'https://idp.test/jwks', algorithms: ['none'] }],
    ['non-http JWKS url', { issuer: ISS, audience: AUD, jwksUrl: 'file:///etc/jwks.json' }],
    ['unknown option', { issuer: ISS, audience: AUD, secret: HS_SECRET, jwks_url: 'x' }],
    ['unreadable PEM', { issuer: ISS, audience: AUD, publicKeyPem: 'not a pem' }],
  ])('%s → validation_failed', (_label, config) => {
    expect(() => createJwtVerifier(config as never)).toThrow(AppError);
    try {
      createJwtVerifier(config as never);
    } catch (err) {
      expect((err as AppError).code).toBe('validation_failed');
    }
  });

  it('refuses a private key given as publicKeyPem', async () => {
    const pkcs8 = await exportPKCS8(es.privateKey);
    expect(() => createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: pkcs8 })).toThrow(
      /not a private key/,
    );
  });

  it('infers the algorithm from an RSA or Ed25519 PEM', async () => {
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const ed = await generateKeyPair('EdDSA', { extractable: true });
    expect(
      createJwtVerifier({ issuer: ISS, audience: AUD, publicKeyPem: await exportSPKI(rsa.publicKey) })
        .algorithms,
    ).toEqual(['RS256']);
    const edV = createJwtVerifier({
      issuer: ISS,
      audience: AUD,
      publicKeyPem: await exportSPKI(ed.publicKey),
    });
    expect(edV.algorithms).toEqual(['EdDSA']);
    expect((await edV.verify(await sign(ed.privateKey, 'EdDSA', member))).ok).toBe(true);
  });
});

describe('RS256 through a JWKS URL', () => {
  let server: Server;
  let url: string;
  let requests = 0;
  let rs: Awaited<ReturnType<typeof generateKeyPair>>;

  beforeAll(async () => {
    rs = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(rs.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    server = createServer((req, res) => {
      requests++;
      if (req.url !== '/jwks.json') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('verifies against the served keys and fetches the set once', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, jwksUrl: url });
    expect(v.algorithms).toEqual(['RS256', 'ES256', 'EdDSA']);
    const before = requests;
    for (let i = 0; i < 3; i++) {
      const r = await v.verify(
        await sign(rs.privateKey, 'RS256', { ...member, sub: `user-${i}` }, { kid: 'k1' }),
      );
      expect(r.ok && r.principal.id).toBe(`user-${i}`);
    }
    expect(requests - before).toBe(1);
  });

  it('refuses a kid that the set does not hold and a token signed by a different RSA key', async () => {
    const v = createJwtVerifier({ issuer: ISS, audience: AUD, jwksUrl: url });
    expect(await v.verify(await sign(rs.privateKey, 'RS256', member, { kid: 'k2' }))).toEqual({
      ok: false,
      message: 'no trusted key matches this token',
    });
    const stranger = await generateKeyPair('RS256');
    expect(await v.verify(await sign(stranger.privateKey, 'RS256', member, { kid: 'k1' }))).toEqual({
      ok: false,
      message: 'token signature is invalid',
    });
  });

  it('throws AppError unavailable when the key set cannot be fetched', async () => {
    const v = createJwtVerifier({
      issuer: ISS,
      audience: AUD,
      jwksUrl: url.replace('/jwks.json', '/missing'),
    });
    const token = await sign(rs.privateKey, 'RS256', member, { kid: 'k1' });
    await expect(v.verify(token)).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('gives up on a key set that does not answer within the timeout', async () => {
    const hanging = createServer(() => {
      // never answers
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const port = (hanging.address() as AddressInfo).port;
      const v = createJwtVerifier({
        issuer: ISS,
        audience: AUD,
        jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
        jwksTimeoutMs: 150,
      });
      const started = Date.now();
      await expect(v.verify(await sign(rs.privateKey, 'RS256', member, { kid: 'k1' }))).rejects.toMatchObject(
        { code: 'unavailable' },
      );
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });
});
