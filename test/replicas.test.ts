import { randomBytes } from 'node:crypto';
import { generateEncryptionKey } from '@flowgate/secrets';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from './support/console-http.js';
import {
  ADMIN_TOKEN,
  databaseUrlOf,
  type ServiceAccountKey,
  startTestGateway,
  type TestGateway,
} from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';
import { type CapturedProcess, spawnCaptured } from './support/process.js';
import { installFlow, SLEEP_NAP_FLOW } from './support/runs.js';
import type { E2eRuntime } from './support/runtimes.js';
import { ROOT } from './support/stdio-bridge.js';

/**
 * Issue 23, item 3: replicas on different runtimes behind one load balancer share one Postgres database and one
 * Redis, and nothing they keep in memory may make an answer depend on which replica a request lands on. One gateway
 * per runtime (Node in this process; Bun, Deno and workerd as child processes), none executing runs: a
 * `flowgate worker` process does. The workerd replica reaches Redis and Postgres over Workers' TCP sockets. Postgres only (vitest.config.ts collects this file only with DATABASE_URL); Redis at REDIS_URL.
 */

/** One gateway per entry, in this order. */
const RUNTIMES: E2eRuntime[] = ['node', 'bun', 'deno', 'workerd'];

const V = '2025-11-25';
const WS = 'ws-replicas';
/** A workspace of its own for the rate-limit check, so its tight limit spends nobody else's calls. */
const WS_LIMITED = 'ws-replicas-limited';
const LIMIT_PER_MINUTE = 4;
const AUTH_CACHE_TTL_S = 1;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `flowgate-test:${randomBytes(6).toString('hex')}:`;
const ENCRYPTION_KEY = generateEncryptionKey();

/** Flows whose tools the pagination check pages through. */
const TOOL_FLOWS = ['alpha', 'bravo', 'charlie', 'delta', 'echo'].map((slug) => ({
  slug,
  tool: `${slug}_tool`,
  edn: `{:slug :${slug}
 :invocations {:default {:inputs []}}
 :interfaces {:mcp [{:tool-name "${slug}_tool" :invocation :default}]}
 :flow (flow/step :function :f {:code (fn [x] {:slug "${slug}"}) :input (flow/input)})}`,
}));

let gateways: TestGateway[] = [];
let worker: CapturedProcess | null = null;
let redis: Redis | null = null;
let agent: ServiceAccountKey;

function requireDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('the replica test needs Postgres: set DATABASE_URL (several processes share it)');
  return url;
}

