import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { getRun, installFlow, type Loopback, startLoopback, startRun, waitForRun } from './support/runs.js';

/**
 * Canary secrets: connection credentials, and credential-shaped values a third-party API echoes back, never leave the
 * worker in the clear — not in a stored run, step, event or audit row, not in an admin API answer, not in a log line.
 * PGlite by default, Postgres with DATABASE_URL.
 */

const WS = 'ws-canary';
const API_SECRET = 'canary-api-secret-6d1f0b3a9e7c';
const LLM_SECRET = 'canary-llm-secret-2a8c4e6f1b3d';
/** Shaped like a JWT and like a bearer credential; known to nobody but the API that sends them back. */
const ECHOED_JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjYW5hcnktdXNlciJ9.Q2FuYXJ5U2lnbmF0dXJlMDEyMzQ1Njc4OWFiY2RlZg';
const ECHOED_BEARER_TOKEN = 'canaryBearerTok3nZ9y8x7w6v5u4t3s2r1q0p';
const CANARIES = [API_SECRET, LLM_SECRET, ECHOED_JWT, ECHOED_BEARER_TOKEN];

const ECHO = `{:slug :echo
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs []}}
 :flow (let [r (flow/step :http :call {:connection :api :path "/echo"})]
         (flow/step :function :keep {:code (fn [resp] {:status (:status resp) :body (:body resp)}) :input r}))}`;

const LEAKY_LLM = `{:slug :leaky-llm
 :requires [{:slot :llm :type :llm-provider}]
 :invocations {:default {:inputs []}}
 :flow (flow/step :llm :ask {:connection :llm :model "m" :prompt "hello"})}`;

/** Tables a run writes to (or that record what was done with one), every column read as text. */
const TABLES = ['runs', 'run_steps', 'run_events', 'run_slots', 'audit_entries', 'kv_entries'] as const;

let gw: TestGateway;
let api: Loopback;
const logLines: string[] = [];
const runIds: string[] = [];

function leaked(text: string): string[] {
  return CANARIES.filter((c) => text.includes(c));
}

