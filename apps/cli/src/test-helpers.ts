import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CliIo } from './cli-io.js';
import { runCli } from './program.js';

/** One request as the fake admin API saw it. */
export interface CapturedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Reply {
  status: number;
  json?: unknown;
  text?: string;
}

export interface FakeApi {
  url: string;
  requests: CapturedRequest[];
  /** Sets how the next requests are answered. */
  reply(handler: (req: CapturedRequest) => Reply): void;
  close(): Promise<void>;
}

/** A real HTTP server on loopback that records requests and answers from a handler. */
export async function startFakeApi(): Promise<FakeApi> {
  const requests: CapturedRequest[] = [];
  let handler: (req: CapturedRequest) => Reply = () => ({ status: 200, json: {} });
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const captured: CapturedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(captured);
      const reply = handler(captured);
      if (reply.json !== undefined) {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.json));
      } else {
        res.writeHead(reply.status, { 'content-type': 'text/plain' });
        res.end(reply.text ?? '');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply(h) {
      handler = h;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with a controlled environment; nothing from the real environment leaks in. */
export async function runWith(
  argv: string[],
  options: { env?: Record<string, string | undefined>; stdin?: string; cwd?: string } = {},
): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: options.env ?? {},
    cwd: options.cwd ?? '/nonexistent-flowgate-test-cwd',
    readStdin: async () => options.stdin ?? '',
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}
