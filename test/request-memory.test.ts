import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordGc } from '../bench/lib/gc.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';

const WS = 'ws-memory';

/**
 * A request answered is garbage for the next young-generation collection. What kept requests longer cost the gateway
 * a fifth of its throughput (`pnpm bench --only tools-list`): a getter on a per-request object literal is an accessor
 * pair V8 allocates in the old generation, and that dead pair kept its closure, and through it the whole request,
 * alive until the next full collection, so every request's objects were copied into the old generation (≈ 9 KB per
 * request here, ≈ 0.6 KB without it). The gateway runs in this process on Node's HTTP server (the production path),
 * called with `node:http` one request at a time, so nothing but the gateway's own caches has reason to survive.
 */
describe('an answered MCP request', () => {
  let gw: TestGateway;
  let apiKey: string;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  beforeAll(async () => {
    gw = await startTestGateway(
      // Far more requests than a key's default rate allows.
      { FLOWGATE_RATE_LIMIT_KEY_PER_MIN: '0', FLOWGATE_RATE_LIMIT_IP_PER_MIN: '0' },
      // The figure is this process's heap: the gateway must run in it, whatever runtime the other files use.
      { runtime: 'node' },
    );
    await gw.createWorkspace(WS);
    ({ apiKey } = await gw.mintKey(WS, ['workspace.full']));
  });
  afterAll(async () => {
    agent.destroy();
    await gw?.close();
  });

  const call = (method: string) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} });
      const req = request(
        gw.mcpUrl(WS),
        {
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${apiKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`${method}: HTTP ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('leaves nothing for the old generation (tools/list and ping, one at a time)', async () => {
    for (let i = 0; i < 300; i++) await call(i % 2 ? 'ping' : 'tools/list');
    const requests = 3000;
    // The bench's own GC figures (v8.GCProfiler in this process).
    const recording = recordGc();
    for (let i = 0; i < requests; i++) await call(i % 2 ? 'ping' : 'tools/list');
    const { promotedBytes: promoted, scavenges } = recording.stop();
    // Enough allocation for collections to have happened, or the figure means nothing.
    expect(scavenges).toBeGreaterThanOrEqual(3);
    // Caches and compiled code settle in the old generation too; a kept request is ≈ 9 KB.
    expect(promoted / requests).toBeLessThan(1024);
  }, 60_000);
});
