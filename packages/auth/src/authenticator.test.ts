import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateApiKey } from './api-keys.js';
import {
  type ApiKeyRecord,
  type Authenticator,
  type AuthenticatorOptions,
  createAuthenticator,
} from './authenticator.js';
import { GRANTED_BY_FULL, ROLE_CAPABILITIES } from './capabilities.js';
import type { Principal } from './principal.js';
import { TokenCache } from './token-cache.js';

const T0 = Date.UTC(2030, 0, 1);

interface Harness {
  auth: Authenticator;
  lookups: string[];
  used: [string, Date][];
  records: Map<string, ApiKeyRecord>;
  clock: { t: number };
}

function harness(extra: Partial<AuthenticatorOptions> = {}): Harness {
  const records = new Map<string, ApiKeyRecord>();
  const lookups: string[] = [];
  const used: [string, Date][] = [];
  const clock = { t: T0 };
  const auth = createAuthenticator({
    lookupApiKey: async (keyId) => {
      lookups.push(keyId);
      const r = records.get(keyId);
      return r ? { ...r } : null;
    },
    onKeyUsed: (keyId, at) => used.push([keyId, at]),
    now: () => clock.t,
    ...extra,
  });
  return { auth, lookups, used, records, clock };
}

function addKey(h: Harness, patch: Partial<ApiKeyRecord> = {}): { apiKey: string; record: ApiKeyRecord } {
  const k = generateApiKey();
  const record: ApiKeyRecord = {
    keyId: k.keyId,
    workspaceId: 'ws-acme',
    serviceAccountId: 'sa_1',
    serviceAccountName: 'ci',
    serviceAccountStatus: 'active',
    capabilities: ['flows.read', 'runs.read'],
    secretHash: k.secretHash,
    expiresAt: null,
    revokedAt: null,
    ...patch,
  };
  h.records.set(k.keyId, record);
  return { apiKey: k.apiKey, record };
}

function expectOk(r: Awaited<ReturnType<Authenticator['authenticate']>>): Principal {
  if (!r.ok) throw new Error(`expected ok, got ${r.message}`);
  return r.principal;
}

