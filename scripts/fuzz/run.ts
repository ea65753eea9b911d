/**
 * `pnpm fuzz [--runs n] [--seed=n]`: the property-based fuzzer (./fuzz.ts) against a live gateway on loopback
 * (embedded PGlite in a temp dir, seeded over the admin API with a workspace, two keys and a released flow).
 * Prints the seed (re-run a failure with `--seed`); fast-check shrinks a failing input to a small one. Afterwards
 * the gateway must still be healthy: GET /healthz answers 200 and a normal tools/list works.
 * Exit code: 0 when every input passed and the gateway is healthy, 1 otherwise.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger, loadConfig, startGateway } from '@flowgate/gateway';
import fc from 'fast-check';
import { z } from 'zod';
import { anyRequest, FUZZ_WS, type FuzzTarget, judge, send } from './fuzz.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100000' },
    seed: { type: 'string' },
  },
});
const runs = z.coerce.number().int().min(1).max(10_000_000).parse(values.runs);
const seed =
  values.seed !== undefined ? z.coerce.number().int().parse(values.seed) : randomBytes(4).readInt32LE(0);

const FLOW = `{:slug :echo
 :invocations {:default {:inputs [{:name :word :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "echo_word" :invocation :default}]}
 :flow (flow/step :function :echo {:code (fn [x] {:echoed (:word x)}) :input (flow/input)})}`;

const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-fuzz-'));
const adminToken = `fuzz-${randomBytes(24).toString('hex')}`;
const gw = await startGateway({
  config: loadConfig({
    FLOWGATE_HOST: '127.0.0.1',
    FLOWGATE_PORT: '0',
    FLOWGATE_DATA_DIR: dataDir,
    FLOWGATE_ADMIN_TOKEN: adminToken,
    FLOWGATE_WORKER: 'true',
    // Limits would answer most of a fast fuzzer's inputs with 429 and leave the handlers behind them untouched.
    FLOWGATE_RATE_LIMIT_KEY_PER_MIN: '0',
    FLOWGATE_RATE_LIMIT_IP_PER_MIN: '0',
  }),
  logger: createLogger(process.env.FUZZ_LOG_LEVEL ?? 'error'),
});

async function admin(method: string, path: string, body: unknown, expect: number, type = 'application/json') {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect)
    throw new Error(`seeding: ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
}

async function key(capabilities: string[]): Promise<string> {
  const sa = await admin(
    'POST',
    `/api/workspaces/${FUZZ_WS}/service-accounts`,
    { name: `fuzz-${capabilities.length}`, capabilities },
    201,
  );
  const created = await admin(
    'POST',
    `/api/workspaces/${FUZZ_WS}/service-accounts/${String(sa.serviceAccountId)}/keys`,
    {},
    201,
  );
  return (created.key as { apiKey: string }).apiKey;
}

const mcpHeaders = (token: string) => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
});

/** The error code of an answer (`{code}` or a JSON-RPC error's code, or a tool result's isError), else "-". */
function outcomeCode(text: string): string {
  try {
    const v = JSON.parse(text) as {
      code?: unknown;
      error?: { code?: unknown };
      result?: { isError?: boolean; structuredContent?: { code?: unknown; error?: { code?: unknown } } };
    };
    if (v.code !== undefined) return String(v.code);
    if (v.error?.code !== undefined) return `rpc ${String(v.error.code)}`;
    if (v.result?.isError)
      return `tool error ${String(v.result.structuredContent?.code ?? v.result.structuredContent?.error?.code ?? '')}`;
    return v.result ? 'result' : '-';
  } catch {
    return text ? 'not json' : 'empty';
  }
}

