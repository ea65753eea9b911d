import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the fake upstream saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type UpstreamHandler = (req: SeenRequest, res: ServerResponse) => void;

export interface FakeUpstream {
  url: string;
  requests: SeenRequest[];
  handle(handler: UpstreamHandler): void;
  close(): Promise<void>;
}

/** A real node:http server on loopback whose answers (or silence) a test scripts per request. */
export async function startUpstream(handler: UpstreamHandler = jsonRpcEcho): Promise<FakeUpstream> {
  const requests: SeenRequest[] = [];
  let current = handler;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      current(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle(h) {
      current = h;
    },
    close: () =>
      new Promise((resolve) => {
        // Hanging requests keep their sockets open; close them so the server can stop.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Answers requests with `{echo: method}`, initialize with a protocol version, notifications and client responses with
 * 202.
 */
export function jsonRpcEcho(req: SeenRequest, res: ServerResponse): void {
  const msg = JSON.parse(req.body) as {
    id?: unknown;
    method?: string;
    params?: { protocolVersion?: string };
  };
  if (msg.id === undefined || msg.method === undefined) {
    res.writeHead(202);
    res.end();
    return;
  }
  const result =
    msg.method === 'initialize'
      ? {
          protocolVersion: msg.params?.protocolVersion ?? '2025-11-25',
          capabilities: {},
          serverInfo: { name: 'fake', version: '1' },
        }
      : { echo: msg.method };
  sendJson(res, 200, { jsonrpc: '2.0', id: msg.id, result });
}
