import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMcpServer } from './check.js';
import { hostileTools, startTestMcpServer, type TestMcpServer } from './testing.js';

const servers: TestMcpServer[] = [];

beforeAll(async () => {
  servers.push(await startTestMcpServer({ generation: '2026-07-28', tools: hostileTools(), name: 'modern' }));
  servers.push(
    await startTestMcpServer({
      generation: '2025',
      tools: hostileTools(),
      name: 'legacy',
      protocolVersion: '2025-06-18',
    }),
  );
});

afterAll(async () => {
  for (const s of servers) await s.close();
});

describe('checkMcpServer', () => {
  it('reports the negotiated version, the server and its tool names, with the connection headers sent', async () => {
    const [modern, legacy] = servers as [TestMcpServer, TestMcpServer];
    const target = (s: TestMcpServer) => ({
      url: new URL(s.url),
      headers: { authorization: 'Bearer check-secret', 'X-Tenant': 'acme' },
      timeoutMs: 5_000,
      allowPrivateNetwork: true,
    });
    expect(await checkMcpServer(target(modern))).toEqual({
      protocolVersion: '2026-07-28',
      serverName: 'modern',
      serverVersion: '1.0.0',
      tools: ['search', 'fetch', 'delete_all', 'fail'],
    });
    expect(await checkMcpServer(target(legacy))).toMatchObject({
      protocolVersion: '2025-06-18',
      serverName: 'legacy',
      tools: ['search', 'fetch', 'delete_all', 'fail'],
    });
    for (const s of servers) {
      expect(new Set(s.requests.map((r) => r.headers.authorization))).toEqual(
        new Set(['Bearer check-secret']),
      );
      expect(s.requests.every((r) => r.headers['x-tenant'] === 'acme')).toBe(true);
    }
  });

  it('refuses a loopback server unless the deployment allows private networks, before anything is sent', async () => {
    const [modern] = servers as [TestMcpServer];
    const before = modern.requests.length;
    const refused = await checkMcpServer({
      url: new URL(modern.url.replace('127.0.0.1', 'localhost')),
      headers: {},
      timeoutMs: 5_000,
      allowPrivateNetwork: false,
    }).catch((error: unknown) => error as Error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error & { cause?: { code?: string } }).cause?.code).toBe('network_address_refused');
    expect(modern.requests.length).toBe(before);
  });
});
