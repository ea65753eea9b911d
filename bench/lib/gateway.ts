import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverBuild, serverScript } from './build.js';
import { type ChildHandle, spawnTsx } from './proc.js';

export const MCP_PROTOCOL_VERSION = '2025-11-25';

/**
 * Rate limits raised far above what a loopback load reaches: the buckets stay in the measured path, but a
 * benchmark's one key and one address are not refused after the default 1,200 requests a minute.
 */
export const BENCH_RATE_LIMITS: Record<string, string> = {
  FLOWGATE_RATE_LIMIT_KEY_PER_MIN: '1000000',
  FLOWGATE_RATE_LIMIT_IP_PER_MIN: '1000000',
};

export interface GatewayChild {
  child: ChildHandle;
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  adminToken: string;
  dataDir: string;
  /** Admin API call with the operator token; throws unless the status is `expect`. */
  admin(method: string, path: string, body: unknown, expect: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export interface GatewayChildOptions {
  label?: string;
  env?: Record<string, string>;
  nodeArgs?: string[];
  /**
   * Runs `flowgate serve` (the CLI, as an operator would) instead of the benchmark's gateway server: no IPC control
   * commands, readiness from its "listening" log line.
   */
  cli?: boolean;
  /** Another build's benchmark gateway (its `bench-gateway.mjs`) instead of this run's; not with `cli`. */
  script?: string;
}

/** `flowgate serve`'s log line once it listens: `{"level":30,…,"url":"http://…","msg":"flowgate gateway listening"}`. */
export function listeningLine(line: string): Record<string, unknown> | undefined {
  if (!line.includes('"flowgate gateway listening"')) return undefined;
  const parsed = JSON.parse(line) as { url?: unknown };
  return typeof parsed.url === 'string' ? { url: parsed.url } : undefined;
}

/** Info-level JSON log lines (level 30 and below): the request log of a `cli` child. */
function infoLogLine(line: string): boolean {
  const m = /^\{"level":(\d+),/.exec(line);
  return m !== null && Number(m[1]) <= 30;
}

/** The real gateway in a child process over the embedded database in a fresh temp dir, loopback only. */
export async function startGatewayChild(options: GatewayChildOptions = {}): Promise<GatewayChild> {
  const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-bench-'));
  const adminToken = `bench-${randomBytes(24).toString('hex')}`;
  let child: ChildHandle;
  try {
    const build = serverBuild();
    const cli = options.cli
      ? {
          script: build.kind === 'dist' ? build.cli : 'apps/cli/src/main.ts',
          args: ['serve'],
          readyFrom: listeningLine,
          ignore: infoLogLine,
        }
      : { script: options.script ?? serverScript('gateway') };
    child = await spawnTsx({
      label: options.label ?? 'gateway',
      ...cli,
      nodeArgs: options.nodeArgs ?? [],
      env: {
        FLOWGATE_HOST: '127.0.0.1',
        FLOWGATE_PORT: '0',
        FLOWGATE_DATA_DIR: dataDir,
        FLOWGATE_ADMIN_TOKEN: adminToken,
        FLOWGATE_LOG_LEVEL: 'warn',
        FLOWGATE_WORKER: 'false',
        ...BENCH_RATE_LIMITS,
        // The CLI announces its URL in an info-level log line.
        ...(options.cli ? { FLOWGATE_LOG_LEVEL: 'info' } : {}),
        ...options.env,
      },
      readyTimeoutMs: 120_000,
    });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const url = String(child.ready.url);
  return {
    child,
    url,
    adminToken,
    dataDir,
    async admin(method, path, body, expect) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      if (res.status !== expect)
        throw new Error(`${method} ${path}: expected ${expect}, got ${res.status}: ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    },
    async stop() {
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates a workspace and a service account with `capabilities`, and returns a fresh API key for it. */
export async function seedWorkspace(
  gw: GatewayChild,
  workspaceId: string,
  capabilities: string[],
): Promise<string> {
  await gw.admin('POST', '/api/admin/workspaces', { id: workspaceId, name: workspaceId }, 201);
  const sa = await gw.admin(
    'POST',
    `/api/workspaces/${workspaceId}/service-accounts`,
    { name: 'bench-agent', capabilities },
    201,
  );
  const created = await gw.admin(
    'POST',
    `/api/workspaces/${workspaceId}/service-accounts/${String(sa.serviceAccountId)}/keys`,
    {},
    201,
  );
  return (created.key as { apiKey: string }).apiKey;
}

export function mcpHeaders(token: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MCP_PROTOCOL_VERSION,
  };
}

export function mcpUrl(gw: GatewayChild, workspaceId: string): string {
  return `${gw.url}/api/workspaces/${workspaceId}/mcp`;
}

/** One JSON-RPC call over HTTP; returns status, raw text and parsed body so callers can check both. */
export async function mcpCall(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string; json: unknown; contentType: string | null }> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, contentType: res.headers.get('content-type') };
}