describe('API keys', () => {
  let h: Harness;
  beforeEach(() => {
    h = harness();
  });

  it('authenticates a good key as its service account', async () => {
    const { apiKey, record } = addKey(h);
    const p = expectOk(await h.auth.authenticate(apiKey));
    expect(p).toMatchObject({
      kind: 'service_account',
      id: 'sa_1',
      workspaceId: 'ws-acme',
      keyId: record.keyId,
      name: 'ci',
      status: 'active',
      expiresAt: null,
    });
    if (p.kind !== 'service_account') throw new Error('kind');
    expect([...p.capabilities].sort()).toEqual(['flows.read', 'runs.read']);
    expect(h.used).toEqual([[record.keyId, new Date(T0)]]);
  });

  it('drops unknown capability names from the store and expands workspace.full', async () => {
    const { apiKey } = addKey(h, { capabilities: ['workspace.full', 'keys.manage', 'bogus'] });
    const p = expectOk(await h.auth.authenticate(apiKey));
    if (p.kind !== 'service_account') throw new Error('kind');
    expect([...p.capabilities].sort()).toEqual([...GRANTED_BY_FULL].sort());
  });

  it('refuses a wrong secret and an unknown key with the same message', async () => {
    const { record } = addKey(h);
    const wrong = await h.auth.authenticate(`fgk_${record.keyId}_${generateApiKey().secret}`);
    const unknown = await h.auth.authenticate(generateApiKey().apiKey);
    expect(wrong).toEqual({ ok: false, code: 'invalid_token', message: 'API key is not valid' });
    expect(unknown).toEqual(wrong);
    expect(h.used).toEqual([]);
  });

  it('refuses a revoked key', async () => {
    const { apiKey } = addKey(h, { revokedAt: new Date(T0 - 1000) });
    expect(await h.auth.authenticate(apiKey)).toEqual({
      ok: false,
      code: 'invalid_token',
      message: 'API key has been revoked',
    });
  });

  it('refuses an expired key (by the injected clock)', async () => {
    const { apiKey } = addKey(h, { expiresAt: new Date(T0 + 60_000) });
    expectOk(await h.auth.authenticate(apiKey));
    h.clock.t = T0 + 60_000;
    expect(await h.auth.authenticate(apiKey)).toEqual({
      ok: false,
      code: 'invalid_token',
      message: 'API key has expired',
    });
  });

  it('refuses malformed and unrecognised tokens without a lookup and without echoing them', async () => {
    for (const t of ['fgk_short_x', 'fgk_', 'plain-words', 'Bearer xyz', '', 'x'.repeat(20_000)]) {
      const r = await h.auth.authenticate(t);
      expect(r.ok).toBe(false);
      if (!r.ok && t.length > 0) expect(r.message).not.toContain(t);
    }
    expect(h.lookups).toEqual([]);
  });

  it('a disabled service account authenticates but gets forbidden in its workspace', async () => {
    const { apiKey } = addKey(h, { serviceAccountStatus: 'disabled' });
    const p = expectOk(await h.auth.authenticate(apiKey));
    expect(h.auth.resolveAccess(p, 'ws-acme')).toEqual({
      ok: false,
      code: 'forbidden',
      message: 'the service account of this key is disabled',
    });
  });

  it('resolves access only in its own workspace, never as admin even with workspace.full', async () => {
    const { apiKey, record } = addKey(h, { capabilities: ['workspace.full'] });
    const p = expectOk(await h.auth.authenticate(apiKey));
    const own = h.auth.resolveAccess(p, 'ws-acme');
    if (!own.ok) throw new Error(own.message);
    expect(own.access.isAdmin).toBe(false);
    expect(own.access.keyId).toBe(record.keyId);
    expect(own.access.workspaceId).toBe('ws-acme');
    expect([...own.access.capabilities].sort()).toEqual([...GRANTED_BY_FULL].sort());
    expect(h.auth.resolveAccess(p, 'ws-other')).toEqual({
      ok: false,
      code: 'forbidden',
      message: 'this token has no access to workspace ws-other',
    });
    expect(h.auth.resolveAccess(p, '<script>')).toEqual({
      ok: false,
      code: 'forbidden',
      message: 'this token has no access to that workspace',
    });
  });
});