let exitCode = 1;
try {
  await admin('POST', '/api/admin/workspaces', { id: FUZZ_WS, name: FUZZ_WS }, 201);
  await admin('PUT', `/api/workspaces/${FUZZ_WS}/flows/echo/draft`, FLOW, 200, 'application/edn');
  await admin('POST', `/api/workspaces/${FUZZ_WS}/flows/echo/release`, {}, 200);
  const fullKey = await key([
    'flows.read',
    'flows.run',
    'flows.manage',
    'runs.read',
    'connections.read',
    'steps.read',
    'feedback.send',
    'installations.read',
  ]);
  const readKey = await key(['flows.read']);
  const call = await fetch(`${gw.url}/api/workspaces/${FUZZ_WS}/mcp`, {
    method: 'POST',
    headers: mcpHeaders(fullKey),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'call_flow_tool',
        arguments: { flow_slug: 'echo', tool_name: 'echo_word', input: { word: 'x' }, wait_ms: 10_000 },
      },
    }),
  });
  const runId = ((await call.json()) as { result?: { structuredContent?: { run?: { runId?: string } } } })
    .result?.structuredContent?.run?.runId;
  if (!runId) throw new Error('seeding: call_flow_tool did not return a run');
  const target: FuzzTarget = { url: gw.url, adminToken, fullKey, readKey, runId };

  console.log(
    `fuzz: ${runs.toLocaleString('en-US')} inputs, seed ${seed} (re-run with --seed=${seed}), gateway ${gw.url}`,
  );
  const started = Date.now();
  const statuses = new Map<number, number>();
  // Surface, status and error code of each answer: shows which handlers the inputs reached.
  const outcomes = new Map<string, number>();
  let sent = 0;
  let slowest = 0;
  const progressEvery = Math.max(1000, Math.floor(runs / 20));
  const property = fc.asyncProperty(anyRequest(target), async (req) => {
    const answer = await send(gw.url, req);
    sent += 1;
    slowest = Math.max(slowest, answer.ms);
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    const outcome = `${req.surface} ${answer.status} ${outcomeCode(answer.text)}`;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    if (sent % progressEvery === 0) {
      console.log(
        `fuzz: ${sent.toLocaleString('en-US')} sent, ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );
    }
    const why = judge(req, answer);
    if (why) throw new Error(why);
  });
  let failure: unknown;
  try {
    await fc.assert(property, { seed, numRuns: runs });
  } catch (err) {
    failure = err;
  }

  // Healthy afterwards: the process answers and a normal call through the whole stack still works.
  const health = await fetch(`${gw.url}/healthz`);
  const list = await fetch(`${gw.url}/api/workspaces/${FUZZ_WS}/mcp`, {
    method: 'POST',
    headers: mcpHeaders(fullKey),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  const tools = ((await list.json()) as { result?: { tools?: unknown[] } }).result?.tools?.length ?? 0;
  const healthy = health.status === 200 && list.status === 200 && tools > 0;

  const seconds = (Date.now() - started) / 1000;
  const byStatus = [...statuses]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}: ${n.toLocaleString('en-US')}`);
  console.log(
    `fuzz: ${sent.toLocaleString('en-US')} requests in ${seconds.toFixed(0)} s (${(sent / seconds).toFixed(0)}/s), slowest answer ${slowest.toFixed(0)} ms`,
  );
  console.log(`fuzz: statuses ${byStatus.join(', ')}`);
  console.log('fuzz: most frequent outcomes (surface, status, error code):');
  for (const [o, n] of [...outcomes].sort((a, b) => b[1] - a[1]).slice(0, 14)) {
    console.log(`  ${n.toLocaleString('en-US').padStart(8)}  ${o}`);
  }
  console.log(`fuzz: after — GET /healthz ${health.status}, tools/list ${list.status} with ${tools} tools`);
  if (failure) {
    console.log(`fuzz: FAILED (seed ${seed})`);
    console.log(failure instanceof Error ? failure.message : String(failure));
    // fast-check keeps the property's own error (what was wrong with the answer) as the cause.
    const cause = failure instanceof Error ? failure.cause : undefined;
    if (cause) console.log(`answer: ${cause instanceof Error ? cause.message : String(cause)}`);
  } else if (!healthy) {
    console.log(`fuzz: FAILED: the gateway is not healthy after the run (seed ${seed})`);
  } else {
    console.log(
      `fuzz: PASS — no 5xx, every answer within 2 s and well-formed, gateway healthy after (seed ${seed})`,
    );
    exitCode = 0;
  }
} catch (err) {
  console.error(`fuzz: could not run: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  await gw.close();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
