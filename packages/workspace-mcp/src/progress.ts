/**
 * Progress while waiting (docs/mcp-surface.md, "Progress while waiting"): a tools/call that waits on a run and carries
 * `params._meta.progressToken` is answered as an SSE stream when the transport can open one — one
 * `notifications/progress` per step that ends while the call waits, then the result. Both protocol generations carry
 * the token the same way (2025-11-25 basic/utilities/progress; 2026-07-28 basic/patterns/progress, where the token sits
 * in `_meta` beside the `io.modelcontextprotocol/*` envelope keys).
 *
 * The source is the run's own event log: step ends are read by event id at a bounded interval while the wait goes on
 * (the workers write events as steps end; no NOTIFY exists per event), and once more when it ends, so every step that
 * ended before the result was read is reported before it. A notification names a step id and its status, never a
 * step's data; `total` is never sent (branches and loops make the step count unknowable in advance).
 */

import { pause } from '@flowgate/core';
import type { RunRecord, RunResult } from '@flowgate/workspace';
import type { McpResponseStream, ToolContext } from './context.js';
import { clip, isJsonObject } from './protocol.js';
export type ProgressToken = string | number;

/** What a call that may report progress holds: the client's token and the way to open the streamed answer. */
export interface CallProgress {
  readonly token: ProgressToken;
  readonly openStream: () => McpResponseStream;
}

/** How often the run's step ends are read while a call waits with a progress token. */
export const PROGRESS_POLL_MS = 250;
/** Notifications one streamed answer carries at most; later step ends are not reported (the result still is). */
export const MAX_PROGRESS_NOTIFICATIONS = 500;
/** Step ends read per query, and queries per read round: a run of thousands of steps is read in bounded slices. */
const PAGE = 100;
const PAGES_PER_ROUND = 5;
/** A token longer than this is not echoed back in every notification: the call is answered without progress. */
const MAX_TOKEN_CHARS = 256;

/** `params._meta.progressToken` when it is a usable token (a bounded string or a finite number), else null. */
export function progressTokenOf(params: Record<string, unknown>): ProgressToken | null {
  const meta = params._meta;
  if (!isJsonObject(meta)) return null;
  const token = meta.progressToken;
  if (typeof token === 'string') return token.length > 0 && token.length <= MAX_TOKEN_CHARS ? token : null;
  if (typeof token === 'number') return Number.isFinite(token) ? token : null;
  return null;
}

/**
 * The tool context for one tools/call: with `progress` when the call carries a progress token and the transport can
 * stream this request's answer; the context itself otherwise (nothing changes for a call without a token).
 */
export function withCallProgress<C extends ToolContext>(ctx: C, params: Record<string, unknown>): C {
  const openStream = ctx.request.openStream;
  const token = progressTokenOf(params);
  if (!openStream || token === null) return ctx;
  const progress: CallProgress = { token, openStream };
  // A child object, not a copy: the context's lazy getters (workspace, codecs) stay lazy.
  return Object.create(ctx, { progress: { value: progress, enumerable: true } }) as C;
}

/**
 * Waits for a run like `runs.wait` (the same window, sleeps inside it waited through) and, when the call has a
 * progress token, streams a notification per step end meanwhile. Without one it is exactly `runs.wait`.
 */
export async function waitForRun(
  ctx: ToolContext,
  runId: string,
  timeoutMs: number,
  after: RunRecord,
): Promise<{ run: RunRecord; result: RunResult | null } | null> {
  const runs = ctx.workspace.runs;
  const signal = ctx.request.signal?.();
  const progress = ctx.progress;
  if (!progress) return runs.wait(runId, timeoutMs, after, signal);

  const stream = progress.openStream();
  let ended = false;
  const waited = runs.wait(runId, timeoutMs, after, signal).finally(() => {
    ended = true;
  });
  let afterId: number | null = null;
  let sent = 0;
  let open = true;
  // A step reported once, whatever its events: a step retried by a resumed attempt does not count twice.
  const reported = new Set<string>();
  const readRound = async () => {
    try {
      await readPages();
    } catch (error) {
      // Progress is an extra: a failed read stops it, and the call still answers with the run.
      open = false;
      ctx.request.onError?.(error);
    }
  };
  const readPages = async () => {
    for (let page = 0; page < PAGES_PER_ROUND && open && sent < MAX_PROGRESS_NOTIFICATIONS; page++) {
      const ends = await runs.stepEnds(runId, { limit: PAGE, afterId });
      for (const end of ends) {
        afterId = end.eventId;
        if (reported.has(end.stepId) || sent >= MAX_PROGRESS_NOTIFICATIONS) continue;
        reported.add(end.stepId);
        sent++;
        const notification = {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: {
            progressToken: progress.token,
            progress: reported.size,
            message: `${clip(end.stepId, 200)} ${end.status}`,
          },
        };
        if (!stream.send(JSON.stringify(notification))) {
          // The client went away: nothing more is sent for this request (its wait ends on the same signal).
          open = false;
          break;
        }
      }
      if (ends.length < PAGE) break;
    }
  };
  try {
    while (!ended && open && !signal?.aborted) {
      await pause(PROGRESS_POLL_MS, { signals: [signal], until: waited });
      if (!ended) await readRound();
    }
  } finally {
    // The wait's own outcome (or failure) is what the call answers with.
    await waited.catch(() => undefined);
  }
  // Steps that ended before the wait did are reported before the result.
  if (open && !signal?.aborted) await readRound();
  return waited;
}
