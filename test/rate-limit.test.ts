import { randomBytes } from 'node:crypto';
import { generateEncryptionKey } from '@flowgate/secrets';
import { LATEST_PROTOCOL_VERSION } from '@flowgate/workspace-mcp';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type AuditItem,
  type ServiceAccountKey,
  startTestGateway,
  type TestGateway,
} from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';

/**
 * Issue 12, finding 1: nothing limited request rate, so one key could fill `audit_entries` with blocked calls and
 * a stream of made-up keys cost a database lookup each. Floods are now answered 429 + Retry-After before any
 * JSON-RPC work, per key and per client address, in-process or shared through Redis.
 */

const WS = 'ws-limits';
const gateways: TestGateway[] = [];

afterAll(async () => {
  for (const gw of gateways) await gw.close();
});

async function start(env: Record<string, string>): Promise<TestGateway> {
  const gw = await startTestGateway(env);
  gateways.push(gw);
  await gw.createWorkspace(WS);
  return gw;
}

/** A call the key is not allowed to make: before the fix each one was audited, with its arguments. */
function blockedCall(gw: TestGateway, key: ServiceAccountKey) {
  return mcpPost(gw.mcpUrl(WS), {
    token: key.apiKey,
    protocolVersion: LATEST_PROTOCOL_VERSION,
    body: rpc('tools/call', { name: 'create_flow_draft', arguments: { padding: 'x'.repeat(4000) } }),
  });
}

describe('per-key limits', () => {
  it('answers a flood from one key 429 with Retry-After in JSON-RPC shape, and leaves other keys alone', async () => {
    const gw = await start({ FLOWGATE_RATE_LIMIT_KEY_PER_MIN: '5' });
    const flooder = await gw.mintKey(WS, ['feedback.send'], 'flooder');
    const bystander = await gw.mintKey(WS, ['feedback.send'], 'bystander');

    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await blockedCall(gw, flooder));
    expect(answers.slice(0, 5).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const limited = answers.slice(5);
    for (const a of limited) {
      expect(a.status).toBe(429);
      // 5 per minute: the next token is at most 12 s away.
      const retryAfter = Number(a.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(12);
      const body = asRpc(a);
      expect(body).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, data: { code: 'rate_limited', scope: 'key', retryAfterSeconds: retryAfter } },
      });
    }

    expect((await blockedCall(gw, bystander)).status).toBe(200);
    // The operator has no bucket: a flooded workspace can still be administered.
    for (let i = 0; i < 8; i++)
      expect((await gw.admin('GET', `/api/workspaces/${WS}/audit`)).status).toBe(200);

    // Refused requests never reached the dispatcher, so they wrote nothing; the 5 identical blocked calls that
    // did share one row with a count, beside the bystander's.
    const counted = (all: AuditItem[]) =>
      all.filter((e) => e.action === 'create_flow_draft').reduce((n, e) => n + e.count, 0);
    const items = await gw.waitForAudit(WS, (all) => counted(all) >= 6);
    expect(counted(items)).toBe(6);
    expect(items.filter((e) => e.action === 'create_flow_draft')).toHaveLength(2);
  });
});

describe('a workspace limit in the MCP policy', () => {
  it('overrides the deployment default for that workspace only, and null restores it', async () => {
    const gw = await startTestGateway();
    gateways.push(gw);
    await gw.createWorkspace('ws-tight');
    await gw.createWorkspace('ws-loose');
    await gw.setPolicy('ws-tight', { rateLimitPerMinute: 3 });
    const policy = await gw.admin('GET', '/api/workspaces/ws-tight/mcp-policy');
    expect(policy.json).toMatchObject({ rateLimitPerMinute: 3 });
    const tight = await gw.mintKey('ws-tight', ['feedback.send']);
    const loose = await gw.mintKey('ws-loose', ['feedback.send']);
    const list = (ws: string, key: ServiceAccountKey) =>
      mcpPost(gw.mcpUrl(ws), {
        token: key.apiKey,
        protocolVersion: LATEST_PROTOCOL_VERSION,
        body: rpc('tools/list'),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await list('ws-tight', tight)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    for (let i = 0; i < 5; i++) expect((await list('ws-loose', loose)).status).toBe(200);

    // Back to the default (1,200 a minute): spent tokens stay spent, but the next one is 50 ms away, not 20 s.
    await gw.setPolicy('ws-tight', { rateLimitPerMinute: null });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await list('ws-tight', tight)).status).toBe(200);
    const bad = await gw.admin('PUT', '/api/workspaces/ws-tight/mcp-policy', { rateLimitPerMinute: 0 });
    expect(bad.status).toBe(400);
  });
});

describe('per-address limits', () => {
  it('refuses a stream of made-up keys from one address before any key lookup, admin routes included', async () => {
    const gw = await start({
      FLOWGATE_RATE_LIMIT_IP_PER_MIN: '6',
      FLOWGATE_TRUST_PROXY: '1',
    });
    const fake = () => `fgk_${randomBytes(8).toString('hex')}_${randomBytes(24).toString('base64url')}`;
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) {
      const a = await mcpPost(gw.mcpUrl(WS), {
        token: fake(),
        body: rpc('tools/list'),
        headers: from('203.0.113.7'),
      });
      statuses.push(a.status);
    }
    expect(statuses.slice(0, 6).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(6)).toEqual([429, 429, 429]);

    const admin = await fetch(`${gw.url}/api/workspaces/${WS}/audit`, {
      headers: { authorization: `Bearer ${fake()}`, ...from('203.0.113.7') },
    });
    expect(admin.status).toBe(429);
    expect(Number(admin.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await admin.json()).toMatchObject({ code: 'rate_limited', scope: 'ip' });

    // Another address is unaffected.
    const other = await mcpPost(gw.mcpUrl(WS), {
      token: fake(),
      body: rpc('tools/list'),
      headers: from('203.0.113.8'),
    });
    expect(other.status).toBe(401);
  });
});

describe('shared through Redis', () => {
  it('two gateways on one Redis spend the same per-key bucket', async () => {
    const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    const prefix = `flowgate-test:${randomBytes(6).toString('hex')}:`;
    const env = {
      REDIS_URL: url,
      FLOWGATE_REDIS_PREFIX: prefix,
      FLOWGATE_RATE_LIMIT_KEY_PER_MIN: '4',
      FLOWGATE_ENCRYPTION_KEY: generateEncryptionKey(),
    };
    let a: TestGateway;
    try {
      a = await start(env);
    } catch (err) {
      throw new Error(
        `this test needs Redis at ${url} (start it, or set REDIS_URL): ${(err as Error).message}`,
      );
    }
    // A second replica: same database, same Redis, no shared memory.
    const b = await startTestGateway(env, { db: a.db });
    const redis = new Redis(url);
    try {
      const key = await a.mintKey(WS, ['feedback.send'], 'shared');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await blockedCall(a, key)).status);
      statuses.push((await blockedCall(b, key)).status);
      statuses.push((await blockedCall(b, key)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      expect(await redis.exists(`${prefix}rl:key:${key.keyId}`)).toBe(1);
    } finally {
      await b.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });
});
