import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClient } from './admin-client.js';
import { runWith, startTestGateway, type TestGateway } from './testing.js';

// The real gateway with its in-process worker (PGlite, or Postgres when DATABASE_URL is set); the CLI runs
// in-process against it.
const WS = 'ws-runs-cli';
let gateway: TestGateway;
let client: AdminClient;
let dir: string;
let env: Record<string, string>;

const DOUBLE = `{:slug :double
 :invocations {:default {:inputs [{:name :n :type :integer :required true}]}}
 :flow (flow/step :function :double {:code (fn [x] {:doubled (* 2 (:n x))}) :input (flow/input)})}`;

const NAP = `{:slug :nap
 :invocations {:default {:inputs []}}
 :flow (let [_ (flow/step :sleep :nap {:duration-ms 60000})] {:woke true})}`;

const BROKEN = `{:slug :broken
 :invocations {:default {:inputs []}}
 :flow (flow/step :function :boom {:code (fn [x] (/ 1 (:missing x))) :input (flow/input)})}`;

const cli = (...argv: string[]) => runWith(argv, { env, cwd: dir });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fg-runs-cli-'));
  gateway = await startTestGateway();
  client = gateway.client;
  env = { FLOWGATE_API_URL: gateway.url, FLOWGATE_ADMIN_TOKEN: gateway.token };
  await client.createWorkspace({ id: WS, name: 'runs' });
  for (const [slug, edn] of [
    ['double', DOUBLE],
    ['nap', NAP],
    ['broken', BROKEN],
  ] as const) {
    const pushed = await client.pushDraft(WS, slug, edn);
    expect(pushed.status).toBe(200);
    await client.releaseFlow(WS, slug, {});
  }
});

afterAll(async () => {
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('flowgate runs', () => {
  it('start --wait runs a flow to completion and prints its result', async () => {
    const r = await cli('runs', 'start', 'double', '--workspace', WS, '--input', '{"n":21}', '--wait');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^run:\s+run_[A-Za-z0-9]+$/m);
    expect(r.stdout).toMatch(/^status:\s+completed$/m);
    expect(r.stdout).toMatch(/^double\s+function\s+completed\s+1\s+-$/m);
    expect(r.stdout).toContain('result (application/json):\n{\n  "doubled": 42\n}\n');
  });

  it('start without --wait queues; get and list show the run; --json gives the answer', async () => {
    const started = await cli(
      '--json',
      'runs',
      'start',
      'double',
      '--workspace',
      WS,
      '--input-file',
      writeInput('in.json', '{"n":5}'),
    );
    expect(started.code).toBe(0);
    const { runId, created } = JSON.parse(started.stdout) as { runId: string; created: boolean };
    expect(created).toBe(true);
    let detail: { status: string; result: unknown } = { status: 'queued', result: null };
    for (let i = 0; i < 200 && detail.status !== 'completed'; i++) {
      const got = await cli('--json', 'runs', 'get', runId, '--workspace', WS);
      expect(got.code).toBe(0);
      detail = JSON.parse(got.stdout);
      if (detail.status !== 'completed') await new Promise((r) => setTimeout(r, 25));
    }
    expect(detail).toMatchObject({
      status: 'completed',
      result: { mimeType: 'application/json', value: { doubled: 10 } },
    });
    const listed = await cli('runs', 'list', '--workspace', WS, '--flow', 'double', '--status', 'completed');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+FLOW\s+VERSION\s+STATUS\s+CREATED\s+ERROR$/);
    expect(lines.some((l) => l.startsWith(runId) && /\sdouble\s+1\s+completed\s/.test(l))).toBe(true);
  });

  it('the same idempotency key returns the same run', async () => {
    const args = ['--json', 'runs', 'start', 'double', '--workspace', WS, '--input', '{"n":1}'];
    const a = JSON.parse((await cli(...args, '--idempotency-key', 'k-1')).stdout);
    const b = JSON.parse((await cli(...args, '--idempotency-key', 'k-1')).stdout);
    expect(b.runId).toBe(a.runId);
    expect([a.created, b.created]).toEqual([true, false]);
  });

  it('a failing flow exits 1 with the error code; invalid input changes nothing', async () => {
    const failed = await cli('runs', 'start', 'broken', '--workspace', WS, '--wait');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^status:\s+failed$/m);
    expect(failed.stdout).toMatch(/^error:\s+\S+: /m);

    const before = await client.listRuns(WS, { flow: 'double' });
    const bad = await cli('runs', 'start', 'double', '--workspace', WS, '--input', '{"n":"x"}');
    expect(bad).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: validation_failed: input does not match the invocation: n must be integer\n  - n: must be integer\n',
    });
    const notJson = await cli('runs', 'start', 'double', '--workspace', WS, '--input', '{n:1}');
    expect(notJson).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: invalid_request: the input is not valid JSON\n',
    });
    expect((await client.listRuns(WS, { flow: 'double' })).items.length).toBe(before.items.length);
  });

  it('--wait stops at a sleep that outlasts it; cancel stops the sleeping run; an unknown run is not_found', async () => {
    const waited = await cli(
      '--json',
      'runs',
      'start',
      'nap',
      '--workspace',
      WS,
      '--wait',
      '--timeout',
      '30',
    );
    expect(waited.code).toBe(1);
    const parked = JSON.parse(waited.stdout) as { runId: string; status: string; wakeAt: string };
    expect(parked.status).toBe('waiting');
    expect(waited.stderr).toBe(
      `error: run_not_finished: ${parked.runId} is waiting until ${parked.wakeAt}; follow it with: flowgate runs get ${parked.runId}\n`,
    );
    const started = parked;
    const cancelled = await cli('runs', 'cancel', started.runId, '--workspace', WS);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toBe(`${started.runId} is cancelled\n`);
    expect((await client.getRun(WS, started.runId)).status).toBe('cancelled');

    const missing = await cli('runs', 'get', 'run_doesnotexist00000000', '--workspace', WS);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'error: not_found: run not found\n' });
  });
});

function writeInput(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}
