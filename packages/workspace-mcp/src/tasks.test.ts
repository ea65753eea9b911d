import type { RunStatus } from '@flowgate/core';
import type { RunRecord } from '@flowgate/workspace';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { McpPrincipal } from './context.js';
import {
  isExpired,
  openTaskId,
  sealTaskId,
  TASK_TTL_MS,
  taskCodec,
  taskStatusOf,
  taskStatusV2,
  taskV1,
  taskV2,
} from './tasks.js';

/** The documented mapping (docs/mcp-surface.md), written out independently of the code under test. */
const MAPPED: Record<RunStatus, string> = {
  queued: 'working',
  running: 'working',
  waiting: 'working',
  completed: 'completed',
  failed: 'failed',
  'timed-out': 'failed',
  cancelled: 'cancelled',
};
/**
 * 2026-07-28 keeps `failed` for a JSON-RPC error of the call; a failed or timed-out run is a result the call answers,
 * so its task is `completed` (ext-tasks 2026-07-28, "Task Execution Errors").
 */
const MAPPED_V2: Record<RunStatus, string> = { ...MAPPED, failed: 'completed', 'timed-out': 'completed' };
const STATUSES = Object.keys(MAPPED) as RunStatus[];

const iso = fc
  .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
  .map((d) => d.toISOString());

const runArb: fc.Arbitrary<RunRecord> = fc.record({
  id: fc.stringMatching(/^run_[A-Za-z0-9]{8,20}$/),
  flowSlug: fc.constantFrom('nap', 'greet'),
  installationId: fc.constant(null),
  version: fc.option(fc.integer({ min: 1, max: 9 }), { nil: null }),
  target: fc.constantFrom('live' as const, 'draft' as const),
  toolName: fc.option(fc.constantFrom('take_nap', 'greet_person'), { nil: null }),
  invocation: fc.constant('default'),
  status: fc.constantFrom(...STATUSES),
  input: fc.constant({}),
  error: fc.option(fc.record({ code: fc.string({ maxLength: 10 }), message: fc.string({ maxLength: 40 }) }), {
    nil: null,
  }),
  resultMimeType: fc.constant(null),
  attempts: fc.integer({ min: 0, max: 5 }),
  usage: fc.constant({ steps: 0, httpCalls: 0, llmTokens: 0 }),
  cancelRequested: fc.boolean(),
  createdAt: iso,
  startedAt: fc.option(iso, { nil: null }),
  finishedAt: fc.option(iso, { nil: null }),
  wakeAt: fc.option(iso, { nil: null }),
});

const ALICE: McpPrincipal = { kind: 'service_account', id: 'sa_alice', name: 'alice', keyId: 'k1' };
const BOB: McpPrincipal = { kind: 'service_account', id: 'sa_bob', name: 'bob', keyId: 'k2' };
const KEY = 'k'.repeat(32);

describe('task status', () => {
  it('is always the mapped status of its run, per generation', () => {
    fc.assert(
      fc.property(runArb, (run) => {
        const v1 = taskV1('t', run);
        const v2 = taskV2('t', run);
        expect(taskStatusOf(run.status)).toBe(MAPPED[run.status]);
        // 2025-11-25: a recorded cancellation makes the task `cancelled` for good, whatever the run does next.
        expect(v1.status).toBe(run.cancelRequested ? 'cancelled' : MAPPED[run.status]);
        expect(taskStatusV2(run.status)).toBe(MAPPED_V2[run.status]);
        expect(v2.status).toBe(MAPPED_V2[run.status]);
        // Only a task that can still change suggests polling.
        const working = MAPPED[run.status] === 'working';
        expect('pollInterval' in v1).toBe(working && !run.cancelRequested);
        expect('pollIntervalMs' in v2).toBe(working);
        // One documented TTL, so a task reads the same from any request (creation, get, list).
        expect(v1.ttl).toBe(TASK_TTL_MS);
        expect(v2.ttlMs).toBe(TASK_TTL_MS);
        expect(v1.createdAt).toBe(run.createdAt);
      }),
    );
  });
});

describe('task ids', () => {
  it('round-trip for their workspace and principal, and are foreign everywhere else', () => {
    const mine = taskCodec('ws-a', ALICE, KEY);
    const otherWs = taskCodec('ws-b', ALICE, KEY);
    const otherPrincipal = taskCodec('ws-a', BOB, KEY);
    const otherKey = taskCodec('ws-a', ALICE, 'z'.repeat(32));
    fc.assert(
      fc.property(fc.stringMatching(/^run_[A-Za-z0-9]{8,40}$/), (runId) => {
        const id = sealTaskId(mine, runId);
        expect(openTaskId(mine, id)).toBe(runId);
        // One run, one id: sealing it again (another request, another replica) gives the very same id.
        expect(sealTaskId(taskCodec('ws-a', ALICE, KEY), runId)).toBe(id);
        // Another replica with the same key reads it; nobody else does.
        expect(openTaskId(taskCodec('ws-a', ALICE, KEY), id)).toBe(runId);
        expect(openTaskId(otherWs, id)).toBeNull();
        expect(openTaskId(otherPrincipal, id)).toBeNull();
        expect(openTaskId(otherKey, id)).toBeNull();
        expect(openTaskId(mine, `${id}A`)).toBeNull();
      }),
    );
  });

  it('are not list cursors, and junk opens to nothing', () => {
    const codec = taskCodec('ws-a', ALICE, KEY);
    expect(openTaskId(codec, codec.seal('tasks/list', 'x'))).toBeNull();
    // Ids of the former shape (run, TTL and flag sealed together) do not open.
    expect(openTaskId(codec, codec.seal('task', '["run_12345678",86400000,1]'))).toBeNull();
    expect(openTaskId(codec, codec.seal('task:run', 7))).toBeNull();
    fc.assert(
      fc.property(fc.anything(), (junk) => {
        expect(openTaskId(codec, junk)).toBeNull();
      }),
    );
  });
});

describe('task lifetime', () => {
  it('expires a day after the run was created', () => {
    expect(TASK_TTL_MS).toBe(24 * 60 * 60 * 1000);
    const run = { createdAt: '2026-01-01T00:00:00.000Z' } as RunRecord;
    const created = Date.parse(run.createdAt);
    expect(isExpired(run, created + TASK_TTL_MS - 1)).toBe(false);
    expect(isExpired(run, created + TASK_TTL_MS)).toBe(true);
  });
});