describe('cache', () => {
  it('serves the second authentication without a lookup and still reports key use', async () => {
    const h = harness();
    const { apiKey, record } = addKey(h);
    expectOk(await h.auth.authenticate(apiKey));
    h.clock.t += 5;
    expectOk(await h.auth.authenticate(apiKey));
    expect(h.lookups).toEqual([record.keyId]);
    expect(h.used).toEqual([
      [record.keyId, new Date(T0)],
      [record.keyId, new Date(T0 + 5)],
    ]);
    expect(h.auth.cacheSize()).toBe(1);
  });

  it('looks up again after invalidateKey, so a revocation in this process is immediate', async () => {
    const h = harness();
    const { apiKey, record } = addKey(h);
    expectOk(await h.auth.authenticate(apiKey));
    h.records.set(record.keyId, { ...record, revokedAt: new Date(T0) });
    expectOk(await h.auth.authenticate(apiKey)); // still cached
    h.auth.invalidateKey(record.keyId);
    expect(h.auth.cacheSize()).toBe(0);
    expect((await h.auth.authenticate(apiKey)).ok).toBe(false);
    expect(h.lookups).toHaveLength(2);
  });

  it('invalidateServiceAccount drops every key of that account only', async () => {
    const h = harness();
    const a = addKey(h, { serviceAccountId: 'sa_1' });
    const b = addKey(h, { serviceAccountId: 'sa_1' });
    const c = addKey(h, { serviceAccountId: 'sa_2' });
    for (const k of [a, b, c]) expectOk(await h.auth.authenticate(k.apiKey));
    expect(h.auth.cacheSize()).toBe(3);
    h.auth.invalidateServiceAccount('sa_1');
    expect(h.auth.cacheSize()).toBe(1);
    h.auth.clear();
    expect(h.auth.cacheSize()).toBe(0);
  });

  it('looks up again once the ttl has passed (the cross-replica revocation bound)', async () => {
    const h = harness({ cacheTtlMs: 1_000 });
    const { apiKey, record } = addKey(h);
    expectOk(await h.auth.authenticate(apiKey));
    h.records.set(record.keyId, { ...record, revokedAt: new Date(T0) });
    h.clock.t = T0 + 999;
    expectOk(await h.auth.authenticate(apiKey));
    h.clock.t = T0 + 1_000;
    expect(await h.auth.authenticate(apiKey)).toMatchObject({
      ok: false,
      message: 'API key has been revoked',
    });
    expect(h.lookups).toHaveLength(2);
  });

  it('never keeps an entry past the key expiry', async () => {
    const h = harness({ cacheTtlMs: 60_000 });
    const { apiKey } = addKey(h, { expiresAt: new Date(T0 + 100) });
    expectOk(await h.auth.authenticate(apiKey));
    h.clock.t = T0 + 100;
    expect(await h.auth.authenticate(apiKey)).toMatchObject({ ok: false, message: 'API key has expired' });
    expect(h.lookups).toHaveLength(2);
  });

  it('does not cache failures', async () => {
    const h = harness();
    const { record } = addKey(h);
    const bad = `fgk_${record.keyId}_${generateApiKey().secret}`;
    await h.auth.authenticate(bad);
    await h.auth.authenticate(bad);
    expect(h.lookups).toHaveLength(2);
    expect(h.auth.cacheSize()).toBe(0);
  });

  it('evicts beyond cacheMaxEntries', async () => {
    const h = harness({ cacheMaxEntries: 2 });
    const first = addKey(h);
    for (const k of [first, addKey(h), addKey(h)]) expectOk(await h.auth.authenticate(k.apiKey));
    expect(h.auth.cacheSize()).toBe(2);
    expectOk(await h.auth.authenticate(first.apiKey)); // evicted first, so looked up again
    expect(h.lookups).toHaveLength(4);
  });

  it('shares one lookup between concurrent first uses of a token', async () => {
    const h = harness();
    const { apiKey } = addKey(h);
    const results = await Promise.all([
      h.auth.authenticate(apiKey),
      h.auth.authenticate(apiKey),
      h.auth.authenticate(apiKey),
    ]);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(h.lookups).toHaveLength(1);
    expect(h.used).toHaveLength(3);
  });

  it('does not cache a lookup that was in flight when the key was invalidated', async () => {
    const h = harness();
    const { apiKey, record } = addKey(h);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = createAuthenticator({
      lookupApiKey: async (id) => {
        h.lookups.push(id);
        await gate;
        return h.records.get(id) ?? null;
      },
      now: () => h.clock.t,
    });
    const pending = slow.authenticate(apiKey);
    slow.invalidateKey(record.keyId);
    release();
    expectOk(await pending);
    expect(slow.cacheSize()).toBe(0);
  });

  it('keeps no raw token in its maps: entries are keyed by the sha256 hex of the token', async () => {
    const h = harness();
    const { apiKey } = addKey(h);
    const secret = apiKey.split('_')[2] as string;
    const spy = vi.spyOn(Map.prototype, 'set');
    let calls: unknown[][];
    try {
      expectOk(await h.auth.authenticate(apiKey));
      calls = spy.mock.calls.map((c) => [...c]);
    } finally {
      spy.mockRestore();
    }
    const keys = calls.map((c) => c[0]).filter((k): k is string => typeof k === 'string');
    expect(keys).toContain(TokenCache.keyOf(apiKey));
    expect(TokenCache.keyOf(apiKey)).toMatch(/^[0-9a-f]{64}$/);
    for (const c of calls)
      expect(JSON.stringify(c, (_k, v: unknown) => (v instanceof Set ? [...v] : v))).not.toContain(secret);
    expect(h.auth.cacheSize()).toBe(1);
  });
});

