/**
 * `subscriptions/listen` (2026-07-28, basic/utilities/subscriptions; Tasks extension, "Task Status Notifications"):
 * one bounded SSE stream per request that carries `notifications/resources/updated` for the run resources it
 * subscribed to, `notifications/tasks` for its tasks and `notifications/tools/list_changed` when what tools/list
 * answers the caller changes (its policy or capabilities, and on a per-flow endpoint a release of the flow; its
 * access is read again periodically through the transport's `recheck`, which also ends the stream once that access is
 * gone). The acknowledgement comes first and names only what is honoured: a URI or task id that
 * is foreign, forged, unknown or not readable by the caller is left out, never refused, so a guess learns nothing.
 *
 * Delivery: changes are always read from the database through the stream's own workspace-scoped queries. Where the
 * process hears NOTIFY (a LISTEN connection: Postgres on Node, Bun and Deno, PGlite), the gateway passes each
 * notification to the hub (`wake`): ids only, a run id or a workspace id. It wakes just the streams that watch that run
 * or belong to that workspace, which then read it; a safety poll every `safetyPollMs` covers a missed notification.
 * Where nothing listens (a per-request database on Workers) each stream reads every `pollMs`. A notification never
 * carries data, so a forged or foreign one can at most cause a read the stream was entitled to anyway.
 *
 * Bounds: streams per key and per process (a gate of their own, so long-lived streams never starve parked waits),
 * at most MAX_SUBSCRIPTIONS URIs and task ids, a maximum duration, and a heartbeat comment (sse.ts in the gateway).
 * The stream ends with the empty `subscriptions/listen` result when the duration is over, when the gateway shuts
 * down, when access is gone, or when nothing subscribed can change any more (every run ended and its events were read,
 * no tool list watched).
 */
import { pause, type RunStatus } from '@flowgate/core';
import type { RunRecord } from '@flowgate/workspace';
import { z } from 'zod';
import type { McpRequestContext } from './context.js';
import { toolIconBase } from './icons.js';
import { LIMITS } from './limits.js';
import type { Scope } from './methods/scope.js';
import { readTaskV2 } from './methods/tasks.js';
import { listedTools } from './methods/tools.js';
import { invalidParams, JSONRPC_INVALID_REQUEST, JsonRpcFailure, type JsonRpcId } from './protocol.js';
import { templateResourceAllowed } from './resources.js';
import type { McpSurface } from './surface.js';
import { isTerminal, openTaskId, type TaskStatus, taskStatusOf, taskStatusV2 } from './tasks.js';
import { runEventsUri, runResultUri, runUri } from './uris.js';
import { createWaitGate, TooManyWaits, type WaitGate, waitKey } from './waits.js';

export const LISTEN_METHOD = 'subscriptions/listen';
export const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';
export const TOO_MANY_LISTENS = 'too_many_listens';
export const DEFAULT_MAX_LISTENS_PER_KEY = 4;
export const DEFAULT_MAX_LISTENS = 256;
export const DEFAULT_LISTEN_MAX_MS = 5 * 60_000;
/** How often a stream reads the runs it watches (status, and events written since the last read) where nothing listens. */
export const DEFAULT_LISTEN_POLL_MS = 500;
/** Where NOTIFY wakes streams: how often each still reads everything it watches, for a notification that was missed. */
export const DEFAULT_LISTEN_SAFETY_POLL_MS = 10_000;
/** Resource URIs and task ids together, per stream: each costs a read per poll. */
export const MAX_SUBSCRIPTIONS = 50;
/** How often a stream verifies the caller's access again (its token, the key's capabilities, the workspace policy). */
export const DEFAULT_LISTEN_RECHECK_MS = 5_000;
/** Events read per run and poll; a run that wrote more is read on at the next poll. */
const EVENTS_PER_POLL = 100;

/**
 * What a notification says may have changed, by id only: a run (its status or events), or what the principals of a
 * workspace may see (its policy, a key or account, a flow's live version). Never data: the woken stream reads.
 */
export type ListenChange = { kind: 'run'; runId: string } | { kind: 'access'; workspaceId: string };

/** An open stream as the hub knows it: its workspace, and what it does with a change (it ignores foreign runs). */
interface ListenSubscriber {
  workspaceId: string;
  /** `sweep`: read everything watched now (the process stopped hearing notifications). */
  wake(change: ListenChange | 'sweep'): void;
}

