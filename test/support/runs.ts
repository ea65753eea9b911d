import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isFinalRunStatus } from '@flowgate/core';
import { ADMIN_TOKEN, type TestGateway } from './gateway.js';

/**
 * Runs through the real gateway, as an operator or automation drives them: flows saved, released and bound over the
 * admin API, runs started with `POST …/flows/{slug}/runs` and read back with `GET …/runs/{id}` until they end.
 */

/** One run as `GET /api/workspaces/{ws}/runs/{id}` answers. */
export interface RunView {
  runId: string;
  flowSlug: string;
  status: string;
  input: unknown;
  error: { code: string; message: string } | null;
  resultMimeType: string | null;
  attempts: number;
  usage: Record<string, number>;
  startedAt: string | null;
  finishedAt: string | null;
  wakeAt: string | null;
  result: { mimeType: string; value: unknown } | null;
  steps: Array<{ stepId: string; type: string; status: string; attempts: number }>;
  events: Array<{ type: string; stepId: string | null; status: string | null; detail: unknown }>;
}

/** Saves `edn` as the draft of `slug`, releases it and binds its slots (slot → connection id). */
export async function installFlow(
  gw: Pick<TestGateway, 'url' | 'admin'>,
  ws: string,
  slug: string,
  edn: string,
  slots: Record<string, string> = {},
): Promise<void> {
  const saved = await fetch(`${gw.url}/api/workspaces/${ws}/flows/${slug}/draft`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/edn' },
    body: edn,
  });
  if (saved.status !== 200) throw new Error(`draft ${slug}: ${saved.status} ${await saved.text()}`);
  const released = await gw.admin('POST', `/api/workspaces/${ws}/flows/${slug}/release`, {});
  if (released.status !== 200) throw new Error(`release ${slug}: ${released.status} ${released.text}`);
  if (Object.keys(slots).length > 0) {
    const bound = await gw.admin('PUT', `/api/workspaces/${ws}/flows/${slug}/bindings`, { slots });
    if (bound.status !== 200) throw new Error(`bindings ${slug}: ${bound.status} ${bound.text}`);
  }
}

/** Starts a run through the admin API and returns its id (the answer must be 202 `queued`). */
export async function startRun(
  gw: TestGateway,
  ws: string,
  slug: string,
  input: Record<string, unknown>,
): Promise<string> {
  const res = await gw.admin('POST', `/api/workspaces/${ws}/flows/${slug}/runs`, { input });
  const body = res.json as { runId?: string; status?: string; created?: boolean } | undefined;
  if (res.status !== 202 || body?.status !== 'queued' || typeof body.runId !== 'string')
    throw new Error(`start ${slug}: ${res.status} ${res.text}`);
  return body.runId;
}

export async function getRun(gw: TestGateway, ws: string, runId: string): Promise<RunView> {
  const res = await gw.admin('GET', `/api/workspaces/${ws}/runs/${runId}`);
  if (res.status !== 200) throw new Error(`get ${runId}: ${res.status} ${res.text}`);
  return res.json as RunView;
}

/** Polls the run until `accept` holds for its status (by default: it ended), or fails naming the last state. */
export async function waitForRun(
  gw: TestGateway,
  ws: string,
  runId: string,
  accept: (status: string) => boolean = isFinalRunStatus,
  timeoutMs = 15_000,
): Promise<RunView> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const run = await getRun(gw, ws, runId);
    if (accept(run.status)) return run;
    if (Date.now() > until)
      throw new Error(`run ${runId} stayed ${run.status}: ${JSON.stringify(run.error ?? run.events.at(-1))}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** One request a loopback server received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | null;
  body: unknown;
}

export interface Loopback {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

export type LoopbackHandler = (
  req: ReceivedRequest,
) =>
  | { status: number; json: unknown; headers?: Record<string, string> }
  | Promise<{ status: number; json: unknown }>;

/**
 * An HTTP server on 127.0.0.1 standing in for third-party APIs. It records every request and answers JSON from
 * `handle`; responses carry no `Date` header so a stored response is the same on every run.
 */
export async function startLoopback(handle: LoopbackHandler): Promise<Loopback> {
  const received: ReceivedRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://loopback');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      const request: ReceivedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        authorization: req.headers.authorization ?? null,
        body,
      };
      received.push(request);
      void Promise.resolve(handle(request)).then(
        (answer) => {
          res.sendDate = false;
          res.writeHead(answer.status, {
            'content-type': 'application/json',
            ...('headers' in answer ? answer.headers : {}),
          });
          res.end(JSON.stringify(answer.json));
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** A flow whose run only sleeps `ms` (one durable `:sleep` step): a run that stays in progress as long as asked. */
export const SLEEP_NAP_FLOW = `{:slug :nap
 :invocations {:default {:inputs [{:name :ms :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "take_nap" :invocation :default}]}
 :flow (let [input (flow/input)
             _ (flow/step :sleep :nap {:duration-ms (:ms input)})]
         {:slept (:ms input)})}`;
