/**
 * What the conformance suite talks to: the real gateway (embedded database in a temp dir, loopback) with a
 * workspace and a service-account key seeded through the admin API, behind the auth-adding proxy. The proxy's
 * URL is the gateway's public URL, so the Origin a browser would send to it is the deployment's own origin.
 * Prints `READY {"url", "gatewayUrl", "workspaceId", "apiKey"}`; SIGTERM/SIGINT shut everything down.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type RunningGateway, startGateway } from '@flowgate/gateway';
import { z } from 'zod';
import { type AuthProxy, startAuthProxy } from './proxy.js';

const WORKSPACE = 'ws-conformance';
const CAPABILITIES = ['workspace.full'];

const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-conformance-'));
const adminToken = randomBytes(24).toString('hex');
let gateway: RunningGateway | undefined;
let proxy: AuthProxy | undefined;

async function shutdown(code: number): Promise<never> {
  await proxy?.close().catch(() => undefined);
  await gateway?.close().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(code);
}
process.once('SIGTERM', () => void shutdown(0));
process.once('SIGINT', () => void shutdown(0));

async function admin(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${gateway?.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${path}: expected 201, got ${res.status}: ${text}`);
  return z.record(z.string(), z.unknown()).parse(JSON.parse(text));
}

try {
  // The proxy listens first so its URL can be the gateway's public URL; it is pointed at the gateway below.
  proxy = await startAuthProxy({});
  gateway = await startGateway({
    config: loadConfig({
      FLOWGATE_HOST: '127.0.0.1',
      FLOWGATE_PORT: '0',
      FLOWGATE_DATA_DIR: dataDir,
      FLOWGATE_ADMIN_TOKEN: adminToken,
      FLOWGATE_PUBLIC_URL: new URL(proxy.url).origin,
      FLOWGATE_LOG_LEVEL: process.env.FLOWGATE_LOG_LEVEL ?? 'warn',
      FLOWGATE_WORKER: 'false',
    }),
  });
  await admin('/api/admin/workspaces', { id: WORKSPACE, name: 'Conformance' });
  const sa = await admin(`/api/workspaces/${WORKSPACE}/service-accounts`, {
    name: 'conformance',
    capabilities: CAPABILITIES,
  });
  const created = await admin(
    `/api/workspaces/${WORKSPACE}/service-accounts/${String(sa.serviceAccountId)}/keys`,
    {},
  );
  const apiKey = z.object({ apiKey: z.string().startsWith('fgk_') }).parse(created.key).apiKey;
  const mcpUrl = `${gateway.url}/api/workspaces/${WORKSPACE}/mcp`;
  proxy.retarget(mcpUrl, apiKey);
  process.stdout.write(
    `READY ${JSON.stringify({ url: proxy.url, gatewayUrl: mcpUrl, workspaceId: WORKSPACE, apiKey })}\n`,
  );
} catch (err) {
  process.stderr.write(
    `conformance stack failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  await shutdown(1);
}