/** The process's listen streams: their bounds, how they learn of changes, and a signal that ends every open one. */
export interface ListenHub {
  readonly gate: WaitGate;
  readonly maxMs: number;
  /** Read interval of a stream while nothing wakes it (no LISTEN in this process). */
  readonly pollMs: number;
  /** Read interval of a stream while notifications wake it: only a missed one waits this long. */
  readonly safetyPollMs: number;
  readonly recheckMs: number;
  readonly closing: AbortSignal;
  /** Whether notifications reach the hub now (the gateway's LISTEN is up). */
  readonly live: boolean;
  /** The gateway's LISTEN came up (true) or went away (false: streams go back to reading every `pollMs`). */
  setLive(live: boolean): void;
  /** A notification heard: wakes the open streams it may concern, at once. */
  wake(change: ListenChange): void;
  /** Registers an open stream; the function returned removes it. */
  subscribe(subscriber: ListenSubscriber): () => void;
  /** Open streams registered (tests check none is left behind). */
  subscribers(): number;
  /** Ends every open stream with its graceful result; later listens are refused. */
  close(): void;
}

export function createListenHub(
  options: {
    maxPerKey?: number;
    maxTotal?: number;
    maxMs?: number;
    pollMs?: number;
    safetyPollMs?: number;
    recheckMs?: number;
  } = {},
): ListenHub {
  const closing = new AbortController();
  // At most the process cap of streams: a wake walks them all, each answering from a map lookup.
  const subscribers = new Set<ListenSubscriber>();
  let live = false;
  return {
    gate: createWaitGate({
      maxPerKey: options.maxPerKey ?? DEFAULT_MAX_LISTENS_PER_KEY,
      maxTotal: options.maxTotal ?? DEFAULT_MAX_LISTENS,
    }),
    maxMs: options.maxMs ?? DEFAULT_LISTEN_MAX_MS,
    pollMs: options.pollMs ?? DEFAULT_LISTEN_POLL_MS,
    safetyPollMs: options.safetyPollMs ?? DEFAULT_LISTEN_SAFETY_POLL_MS,
    recheckMs: options.recheckMs ?? DEFAULT_LISTEN_RECHECK_MS,
    closing: closing.signal,
    get live() {
      return live;
    },
    setLive(now) {
      live = now;
      // Streams asleep for a safety interval read now and go on at the short one.
      if (!now) for (const s of subscribers) s.wake('sweep');
    },
    wake(change) {
      for (const s of subscribers) {
        if (change.kind === 'access' && s.workspaceId !== change.workspaceId) continue;
        s.wake(change);
      }
    },
    subscribe(subscriber) {
      subscribers.add(subscriber);
      return () => {
        subscribers.delete(subscriber);
      };
    },
    subscribers: () => subscribers.size,
    close: () => closing.abort(),
  };
}

/**
 * Whether a stream on this endpoint can tell a changed tool list (and server/discover advertises `tools.listChanged`):
 * the caller's access must be readable again, and a per-flow endpoint's surface buildable again.
 */
export function watchesToolList(surface: McpSurface, request: McpRequestContext): boolean {
  return request.recheck !== undefined && (surface.flowSlug === null || surface.reload !== undefined);
}

/** For callers that bring none (tests, embedders); the gateway passes its configured one. */
/** Made on first use, not at import: Workers refuse an AbortController built in global scope. */
let defaultHub: ListenHub | undefined;
function sharedHub(): ListenHub {
  defaultHub ??= createListenHub();
  return defaultHub;
}

const IdList = z.array(z.string().min(1).max(LIMITS.resourceUriMaxChars)).max(MAX_SUBSCRIPTIONS);

/** The filter (core schema `SubscriptionFilter` plus the extension's `taskIds`); other keys are not honoured. */
const ListenParams = z.object({
  notifications: z.looseObject({
    toolsListChanged: z.boolean().optional(),
    promptsListChanged: z.boolean().optional(),
    resourcesListChanged: z.boolean().optional(),
    resourceSubscriptions: IdList.optional(),
    taskIds: IdList.optional(),
  }),
});

const RUN_RESOURCE = /^flowgate:\/\/runs\/([A-Za-z0-9_-]+)(\/result|\/events)?$/;

type RunPart = 'run' | 'result' | 'events';

interface Watch {
  runId: string;
  status: RunStatus;
  lastEventId: number | null;
  parts: Set<RunPart>;
  /** Task ids naming this run, with the status last pushed for each. */
  tasks: Map<string, TaskStatus>;
}

function runEnded(status: RunStatus): boolean {
  return isTerminal(taskStatusOf(status));
}

