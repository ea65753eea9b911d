import type { RunRecord } from '@flowgate/workspace';
import { describe, expect, it } from 'vitest';
import type { ToolContext } from './context.js';
import { MAX_PROGRESS_NOTIFICATIONS, progressTokenOf, waitForRun, withCallProgress } from './progress.js';

type End = { eventId: number; stepId: string; status: 'completed' | 'failed' };

const RUN = { id: 'run_progress0000000000', status: 'running' } as RunRecord;
const WAITED = {
  run: { ...RUN, status: 'completed' } as RunRecord,
  result: { mimeType: 'application/json', value: 1 },
};

/** A tool context whose run ends when `wait` resolves and whose step ends are `ends` (read by event id). */
function fakeCtx(options: {
  ends: End[];
  token?: string | number;
  accept?: (json: string) => boolean;
  failReads?: boolean;
}) {
  const sent: unknown[] = [];
  const errors: unknown[] = [];
  let reads = 0;
  const ctx = {
    request: { onError: (e: unknown) => errors.push(e) },
    workspace: {
      runs: {
        wait: async () => WAITED,
        stepEnds: async (_runId: string, page: { limit: number; afterId: number | null }) => {
          reads++;
          if (options.failReads) throw new Error('database gone');
          return options.ends.filter((e) => e.eventId > (page.afterId ?? 0)).slice(0, page.limit);
        },
      },
    },
    ...(options.token !== undefined
      ? {
          progress: {
            token: options.token,
            openStream: () => ({
              send: (json: string) => {
                sent.push(JSON.parse(json));
                return options.accept ? options.accept(json) : true;
              },
            }),
          },
        }
      : {}),
  } as unknown as ToolContext;
  return { ctx, sent, errors, reads: () => reads };
}

const ends = (ids: string[]): End[] =>
  ids.map((stepId, i) => ({ eventId: i + 1, stepId, status: i % 2 ? 'failed' : 'completed' }));

describe('waitForRun', () => {
  it('is the plain wait without a progress token: no step end is read', async () => {
    const { ctx, sent, reads } = fakeCtx({ ends: ends(['a']) });
    expect(await waitForRun(ctx, RUN.id, 1_000, RUN)).toBe(WAITED);
    expect(reads()).toBe(0);
    expect(sent).toEqual([]);
  });

  it('reports each step once, numbered by steps done, with its id and status only', async () => {
    const { ctx, sent } = fakeCtx({ ends: ends(['a', 'b', 'a', 'c']), token: 7 });
    expect(await waitForRun(ctx, RUN.id, 1_000, RUN)).toBe(WAITED);
    expect(sent).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 7, progress: 1, message: 'a completed' },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 7, progress: 2, message: 'b failed' },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 7, progress: 3, message: 'c failed' },
      },
    ]);
  });

  it('stops at the cap per stream', async () => {
    const many = ends(Array.from({ length: MAX_PROGRESS_NOTIFICATIONS + 50 }, (_, i) => `s${i}`));
    const { ctx, sent } = fakeCtx({ ends: many, token: 'tok' });
    await waitForRun(ctx, RUN.id, 1_000, RUN);
    expect(sent).toHaveLength(MAX_PROGRESS_NOTIFICATIONS);
    expect((sent.at(-1) as { params: { progress: number } }).params.progress).toBe(
      MAX_PROGRESS_NOTIFICATIONS,
    );
  });

  it('sends nothing more once the client has gone, and still answers with the run', async () => {
    const { ctx, sent } = fakeCtx({ ends: ends(['a', 'b', 'c']), token: 'tok', accept: () => false });
    expect(await waitForRun(ctx, RUN.id, 1_000, RUN)).toBe(WAITED);
    expect(sent).toHaveLength(1);
  });

  it('answers with the run when reading step ends fails (progress stops, the error is logged)', async () => {
    const { ctx, sent, errors } = fakeCtx({ ends: [], token: 'tok', failReads: true });
    expect(await waitForRun(ctx, RUN.id, 1_000, RUN)).toBe(WAITED);
    expect(sent).toEqual([]);
    expect(errors).toHaveLength(1);
  });
});

describe('progress tokens', () => {
  it('reads _meta.progressToken: a bounded string or a finite number', () => {
    expect(progressTokenOf({ _meta: { progressToken: 'abc' } })).toBe('abc');
    expect(progressTokenOf({ _meta: { progressToken: 0 } })).toBe(0);
    expect(progressTokenOf({ _meta: { progressToken: '' } })).toBeNull();
    expect(progressTokenOf({ _meta: { progressToken: 'x'.repeat(257) } })).toBeNull();
    expect(progressTokenOf({ _meta: { progressToken: { no: 1 } } })).toBeNull();
    expect(progressTokenOf({ _meta: { progressToken: null } })).toBeNull();
    expect(progressTokenOf({})).toBeNull();
  });

  it('leaves the context as it is without a token or without a stream', () => {
    const stream = () => ({ send: () => true });
    const withStream = { request: { openStream: stream } } as unknown as ToolContext;
    expect(withCallProgress(withStream, {})).toBe(withStream);
    const noStream = { request: {} } as unknown as ToolContext;
    expect(withCallProgress(noStream, { _meta: { progressToken: 1 } })).toBe(noStream);
    const given = withCallProgress(withStream, { _meta: { progressToken: 1 } });
    expect(given.progress?.token).toBe(1);
    expect(given.request).toBe(withStream.request);
  });
});