/** `flowgate worker` as its own process on the replicas' database; resolves once it claims runs. */
async function startWorkerProcess(databaseUrl: string): Promise<CapturedProcess> {
  const p = spawnCaptured(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', 'worker'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      FLOWGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      FLOWGATE_LOG_LEVEL: 'info',
    },
  });
  const deadline = Date.now() + 60_000;
  while (!p.out().stdout.includes('"msg":"worker started"')) {
    if (p.child.exitCode !== null || Date.now() > deadline) {
      p.child.kill('SIGKILL');
      throw new Error(`flowgate worker did not start:\n${p.out().stderr.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return p;
}

beforeAll(async () => {
  const databaseUrl = requireDatabaseUrl();
  redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new Error(
      `the replica test needs Redis at ${REDIS_URL} (start it, or set REDIS_URL): ${String(err)}`,
    );
  }
  const env = {
    FLOWGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    REDIS_URL,
    FLOWGATE_REDIS_PREFIX: PREFIX,
    FLOWGATE_AUTH_CACHE_TTL_SECONDS: String(AUTH_CACHE_TTL_S),
    // Every replica waits on runs another process executes.
    FLOWGATE_WORKER: 'false',
  };
  const [first, ...rest] = RUNTIMES;
  const owner = await startTestGateway(env, { runtime: first ?? 'node' });
  gateways = [owner];
  // Started one after another: two runtimes compiling the sources at once only slow each other down.
  for (const runtime of rest) gateways.push(await startTestGateway(env, { runtime, db: owner.db }));
  worker = await startWorkerProcess(databaseUrlOf(owner.db) ?? databaseUrl);

  await owner.createWorkspace(WS);
  await owner.createWorkspace(WS_LIMITED);
  await installFlow(owner, WS, 'nap', SLEEP_NAP_FLOW);
  for (const flow of TOOL_FLOWS) await installFlow(owner, WS, flow.slug, flow.edn);
  agent = await owner.mintKey(WS, ['workspace.full'], 'agent');
}, 180_000);

afterAll(async () => {
  // The owner (first) closes the database: the others first.
  for (const gw of [...gateways].reverse()) await gw.close();
  if (worker) {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
  if (redis) {
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
});

/** The replica after `i`, round the ring. */
const next = (i: number, by = 1) => gateways[(i + by) % gateways.length] as TestGateway;

async function tool(gw: TestGateway, token: string, name: string, args: Record<string, unknown>) {
  const answer = await mcpPost(gw.mcpUrl(WS), {
    token,
    protocolVersion: V,
    body: rpc('tools/call', { name, arguments: args }),
  });
  expect(answer.status, `${gw.runtime}: ${answer.text}`).toBe(200);
  return asRpc(answer);
}

describe(`replicas on ${RUNTIMES.join(', ')} over one database and one Redis`, () => {
  it('run on the runtimes they name', () => {
    expect(gateways.map((gw) => gw.runtime)).toEqual(RUNTIMES);
    expect(new Set(gateways.map((gw) => gw.url)).size).toBe(RUNTIMES.length);
  });

  it('open each other’s pagination cursors: pages taken round the replicas list every tool once', async () => {
    for (let start = 0; start < gateways.length; start++) {
      const seen: string[] = [];
      const servedBy: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 10; page++) {
        const gw = next(start, page);
        servedBy.push(gw.runtime);
        const answer = await tool(gw, agent.apiKey, 'search_flow_tools', {
          limit: 2,
          ...(cursor ? { cursor } : {}),
        });
        const out = answer.result?.structuredContent as {
          tools: Array<{ toolName: string }>;
          nextCursor: string | null;
        };
        seen.push(...out.tools.map((t) => t.toolName));
        cursor = out.nextCursor;
        if (!cursor) break;
      }
      const expected = [...TOOL_FLOWS.map((f) => f.tool), 'take_nap'].sort();
      expect([...seen].sort()).toEqual(expected);
      // Three pages of two: each replica served one and opened the cursor another sealed.
      expect(servedBy).toHaveLength(Math.ceil(expected.length / 2));
    }
  });

  it('poll a task another replica created, and read its result on a third', async () => {
    for (let i = 0; i < gateways.length; i++) {
      const created = asRpc(
        await mcpPost(gateways[i]?.mcpUrl(WS) ?? '', {
          token: agent.apiKey,
          protocolVersion: V,
          body: rpc('tools/call', {
            name: 'call_flow_tool',
            arguments: { flow_slug: 'nap', tool_name: 'take_nap', input: { ms: 200 + i } },
            task: {},
          }),
        }),
      );
      const taskId = (created.result?.task as { taskId?: string } | undefined)?.taskId ?? '';
      expect(taskId).not.toBe('');
      const poller = next(i);
      const deadline = Date.now() + 20_000;
      let status = '';
      while (Date.now() < deadline) {
        const got = asRpc(
          await mcpPost(poller.mcpUrl(WS), {
            token: agent.apiKey,
            protocolVersion: V,
            body: rpc('tasks/get', { taskId }),
          }),
        );
        expect(got.error, `${poller.runtime}: tasks/get`).toBeUndefined();
        status = String(got.result?.status);
        if (status !== 'working') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status, `task from ${gateways[i]?.runtime} polled on ${poller.runtime}`).toBe('completed');
      const result = asRpc(
        await mcpPost(next(i, 2).mcpUrl(WS), {
          token: agent.apiKey,
          protocolVersion: V,
          body: rpc('tasks/result', { taskId }),
        }),
      );
      expect(result.result?.structuredContent).toMatchObject({
        run: { status: 'completed' },
        result: { value: { slept: 200 + i } },
      });
    }
  });

  it('refuse a key revoked through another replica once the auth cache bound has passed', async () => {
    for (let i = 0; i < gateways.length; i++) {
      const revoker = gateways[i] as TestGateway;
      const key = await revoker.mintKey(WS, ['flows.read'], `revoked-through-${revoker.runtime}`);
      const list = (gw: TestGateway) =>
        mcpPost(gw.mcpUrl(WS), { token: key.apiKey, protocolVersion: V, body: rpc('tools/list') });
      // Every replica has the key in its cache.
      for (const gw of gateways) expect((await list(gw)).status, gw.runtime).toBe(200);
      const revoked = await revoker.admin(
        'DELETE',
        `/api/workspaces/${WS}/service-accounts/${key.serviceAccountId}/keys/${key.keyId}`,
      );
      expect(revoked.status, revoked.text).toBeLessThan(300);
      const at = Date.now();
      // The replica that revoked it forgets it at once; the others within their cache bound.
      expect((await list(revoker)).status).toBe(401);
      await new Promise((r) => setTimeout(r, AUTH_CACHE_TTL_S * 1000 + 200 - (Date.now() - at)));
      for (const gw of gateways) expect((await list(gw)).status, `${gw.runtime} after revocation`).toBe(401);
    }
  });

  it('spend one per-key rate limit across every replica (Redis)', async () => {
    const owner = gateways[0] as TestGateway;
    await owner.setPolicy(WS_LIMITED, { rateLimitPerMinute: LIMIT_PER_MINUTE });
    const key = await owner.mintKey(WS_LIMITED, ['flows.read'], 'limited');
    const list = (gw: TestGateway) =>
      mcpPost(gw.mcpUrl(WS_LIMITED), { token: key.apiKey, protocolVersion: V, body: rpc('tools/list') });
    const statuses: string[] = [];
    // The calls the limit allows, round the replicas: no replica alone sees enough to refuse.
    for (let i = 0; i < LIMIT_PER_MINUTE; i++) {
      const gw = next(0, i);
      statuses.push(`${gw.runtime}:${(await list(gw)).status}`);
    }
    // The next call is refused wherever it lands.
    for (const gw of gateways) statuses.push(`${gw.runtime}:${(await list(gw)).status}`);
    expect(statuses).toEqual([
      ...Array.from({ length: LIMIT_PER_MINUTE }, (_, i) => `${next(0, i).runtime}:200`),
      ...gateways.map((gw) => `${gw.runtime}:429`),
    ]);
    expect(await redis?.exists(`${PREFIX}rl:key:${key.keyId}`)).toBe(1);
  });

  it('answer a waited call_flow_tool inline when the worker process finishes the run', async () => {
    for (const gw of gateways) {
      const started = Date.now();
      const answer = await tool(gw, agent.apiKey, 'call_flow_tool', {
        flow_slug: 'nap',
        tool_name: 'take_nap',
        input: { ms: 500 },
        wait_ms: 20_000,
      });
      const content = answer.result?.structuredContent as {
        run: { runId: string; status: string };
        result: { value?: unknown } | null;
      };
      expect(content.run.status, gw.runtime).toBe('completed');
      expect(content.result?.value).toEqual({ slept: 500 });
      // Woken by the run's end, not by the window running out.
      expect(Date.now() - started, gw.runtime).toBeLessThan(10_000);
      // The worker process ran it (none of the gateways executes runs); its log line may trail the answer.
      const finished = `"runId":"${content.run.runId}","flow":"nap","status":"completed"`;
      const logged = Date.now() + 5_000;
      while (!worker?.out().stdout.includes(finished) && Date.now() < logged)
        await new Promise((r) => setTimeout(r, 50));
      expect(worker?.out().stdout).toContain(finished);
    }
  });

  it('share console sessions and their CSRF tokens', async () => {
    const [a, ...others] = gateways as [TestGateway, ...TestGateway[]];
    const browser = new ConsoleClient(a.url);
    const signedIn = await browser.signIn('token', ADMIN_TOKEN);
    expect(signedIn.status).toBe(303);
    const session = browser.cookies.get('fg_console') ?? '';
    expect(session).not.toBe('');
    // Opened on every other replica, each page carrying a CSRF token; the last replica accepts the one before's.
    const tokens: string[] = [];
    for (const gw of others) {
      browser.csrf = '';
      const page = await browser.page(`/console/w/${WS}/keys`, gw.url);
      expect(page.res.status, gw.runtime).toBe(200);
      tokens.push(browser.csrf);
    }
    expect(tokens.filter((t) => t === '')).toEqual([]);
    const last = others.at(-1) as TestGateway;
    const out = await browser.fetch('POST', '/console/sign-out', { _csrf: tokens.at(-2) ?? '' }, last.url);
    expect(out.status, last.runtime).toBe(303);
    // Signed out through the last: the first no longer knows the session.
    browser.cookies.set('fg_console', session);
    const after = await browser.fetch('GET', `/console/w/${WS}/keys`, undefined, a.url);
    expect(after.status, a.runtime).toBe(303);
    expect(after.headers.get('location')).toBe('/console/sign-in');
  });
});
