import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import type { DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { type RunningGateway, startGateway } from './server.js';

const TOKEN = `op_${randomBytes(24).toString('hex')}`;
let db: DbHandle;
let gateway: RunningGateway;

beforeAll(async () => {
  db = await createTestDb();
  const config = loadConfig({
    FLOWGATE_PORT: '0',
    FLOWGATE_ADMIN_TOKEN: TOKEN,
    FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    FLOWGATE_LOG_LEVEL: 'silent',
    FLOWGATE_REQUEST_BODY_TIMEOUT_MS: '1000',
    FLOWGATE_ALLOWED_ORIGINS: 'https://agent.example',
  });
  gateway = await startGateway({ config, db });
});
afterAll(async () => {
  await gateway?.close();
  await db?.close();
});

describe('slow request bodies', () => {
  it('an authenticated request whose body stalls is answered 408 and closed after the body timeout', async () => {
    const socket = connect(gateway.port, '127.0.0.1');
    const started = Date.now();
    const answer = new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk.toString('utf8');
      });
      socket.on('close', () => resolve(data));
      socket.on('error', () => resolve(data));
      // Well past the configured timeout, far below Node's 300 s default.
      setTimeout(() => resolve(data), 8_000).unref();
    });
    socket.write(
      [
        'POST /api/admin/workspaces HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${TOKEN}`,
        'Content-Type: application/json',
        'Accept: application/json, text/event-stream',
        'Content-Length: 100',
        '',
        '{"id":',
      ].join('\r\n'),
    );
    const text = await answer;
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(7_000);
  }, 15_000);

  it('refuses a body timeout outside its bounds', () => {
    expect(() => loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN, FLOWGATE_REQUEST_BODY_TIMEOUT_MS: '10' })).toThrow(
      /FLOWGATE_REQUEST_BODY_TIMEOUT_MS/,
    );
  });

  it('bounds subscriptions/listen streams: 4 per key, 256 per process, 300 s each, access rechecked every 5 s', () => {
    const defaults = loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN });
    expect([
      defaults.mcpMaxListensPerKey,
      defaults.mcpMaxListens,
      defaults.mcpListenMaxMs,
      defaults.mcpListenRecheckMs,
    ]).toEqual([4, 256, 300_000, 5_000]);
    const set = loadConfig({
      FLOWGATE_ADMIN_TOKEN: TOKEN,
      FLOWGATE_MCP_MAX_LISTENS_PER_KEY: '2',
      FLOWGATE_MCP_MAX_LISTENS: '20',
      FLOWGATE_MCP_LISTEN_MAX_SECONDS: '60',
      FLOWGATE_MCP_LISTEN_RECHECK_SECONDS: '2',
    });
    expect([set.mcpMaxListensPerKey, set.mcpMaxListens, set.mcpListenMaxMs, set.mcpListenRecheckMs]).toEqual([
      2, 20, 60_000, 2_000,
    ]);
    expect(() => loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN, FLOWGATE_MCP_LISTEN_MAX_SECONDS: '0' })).toThrow(
      /FLOWGATE_MCP_LISTEN_MAX_SECONDS/,
    );
  });

  it('reads listen streams every 10 s as a safety net where NOTIFY wakes them, unless told otherwise', () => {
    expect(loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN }).mcpListenSafetyPollMs).toBe(10_000);
    expect(
      loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN, FLOWGATE_MCP_LISTEN_SAFETY_POLL_SECONDS: '60' })
        .mcpListenSafetyPollMs,
    ).toBe(60_000);
    expect(() =>
      loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN, FLOWGATE_MCP_LISTEN_SAFETY_POLL_SECONDS: '0' }),
    ).toThrow(/FLOWGATE_MCP_LISTEN_SAFETY_POLL_SECONDS/);
  });

  it('bounds parked MCP waits: 32 per key and 512 per process unless told otherwise, never 0', () => {
    const defaults = loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN });
    expect([defaults.mcpMaxWaitsPerKey, defaults.mcpMaxWaits]).toEqual([32, 512]);
    const set = loadConfig({
      FLOWGATE_ADMIN_TOKEN: TOKEN,
      FLOWGATE_MCP_MAX_WAITS_PER_KEY: '4',
      FLOWGATE_MCP_MAX_WAITS: '40',
    });
    expect([set.mcpMaxWaitsPerKey, set.mcpMaxWaits]).toEqual([4, 40]);
    expect(() => loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN, FLOWGATE_MCP_MAX_WAITS_PER_KEY: '0' })).toThrow(
      /FLOWGATE_MCP_MAX_WAITS_PER_KEY/,
    );
    expect(() => loadConfig({ FLOWGATE_ADMIN_TOKEN: TOKEN, FLOWGATE_MCP_MAX_WAITS: 'lots' })).toThrow(
      /FLOWGATE_MCP_MAX_WAITS/,
    );
  });
});

describe("tools/list through Node's listener (the cached list written piece by piece)", () => {
  let url: string;
  let apiKey: string;
  const admin = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`http://127.0.0.1:${gateway.port}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as Record<string, unknown>;
  };
  beforeAll(async () => {
    await admin('/api/admin/workspaces', { id: 'ws-parts', name: 'parts' });
    const sa = await admin('/api/workspaces/ws-parts/service-accounts', {
      name: 'agent',
      capabilities: ['workspace.full'],
    });
    const key = await admin(
      `/api/workspaces/ws-parts/service-accounts/${String(sa.serviceAccountId)}/keys`,
      {},
    );
    apiKey = (key.key as { apiKey: string }).apiKey;
    url = `http://127.0.0.1:${gateway.port}/api/workspaces/ws-parts/mcp`;
  });
  const list = (id: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }),
    });

  it('answers the whole list with its exact length, the request id, and no internal marker', async () => {
    // Quotes and non-ASCII in the id: the spliced head is checked byte for byte.
    const id = 'list "1" ≤ é';
    const res = await list(id);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('content-length')).toBe(String(bytes.byteLength));
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(res.headers.get('x-flowgate-body-parts')).toBeNull();
    const text = new TextDecoder().decode(bytes);
    const parsed = JSON.parse(text) as {
      jsonrpc: string;
      id: unknown;
      result: { tools: { name: string }[] };
    };
    expect(parsed.jsonrpc).toBe('2.0');
    expect(parsed.id).toBe(id);
    expect(parsed.result.tools.map((t) => t.name)).toContain('call_flow_tool');
    expect(text.startsWith(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[`)).toBe(true);
  });

  it('keeps a kept-alive connection framed across answers, and the same list for every id', async () => {
    const bodies: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await list(i);
      expect(res.status).toBe(200);
      bodies.push(await res.text());
    }
    const results = bodies.map((b) => JSON.stringify((JSON.parse(b) as { result: unknown }).result));
    expect(new Set(results).size).toBe(1);
    expect(bodies.map((b) => (JSON.parse(b) as { id: number }).id)).toEqual([0, 1, 2, 3, 4]);
  });

  it('includes headers middleware adds on the way out (CORS for an allowed Origin)', async () => {
    const res = await list(9, { origin: 'https://agent.example' });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://agent.example');
    expect(res.headers.get('vary')).toContain('Origin');
    expect(res.headers.get('x-flowgate-body-parts')).toBeNull();
    expect(res.headers.get('content-length')).toBe(String(new TextEncoder().encode(text).byteLength));
    expect((JSON.parse(text) as { id: number }).id).toBe(9);
  });
});