describe('operator token', () => {
  const OP = 'op-token-0123456789abcdefghijklmnop';

  it('authenticates the exact token as the operator with everything but account management flags set', async () => {
    const h = harness({ operatorToken: OP });
    const p = expectOk(await h.auth.authenticate(OP));
    expect(p).toEqual({ kind: 'operator', id: 'operator' });
    const a = h.auth.resolveAccess(p, 'ws-anything');
    if (!a.ok) throw new Error(a.message);
    expect(a.access.isAdmin).toBe(true);
    expect(a.access.keyId).toBeNull();
    expect([...a.access.capabilities].sort()).toEqual([...GRANTED_BY_FULL].sort());
    expect(h.auth.cacheSize()).toBe(0);
  });

  it('refuses near misses and is off when not configured or empty', async () => {
    const h = harness({ operatorToken: OP });
    expect((await h.auth.authenticate(`${OP}x`)).ok).toBe(false);
    expect((await h.auth.authenticate(OP.slice(0, -1))).ok).toBe(false);
    expect((await harness().auth.authenticate(OP)).ok).toBe(false);
    const empty = harness({ operatorToken: '' });
    expect((await empty.auth.authenticate('')).ok).toBe(false);
  });
});

describe('JWTs through the authenticator', () => {
  const ISS = 'https://idp.test/';
  const AUD = 'flowgate';
  let keys: Awaited<ReturnType<typeof generateKeyPair>>;
  let pem: string;

  beforeAll(async () => {
    keys = await generateKeyPair('ES256', { extractable: true });
    pem = await exportSPKI(keys.publicKey);
  });

  async function token(claims: Record<string, unknown>, exp: number): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime(exp)
      .sign(keys.privateKey);
  }

  it('refuses JWTs when none are configured', async () => {
    const h = harness();
    const t = await token({ sub: 'u' }, Math.floor(Date.now() / 1000) + 60);
    expect(await h.auth.authenticate(t)).toEqual({
      ok: false,
      code: 'invalid_token',
      message: 'JWT bearer tokens are not accepted by this gateway',
    });
  });

  it('maps memberships: admin role is admin, other workspaces are forbidden', async () => {
    const h = harness({ jwt: { issuer: ISS, audience: AUD, publicKeyPem: pem }, now: Date.now });
    const t = await token(
      {
        sub: 'alice',
        workspaces: [
          { id: 'ws-acme', role: 'admin' },
          { id: 'ws-beta', role: 'viewer' },
        ],
      },
      Math.floor(Date.now() / 1000) + 600,
    );
    const p = expectOk(await h.auth.authenticate(t));
    const acme = h.auth.resolveAccess(p, 'ws-acme');
    const beta = h.auth.resolveAccess(p, 'ws-beta');
    if (!acme.ok || !beta.ok) throw new Error('expected access');
    expect(acme.access.isAdmin).toBe(true);
    expect([...acme.access.capabilities].sort()).toEqual([...ROLE_CAPABILITIES.admin].sort());
    expect(beta.access.isAdmin).toBe(false);
    expect(beta.access.capabilities.has('flows.run')).toBe(false);
    expect(h.auth.resolveAccess(p, 'ws-gamma')).toEqual({
      ok: false,
      code: 'forbidden',
      message: 'this token has no access to workspace ws-gamma',
    });
  });

  it('a cached JWT never outlives its exp, even with a longer ttl', async () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = { t: start };
    const h = harness({
      jwt: { issuer: ISS, audience: AUD, publicKeyPem: pem, clockToleranceSeconds: 0 },
      cacheTtlMs: 3_600_000,
      now: () => clock.t,
    });
    const t = await token({ sub: 'bob', workspace_id: 'ws-acme', role: 'viewer' }, start / 1000 + 10);
    expectOk(await h.auth.authenticate(t));
    expect(h.auth.cacheSize()).toBe(1);
    clock.t = start + 9_999;
    expectOk(await h.auth.authenticate(t));
    clock.t = start + 10_000;
    expect(await h.auth.authenticate(t)).toEqual({
      ok: false,
      code: 'invalid_token',
      message: 'token has expired',
    });
    expect(h.auth.cacheSize()).toBe(0);
  });

  it('checks a cached JWT against the endpoint of each use (no token passthrough)', async () => {
    const h = harness({ jwt: { issuer: ISS, audience: AUD, publicKeyPem: pem }, now: Date.now });
    const acme = 'https://gw.test/api/workspaces/ws-acme/mcp';
    const t = await new SignJWT({ sub: 'carol', workspaces: [{ id: 'ws-acme', role: 'viewer' }] })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(ISS)
      .setAudience(acme)
      .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
      .sign(keys.privateKey);
    expectOk(await h.auth.authenticate(t, { resource: acme }));
    expect(h.auth.cacheSize()).toBe(1);
    const refused = { ok: false, code: 'invalid_token', message: 'token audience is not accepted' };
    expect(await h.auth.authenticate(t, { resource: 'https://gw.test/api/workspaces/ws-beta/mcp' })).toEqual(
      refused,
    );
    expect(await h.auth.authenticate(t)).toEqual(refused);
    expectOk(await h.auth.authenticate(t, { resource: acme }));
  });

  it('refuses a token naming an unknown capability and caches nothing', async () => {
    const h = harness({ jwt: { issuer: ISS, audience: AUD, publicKeyPem: pem }, now: Date.now });
    const t = await token(
      { sub: 'u', workspace_id: 'ws-acme', capabilities: ['root'] },
      Math.floor(Date.now() / 1000) + 600,
    );
    expect(await h.auth.authenticate(t)).toEqual({
      ok: false,
      code: 'invalid_token',
      message: 'token claims are invalid: capabilities.0',
    });
    expect(h.auth.cacheSize()).toBe(0);
  });
});

