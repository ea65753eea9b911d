/**
 * `pnpm tsx bench/stages.ts [--requests n] [--rounds n]`: where an authenticated `tools/list` spends its time inside
 * the gateway, stage by stage. The real app (createApp over an embedded test database) runs in this process and
 * `app.fetch` is called one request at a time; every handler registered with Hono is wrapped so that its own time
 * (entry to `next()`, and `next()`'s return to its end) is added to its stage. Requests are sequential and touch
 * no I/O once warm, so wall time is CPU time. Requests are web `Request` objects built here (not node-server's
 * lightweight ones), so the adapter's own cost is not in these figures; `pnpm bench --only tools-list` has it.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
  },
});
const requests = z.coerce.number().int().min(100).parse(values.requests);
const rounds = z.coerce.number().int().min(1).parse(values.rounds);

type Handler = (c: unknown, next: () => Promise<void>) => unknown;
interface Stage {
  label: string;
  ms: number;
  calls: number;
}
const stages: Stage[] = [];

/** What each handler is, told by a distinctive piece of its source (tsx keeps it readable). */
const KNOWN: [RegExp, string][] = [
  [/telemetryActive\(\)/, 'requestTelemetry'],
  [/assign\(c,/, 'requestIds'],
  [/logger\.info/, 'requestLog'],
  [/`ip:\$\{ip\}`[\s\S]*bodyLimit\(c,/, 'mcpGate (all of it)'],
  [/`ip:\$\{ip\}`/, 'ipRateLimit'],
  [/streamingLimit/, 'body limit'],
  [/access-control-request-method/, 'mcpCors'],
  [/principalOf\(/, 'authenticate'],
  [/resolveAccess/, 'workspaceAccess'],
  [/bucketOf\(/, 'principalRateLimit'],
  [/origin_not_allowed/, 'originCheck'],
  [/clientIp\(c,/, 'ipAllowlist'],
  [/serve\(c,/, 'MCP route (serve)'],
];

function labelOf(path: string, handler: Handler): string {
  const source = handler.toString();
  const known = KNOWN.find(([pattern]) => pattern.test(source))?.[1] ?? (handler.name || 'anonymous');
  return `${known.padEnd(22)} ${path}`;
}

function timed(path: string, handler: Handler): Handler {
  const stage: Stage = { label: labelOf(path, handler), ms: 0, calls: 0 };
  stages.push(stage);
  return async (c, next) => {
    let started = performance.now();
    stage.calls++;
    const result = await handler(c, async () => {
      stage.ms += performance.now() - started;
      try {
        await next();
      } finally {
        started = performance.now();
      }
    });
    stage.ms += performance.now() - started;
    return result;
  };
}

// Patched before the app is built: every handler reaches Hono's router through `add`, so each is timed there.
const { SmartRouter } = await import('hono/router/smart-router');
const routerProto = SmartRouter.prototype as unknown as {
  add: (method: string, path: string, handler: [Handler, unknown]) => void;
};
const add = routerProto.add;
routerProto.add = function (this: unknown, method, path, [handler, route]) {
  return add.call(this, method, path, [timed(`${method} ${path}`, handler), route]);
};

const { createHarness } = await import('../apps/gateway/src/testing.js');
const h = await createHarness({
  env: { FLOWGATE_RATE_LIMIT_KEY_PER_MIN: '1000000', FLOWGATE_RATE_LIMIT_IP_PER_MIN: '1000000' },
});
await h.createWorkspace('ws-bench');
const { apiKey } = await h.createServiceAccount('ws-bench', ['workspace.full']);
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const headers = {
  authorization: `Bearer ${apiKey}`,
  'content-type': 'application/json',
  'content-length': String(body.length),
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};
const bindings = { remoteAddress: '127.0.0.1' };
async function once(): Promise<void> {
  const res = await h.app.fetch(
    new Request('http://127.0.0.1:8787/api/workspaces/ws-bench/mcp', { method: 'POST', headers, body }),
    bindings,
  );
  if (res.status !== 200) throw new Error(`tools/list answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}
for (let i = 0; i < 2000; i++) await once();

for (let round = 1; round <= rounds; round++) {
  for (const s of stages) {
    s.ms = 0;
    s.calls = 0;
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < requests; i++) await once();
  const totalMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / requests;
  // Stage times are wall time; on a shared machine they are scaled to the process's CPU time per request.
  const scale = cpuUs / ((totalMs * 1000) / requests);
  const perReq = (ms: number) => (((ms * 1000) / requests) * scale).toFixed(1).padStart(6);
  const staged = stages.reduce((sum, s) => sum + s.ms, 0);
  console.log(
    `round ${round}: ${requests} requests, ${cpuUs.toFixed(0)} µs CPU per request; by stage (µs CPU):`,
  );
  for (const s of stages) {
    if (s.calls > 0) console.log(`  ${perReq(s.ms)}  ${s.label}`);
  }
  console.log(`  ${perReq(totalMs - staged)}  the rest: Request built here, Response read, Hono's dispatch`);
}
await h.close();