/** The id of the last event a run has now (read in bounded pages), so only later events count as changes. */
async function lastEventId(scope: Scope, runId: string): Promise<number | null> {
  let after: number | null = null;
  for (let page = 0; page < 20; page++) {
    const events = await scope.workspace.runs.events(runId, { limit: 500, afterId: after, stepId: null });
    const last = events?.at(-1);
    if (!last) break;
    after = last.id;
    if ((events?.length ?? 0) < 500) break;
  }
  return after;
}

function notification(method: string, params: Record<string, unknown>, id: JsonRpcId): string {
  const meta = typeof params._meta === 'object' && params._meta !== null ? params._meta : {};
  return JSON.stringify({
    jsonrpc: '2.0',
    method,
    params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_META]: id } },
  });
}

function tooMany(error: TooManyWaits): JsonRpcFailure {
  const message =
    error.scope === 'key'
      ? `This key already has ${error.limit} subscriptions/listen streams open; close one first, or poll tasks/get and resources/read`
      : `The gateway already holds ${error.limit} subscriptions/listen streams; poll tasks/get and resources/read instead`;
  return new JsonRpcFailure(JSONRPC_INVALID_REQUEST, message, {
    code: TOO_MANY_LISTENS,
    bound: error.scope,
    limit: error.limit,
  });
}

/**
 * Serves one `subscriptions/listen`: validates, takes a slot, opens the stream with the acknowledgement, then pushes
 * changes until an end; answers the final (empty) result, which the transport writes as the stream's last event.
 */
export async function listen(
  params: Record<string, unknown>,
  scope: Scope,
): Promise<Record<string, unknown>> {
  const request: McpRequestContext = scope.request;
  const requestId = scope.requestId;
  if (requestId === undefined || requestId === null) throw new Error('unreachable: a listen is a request');
  const parsed = ListenParams.safeParse(params);
  if (!parsed.success)
    throw invalidParams(
      `params.notifications must be a subscription filter (resourceSubscriptions and taskIds: at most ${MAX_SUBSCRIPTIONS} strings each)`,
    );
  const filter = parsed.data.notifications;
  const wanted = (filter.resourceSubscriptions?.length ?? 0) + (filter.taskIds?.length ?? 0);
  if (wanted > MAX_SUBSCRIPTIONS)
    throw invalidParams(`At most ${MAX_SUBSCRIPTIONS} resource URIs and task ids together per stream`);
  if (!request.openStream)
    throw new JsonRpcFailure(
      JSONRPC_INVALID_REQUEST,
      'subscriptions/listen is answered as an SSE stream: send it alone (not in a batch) with Accept: text/event-stream',
    );
  const hub = request.listens ?? sharedHub();
  if (hub.closing.aborted)
    throw new JsonRpcFailure(JSONRPC_INVALID_REQUEST, 'The gateway is shutting down: listen again shortly');
  let release: () => void;
  try {
    release = hub.gate.acquire(waitKey(request.principal));
  } catch (error) {
    if (error instanceof TooManyWaits) throw tooMany(error);
    throw error;
  }
  try {
    return await serveStream(filter, scope, requestId, hub);
  } finally {
    release();
  }
}

async function serveStream(
  filter: z.infer<typeof ListenParams>['notifications'],
  scope: Scope,
  requestId: JsonRpcId,
  hub: ListenHub,
): Promise<Record<string, unknown>> {
  const watches = new Map<string, Watch>();
  // What notifications said since the last read; the stream reads only that (and everything at a sweep).
  const dirty = new Set<string>();
  let sweepDue = false;
  let accessChanged = false;
  let settingUp = true;
  let ring: () => void = () => {};
  const unsubscribe = hub.subscribe({
    workspaceId: scope.request.workspaceId,
    wake(change) {
      if (change === 'sweep') sweepDue = true;
      else if (change.kind === 'access') accessChanged = true;
      else if (watches.has(change.runId)) dirty.add(change.runId);
      // Watches are still being read: a change between a run's read and its registration is read at the first round
      // (which reads only this stream's own runs, whatever run was named).
      else if (settingUp) sweepDue = true;
      // A run this stream does not watch (another workspace's, or not subscribed) wakes nothing and reads nothing.
      else return;
      ring();
    },
  });
  try {
    return await serveWatched(filter, scope, requestId, hub, {
      watches,
      dirty,
      ready: () => {
        settingUp = false;
      },
      takeSweep: () => {
        const due = sweepDue;
        sweepDue = false;
        return due;
      },
      takeAccess: () => {
        const due = accessChanged;
        accessChanged = false;
        return due;
      },
      pending: () => sweepDue || accessChanged || dirty.size > 0,
      bell: () =>
        new Promise<void>((resolve) => {
          ring = resolve;
        }),
    });
  } finally {
    unsubscribe();
  }
}