describe('unknown key ids (issue 12: a flood of made-up keys cost one lookup each)', () => {
  const madeUp = () => generateApiKey().apiKey;

  it('looks an unknown key id up once, then refuses it from memory until the TTL passes', async () => {
    const h = harness();
    const token = madeUp();
    for (let i = 0; i < 50; i++) {
      expect(await h.auth.authenticate(token)).toEqual({
        ok: false,
        code: 'invalid_token',
        message: 'API key is not valid',
      });
    }
    expect(h.lookups).toHaveLength(1);
    // Another secret under the same unknown id reads the same and costs nothing either.
    const sameId = `${token.slice(0, token.lastIndexOf('_') + 1)}${generateApiKey().secret}`;
    expect((await h.auth.authenticate(sameId)).ok).toBe(false);
    expect(h.lookups).toHaveLength(1);
    h.clock.t += 30_001;
    await h.auth.authenticate(token);
    expect(h.lookups).toHaveLength(2);
  });

  it('stays bounded: past the cap the oldest unknown ids are forgotten', async () => {
    const h = harness({ unknownKeyMaxEntries: 3 });
    const tokens = [madeUp(), madeUp(), madeUp(), madeUp()];
    for (const t of tokens) await h.auth.authenticate(t);
    expect(h.lookups).toHaveLength(4);
    for (const t of tokens.slice(1)) await h.auth.authenticate(t);
    expect(h.lookups).toHaveLength(4);
    await h.auth.authenticate(tokens[0] as string);
    expect(h.lookups).toHaveLength(5);
  });

  it('never remembers a known key as unknown: a wrong secret still reaches the store, the right one works', async () => {
    const h = harness();
    const { apiKey } = addKey(h);
    const wrong = `${apiKey.slice(0, apiKey.lastIndexOf('_') + 1)}${generateApiKey().secret}`;
    expect((await h.auth.authenticate(wrong)).ok).toBe(false);
    expect(expectOk(await h.auth.authenticate(apiKey)).kind).toBe('service_account');
  });

  it('can be turned off', async () => {
    const h = harness({ unknownKeyTtlMs: 0 });
    const token = madeUp();
    await h.auth.authenticate(token);
    await h.auth.authenticate(token);
    expect(h.lookups).toHaveLength(2);
  });
});
