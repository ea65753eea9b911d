import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { loadConfig, type RunningGateway, startGateway } from '@flowgate/gateway';
import { AdminClient } from './admin-client.js';
import type { CliIo } from './cli-io.js';
import { runCli } from './program.js';

export interface TestGateway {
  url: string;
  /** The operator token (FLOWGATE_ADMIN_TOKEN) the gateway accepts. */
  token: string;
  db: DbHandle;
  running: RunningGateway;
  /** An admin client with the operator token, for setting up and reading back state. */
  client: AdminClient;
  close(): Promise<void>;
}

/**
 * The real gateway on loopback (port 0) over a fresh test database: PGlite, or a throwaway database on the
 * server named by DATABASE_URL.
 */
export async function startTestGateway(options: { adminToken?: string } = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fg-cli-gateway-'));
  const token = options.adminToken ?? `op_${randomBytes(24).toString('hex')}`;
  const db = await createTestDb();
  let running: RunningGateway;
  try {
    const config = loadConfig({
      FLOWGATE_PORT: '0',
      FLOWGATE_ADMIN_TOKEN: token,
      FLOWGATE_DATA_DIR: dataDir,
      FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      FLOWGATE_LOG_LEVEL: 'silent',
    });
    running = await startGateway({ config, db });
  } catch (error) {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: running.url,
    token,
    db,
    running,
    client: new AdminClient({ apiUrl: running.url, token }),
    async close() {
      await running.close();
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Loopback {
  url: string;
  close(): Promise<void>;
}

/**
 * A purpose-built HTTP server on loopback for answers the real gateway never gives (a proxy's HTML error page, a
 * body of the wrong shape), or, once closed, for a refused connection.
 */
export async function startLoopback(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Loopback> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A fetch that records each request (method and URL) before passing it on: tests assert when none was sent. */
export function recordingFetch(): { fetch: typeof fetch; requests: string[] } {
  const requests: string[] = [];
  return {
    requests,
    fetch: (input, init) => {
      requests.push(`${init?.method ?? 'GET'} ${String(input)}`);
      return fetch(input, init);
    },
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
  options: {
    env?: Record<string, string | undefined>;
    stdin?: string;
    cwd?: string;
    fetch?: typeof fetch;
  } = {},
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
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}