/** The stream's side of the hub: what woke it, read and cleared by its loop. */
interface Wakes {
  watches: Map<string, Watch>;
  dirty: Set<string>;
  ready(): void;
  takeSweep(): boolean;
  takeAccess(): boolean;
  pending(): boolean;
  /** Resolves at the next wake. */
  bell(): Promise<void>;
}

async function serveWatched(
  filter: z.infer<typeof ListenParams>['notifications'],
  scope: Scope,
  requestId: JsonRpcId,
  hub: ListenHub,
  wakes: Wakes,
): Promise<Record<string, unknown>> {
  const { watches, dirty } = wakes;
  const watch = async (runId: string): Promise<Watch | null> => {
    const known = watches.get(runId);
    if (known) return known;
    const run = await scope.workspace.runs.get(runId);
    if (!run) return null;
    const created: Watch = {
      runId,
      status: run.status,
      lastEventId: await lastEventId(scope, runId),
      parts: new Set(),
      tasks: new Map(),
    };
    watches.set(runId, created);
    return created;
  };

  // Resources: only run resources, only on a surface that serves resources, only what resources/read would give.
  const resources: string[] = [];
  if (scope.surface.servesResources) {
    for (const uri of new Set(filter.resourceSubscriptions ?? [])) {
      const match = RUN_RESOURCE.exec(uri);
      if (!match?.[1] || match[1].length > LIMITS.runIdMaxChars) continue;
      if (!templateResourceAllowed(uri, scope.request)) continue;
      const w = await watch(match[1]);
      if (!w) continue;
      w.parts.add(match[2] === '/result' ? 'result' : match[2] === '/events' ? 'events' : 'run');
      resources.push(uri);
    }
  }
  // Tasks: the dispatcher already refused `taskIds` from a client without the extension (HTTP 400, -32021).
  const taskIds: string[] = [];
  const finalTasks: Array<Record<string, unknown>> = [];
  if (scope.tasks?.generation === 'v2' && scope.tasks.declared) {
    for (const taskId of new Set(filter.taskIds ?? [])) {
      const runId = openTaskId(scope.taskIds, taskId);
      if (!runId) continue;
      const task = await readTaskV2(taskId, scope);
      if (!task) continue;
      taskIds.push(taskId);
      const status = task.status as TaskStatus;
      // A task already final is pushed once right after the acknowledgement: it may have ended before the listen.
      if (isTerminal(status)) {
        finalTasks.push(task);
        continue;
      }
      const w = await watch(runId);
      w?.tasks.set(taskId, status);
    }
  }

  // The tool list is watched where the caller's access can be read again, and on a per-flow endpoint only where its
  // surface can be built again (a release of the flow changes its tools). What is compared is exactly what tools/list
  // answers (without its params' narrowing), so a push means the list a client would fetch now is different.
  const recheck = scope.request.recheck;
  const toolsListChanged = filter.toolsListChanged === true && watchesToolList(scope.surface, scope.request);
  let surface = scope.surface;
  const iconBase = toolIconBase(scope.protocolVersion, scope.publicBaseUrl);
  let listed = toolsListChanged ? listedTools(surface, scope.request, iconBase).json : '';
  const honoured: Record<string, unknown> = {};
  if (toolsListChanged) honoured.toolsListChanged = true;
  if (resources.length > 0) honoured.resourceSubscriptions = resources;
  if (taskIds.length > 0) honoured.taskIds = taskIds;
  const stream = scope.request.openStream?.();
  if (!stream) throw new Error('unreachable: listen checked openStream');
  const signal = scope.request.signal?.();
  const signals = [hub.closing, ...(signal ? [signal] : [])];
  const deadline = Date.now() + hub.maxMs;
  let open = stream.send(
    notification('notifications/subscriptions/acknowledged', { notifications: honoured }, requestId),
  );
  for (const task of finalTasks) {
    if (open) open = stream.send(notification('notifications/tasks', task, requestId));
  }

  const updated = (uri: string) =>
    stream.send(notification('notifications/resources/updated', { uri }, requestId));
  /** One read of a watched run: what changed is pushed; 'drop' once nothing more can change, 'gone' if the client left. */
  const poll = async (w: Watch): Promise<'keep' | 'drop' | 'gone'> => {
    // Nothing asked of this run any more (its tasks ended or vanished).
    if (w.parts.size === 0 && w.tasks.size === 0) return 'drop';
    const run: RunRecord | null = await scope.workspace.runs.get(w.runId);
    // Gone (expired or deleted): nothing more will change.
    if (!run) return 'drop';
    const events =
      w.parts.size > 0
        ? ((await scope.workspace.runs.events(w.runId, {
            limit: EVENTS_PER_POLL,
            afterId: w.lastEventId,
            stepId: null,
          })) ?? [])
        : [];
    const statusChanged = run.status !== w.status;
    w.status = run.status;
    const last = events.at(-1);
    if (last) w.lastEventId = last.id;
    const uris: string[] = [];
    if (w.parts.has('run') && (statusChanged || last)) uris.push(runUri(w.runId));
    if (w.parts.has('events') && last) uris.push(runEventsUri(w.runId));
    if (w.parts.has('result') && statusChanged && run.status === 'completed')
      uris.push(runResultUri(w.runId));
    for (const uri of uris) if (!updated(uri)) return 'gone';
    for (const [taskId, pushed] of w.tasks) {
      if (taskStatusV2(run.status) === pushed) continue;
      const task = await readTaskV2(taskId, scope);
      if (!task) {
        w.tasks.delete(taskId);
        continue;
      }
      const status = task.status as TaskStatus;
      if (!stream.send(notification('notifications/tasks', task, requestId))) return 'gone';
      // A final status is the task's last push (the extension sends no progress or message on this stream).
      if (isTerminal(status)) w.tasks.delete(taskId);
      else w.tasks.set(taskId, status);
    }
    return runEnded(run.status) && events.length < EVENTS_PER_POLL ? 'drop' : 'keep';
  };

  /** The caller's access read again: 'gone' when it may no longer enter the workspace (revoked, disabled). */
  const reverify = async (): Promise<'keep' | 'gone'> => {
    if (!recheck) return 'keep';
    const now = await recheck();
    if (!now) return 'gone';
    if (toolsListChanged) {
      if (surface.reload) {
        const again = await surface.reload();
        // The flow was deleted or has nothing released any more: this endpoint serves nothing now.
        if (!again) return 'gone';
        surface = again;
      }
      const json = listedTools(surface, { ...now, narrowing: scope.request.narrowing }, iconBase).json;
      if (json !== listed) {
        listed = json;
        if (!stream.send(notification('notifications/tools/list_changed', {}, requestId))) return 'gone';
      }
    }
    // A subscribed resource the caller may no longer read ends the stream; a new listen acknowledges what it may now.
    const current = { ...now, narrowing: scope.request.narrowing };
    for (const uri of resources) if (!templateResourceAllowed(uri, current)) return 'gone';
    return 'keep';
  };

  wakes.ready();
  const interval = () => (hub.live ? hub.safetyPollMs : hub.pollMs);
  let nextRecheck = Date.now() + hub.recheckMs;
  let nextSweep = Date.now() + interval();
  while (
    open &&
    (watches.size > 0 || toolsListChanged) &&
    Date.now() < deadline &&
    !signals.some((s) => s.aborted)
  ) {
    if (!wakes.pending()) {
      const bell = wakes.bell();
      const next = Math.min(nextSweep, recheck ? nextRecheck : deadline, deadline);
      await pause(Math.max(0, next - Date.now()), { signals, until: bell });
    }
    if (signals.some((s) => s.aborted)) break;
    // A change of what the workspace's principals may see is checked at once; otherwise on the recheck schedule.
    const accessWoke = wakes.takeAccess();
    if (recheck && (accessWoke || Date.now() >= nextRecheck)) {
      nextRecheck = Date.now() + hub.recheckMs;
      // A failed read (the database, an identity provider) ends nothing: the next recheck tries again.
      const verdict = await reverify().catch((error: unknown) => {
        scope.request.onError?.(error);
        return 'keep' as const;
      });
      if (verdict === 'gone') break;
    }
    const sweep = wakes.takeSweep() || Date.now() >= nextSweep;
    if (sweep) nextSweep = Date.now() + interval();
    const due = sweep ? [...watches.values()] : [...dirty].flatMap((runId) => watches.get(runId) ?? []);
    dirty.clear();
    for (const w of due) {
      const outcome = await poll(w);
      if (outcome === 'gone') {
        open = false;
        break;
      }
      if (outcome === 'drop') watches.delete(w.runId);
    }
  }
  return { _meta: { [SUBSCRIPTION_ID_META]: requestId } };
}