beforeAll(async () => {
  api = await startLoopback((req) => {
    if (req.path === '/echo') {
      return {
        status: 200,
        json: {
          youSent: req.authorization,
          session: ECHOED_JWT,
          note: `retry with Bearer ${ECHOED_BEARER_TOKEN}`,
          token: ECHOED_BEARER_TOKEN,
          plain: 'ordinary data',
        },
      };
    }
    // A provider that quotes the credential (and an echoed token) in its error message.
    return {
      status: 400,
      json: { error: { message: `key ${req.authorization} rejected; session ${ECHOED_JWT}` } },
    };
  });
  gw = await startTestGateway(
    { FLOWGATE_WORKER: 'true', FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true', FLOWGATE_LOG_LEVEL: 'trace' },
    { logLines },
  );
  await gw.createWorkspace(WS);
  const conn = await gw.createConnection(WS, {
    name: 'api',
    type: 'http-api',
    baseUrl: api.url,
    auth: { type: 'bearer', secret: API_SECRET },
  });
  const llm = await gw.createConnection(WS, {
    name: 'llm',
    type: 'llm-provider',
    baseUrl: `${api.url}/v1`,
    auth: { type: 'bearer', secret: LLM_SECRET },
  });
  await installFlow(gw, WS, 'echo', ECHO, { api: conn.connectionId });
  await installFlow(gw, WS, 'leaky-llm', LEAKY_LLM, { llm: llm.connectionId });
  runIds.push(await startRun(gw, WS, 'echo', {}));
  runIds.push(await startRun(gw, WS, 'leaky-llm', {}));
  for (const id of runIds) await waitForRun(gw, WS, id);
});

afterAll(async () => {
  await gw?.close();
  await api?.close();
});

describe('canary secrets', () => {
  it('reached the API in the clear (so the checks below are not vacuous)', () => {
    // The two runs execute concurrently: the order they reached the API in varies.
    expect(api.received.map((r) => r.authorization).sort()).toEqual(
      [`Bearer ${API_SECRET}`, `Bearer ${LLM_SECRET}`].sort(),
    );
  });

  it('admin API answers show the runs redacted', async () => {
    const echo = await getRun(gw, WS, runIds[0] as string);
    expect(echo.status).toBe('completed');
    expect(echo.result).toEqual({
      mimeType: 'application/json',
      value: {
        status: 200,
        body: {
          youSent: 'Bearer [redacted]',
          session: '[redacted]',
          note: 'retry with [redacted]',
          token: '[redacted]',
          plain: 'ordinary data',
        },
      },
    });
    const llm = await getRun(gw, WS, runIds[1] as string);
    expect(llm.status).toBe('failed');
    expect(llm.error).toEqual({
      code: 'llm_request_failed',
      message:
        'step `ask` failed: the LLM provider answered with status 400: key Bearer [redacted] rejected; session [redacted]',
      stepId: 'ask',
    });

    const answers = [
      (await gw.admin('GET', `/api/workspaces/${WS}/runs`)).text,
      (await gw.admin('GET', `/api/workspaces/${WS}/runs/${runIds[0]}`)).text,
      (await gw.admin('GET', `/api/workspaces/${WS}/runs/${runIds[1]}`)).text,
      (await gw.admin('GET', `/api/workspaces/${WS}/audit`)).text,
    ];
    expect(answers.map(leaked)).toEqual([[], [], [], []]);
  });

  it('no stored run, step, event, slot, audit or kv row holds a connection secret', async () => {
    // The audit queue writes in the background: let it flush first.
    await gw.waitForAudit(WS, (items) => items.some((i) => i.action === 'flows.bindings.set'));
    const found: Record<string, string[]> = {};
    let rows = 0;
    for (const table of TABLES) {
      const texts = await gw.db.db.statements.rows<{ row: string }>(
        sql`select t::text as row from ${sql.identifier(table)} t`,
      );
      rows += texts.length;
      found[table] = [...new Set(texts.flatMap((t) => leaked(t.row)))].filter(
        // Echoed token shapes in the journal are checked on their own below.
        (c) => table !== 'run_steps' || c === API_SECRET || c === LLM_SECRET,
      );
    }
    expect(found).toEqual(Object.fromEntries(TABLES.map((t) => [t, []])));
    expect(rows).toBeGreaterThan(10);
  });

  it('echoed token shapes are stored only in journal results, never in any other column', async () => {
    // The journal keeps a step's result as the step returned it (minus known secrets), so a body resumed by replay
    // sees the same data as the first attempt, e.g. a token fetched by one step and sent by a later one. Everything
    // derived from it that is stored for reading (run result, error, events) is redacted.
    const steps = await gw.db.db.statements.rows<{
      run_id: string;
      step_id: string;
      result: string;
      rest: string;
    }>(
      sql`select run_id, step_id, coalesce(result::text, '') as result, (to_jsonb(t) - 'result')::text as rest
          from run_steps t`,
    );
    const order = (s: { run_id: string; step_id: string }) => `${runIds.indexOf(s.run_id)}/${s.step_id}`;
    steps.sort((a, b) => order(a).localeCompare(order(b)));
    expect(steps.map((s) => [s.run_id, s.step_id, leaked(s.result), leaked(s.rest)])).toEqual([
      [runIds[0], 'call', [ECHOED_JWT, ECHOED_BEARER_TOKEN], []],
      [runIds[0], 'keep', [ECHOED_JWT, ECHOED_BEARER_TOKEN], []],
      [runIds[1], 'ask', [], []],
    ]);
  });

  it('no log line holds one', () => {
    const all = logLines.join('');
    // The capture sees the gateway, its worker and its request log (the run reads above included).
    expect(all).toContain('flowgate gateway listening');
    expect(all).toContain('worker started');
    expect(all).toContain(`/api/workspaces/${WS}/runs/${runIds[1]}`);
    expect(leaked(all)).toEqual([]);
  });
});
