import { Agent, request } from 'node:http';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordGc } from '../bench/lib/gc.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';

const WS = 'ws-memory';
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/**
 * A request answered is garbage for the next young-generation collection. What kept requests longer cost the gateway
 * a fifth of its throughput (`pnpm bench --only tools-list`): a getter on a per-request object literal is an accessor
 * pair V8 allocates in the old generation, and that dead pair kept its closure, and through it the whole request,
 * alive until the next full collection, so every request's objects were copied into the old generation (≈ 9 KB per
 * request here on Node 20, ≈ 0.6 KB without it). The gateway runs in this process on Node's HTTP server (the production path),
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

  // Node 20 and 22: on Node 24 V8's young generation is sized and collected differently, and the same code measured
  // 2.5 to 6.5 KB per request from run to run there, which does not tell a kept request from a released one.
  it.runIf(NODE_MAJOR < 24)(
    'leaves nothing for the old generation (tools/list and ping, one at a time)',
    async () => {
      for (let i = 0; i < 300; i++) await call(i % 2 ? 'ping' : 'tools/list');
      // The bench's own GC figures (v8.GCProfiler in this process). Served until enough young collections happened for
      // the figure to mean something: how much allocation one takes depends on the Node version's young generation.
      const recording = recordGc();
      let young = 0;
      const observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries())
          if (
            (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ===
            constants.NODE_PERFORMANCE_GC_MINOR
          )
            young++;
      });
      observer.observe({ entryTypes: ['gc'] });
      let requests = 0;
      while (requests < 3000 || (young < 4 && requests < 40_000)) {
        for (let i = 0; i < 500; i++) await call(i % 2 ? 'ping' : 'tools/list');
        requests += 500;
      }
      observer.disconnect();
      const { promotedBytes: promoted, scavenges } = recording.stop();
      expect(scavenges).toBeGreaterThanOrEqual(3);
      // Caches and compiled code settle in the old generation too; a kept request is ≈ 9 KB.
      expect(promoted / requests).toBeLessThan(1024);
    },
    60_000,
  );
});
