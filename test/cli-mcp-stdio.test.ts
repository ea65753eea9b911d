import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CATALOG, LATEST_PROTOCOL_VERSION } from '@flowgate/workspace-mcp';
import { Client as V2Client } from '@modelcontextprotocol/client';
import {
  StdioClientTransport as V2StdioTransport,
  getDefaultEnvironment as v2DefaultEnv,
} from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import {
  bridgeCommand,
  launcherCommand,
  leakedSecrets,
  mcpRemoteCommand,
  ROOT,
} from './support/stdio-bridge.js';

/**
 * Real stdio clients against the real gateway: the MCP SDKs' StdioClientTransport spawning
 * `flowgate mcp stdio`, and mcp-remote — an independent stdio↔HTTP client from npm — pointed at the gateway.
 */

const WS = 'ws-stdio';
const OTHER_WS = 'ws-stdio-other';
let gw: TestGateway;
let full: ServiceAccountKey;
let other: ServiceAccountKey;
let configDir: string;

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS, 'Stdio Inc');
  await gw.createWorkspace(OTHER_WS, 'Other Inc');
  full = await gw.mintKey(WS, ['workspace.full'], 'stdio-agent');
  other = await gw.mintKey(OTHER_WS, ['workspace.full'], 'other-agent');
  configDir = mkdtempSync(join(tmpdir(), 'fg-mcp-remote-'));
});

afterAll(async () => {
  await gw?.close();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

const secrets = () => [full.apiKey, other.apiKey];

/** Every message the client received, for scanning: the SDK consumes stdout, so tap the transport. */
function tap(transport: { onmessage?: ((message: unknown, extra?: unknown) => void) | undefined }): string[] {
  const seen: string[] = [];
  const original = transport.onmessage;
  transport.onmessage = (message: unknown, extra?: unknown) => {
    seen.push(JSON.stringify(message));
    original?.(message, extra);
  };
  return seen;
}

/**
 * Tools kept by toolsets `read,feedback` under read-only, minus exclusions, for a full key (docs/mcp-surface.md, "Who
 * sees which tool").
 */
function expectedReadFeedback(exclude: string[]): string[] {
  return CATALOG.filter(
    (t) =>
      t.toolsets.some((ts) => ts === 'read' || ts === 'feedback') &&
      (!t.mutating || t.readOnlyExempt) &&
      !exclude.includes(t.name),
  ).map((t) => t.name);
}

describe('SDK v2 StdioClientTransport → flowgate mcp stdio → gateway', () => {
  it('initialize, tools/list and tools/call work through the bridge, and nothing secret is printed', async () => {
    const { command, args } = bridgeCommand(gw.url, ['--workspace-id', WS, '--token-env-var', 'FG_KEY']);
    const transport = new V2StdioTransport({
      command,
      args,
      cwd: ROOT,
      env: { ...v2DefaultEnv(), FG_KEY: full.apiKey },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const client = new V2Client({ name: 'stdio-e2e', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    const seen = tap(transport as unknown as Parameters<typeof tap>[0]);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(LATEST_PROTOCOL_VERSION);
      expect(client.getServerVersion()?.name).toBeTruthy();

      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(CATALOG.map((t) => t.name));

      const ctx = await client.callTool({ name: 'get_workspace_context', arguments: {} });
      expect(ctx.isError).toBeFalsy();
      const sc = ctx.structuredContent as { workspace: { id: string }; principal: { kind: string } };
      expect(sc.workspace.id).toBe(WS);
      expect(sc.principal.kind).toBe('service_account');

      const feedback = await client.callTool({
        name: 'send_feedback',
        arguments: {
          summary: 'stdio bridge works',
          details: 'sent through flowgate mcp stdio',
          area: 'setup',
        },
      });
      expect(feedback.isError).toBeFalsy();

      // an unknown tool is a protocol error, carried back with the request's id
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow();
    } finally {
      await client.close();
    }
    expect(stderr).toContain(`flowgate mcp stdio: bridging to ${gw.mcpUrl(WS)}`);
    expect(seen.length).toBeGreaterThanOrEqual(4);
    expect(leakedSecrets(secrets(), stderr, ...seen)).toEqual([]);
    // the gateway recorded the calls under the client's own name, carried in the bridge's User-Agent
    const audit = await gw.waitForAudit(WS, (items) => items.some((i) => i.action === 'send_feedback'));
    expect(audit.find((i) => i.action === 'send_feedback')?.clientName).toBe(
      'stdio-e2e/1.0.0 flowgate-mcp-stdio',
    );
  });
});

describe('SDK v1 StdioClientTransport → flowgate mcp stdio with narrowing flags', () => {
  it('the flags narrow the list and the same rules block a call, exactly as the headers would', async () => {
    // started through the checkout launcher, as the README's stdio entries do
    const { command, args } = launcherCommand(gw.url, [
      '--workspace-id',
      WS,
      '--token-env-var',
      'FG_KEY',
      '--read-only',
      '--toolsets',
      'read,feedback',
      '--exclude-tools',
      'check_connections',
    ]);
    const transport = new V1StdioTransport({
      command,
      args,
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FG_KEY: full.apiKey },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const client = new V1Client({ name: 'stdio-e2e-v1', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(expectedReadFeedback(['check_connections']));
      expect(tools).toContain('send_feedback');

      const blocked = await client.callTool({ name: 'check_connections', arguments: {} });
      expect(blocked.isError).toBe(true);
      const details = (blocked.structuredContent as { details: { blockers: Array<{ reason: string }> } })
        .details;
      expect(details.blockers.map((b) => b.reason)).toContain('exclude_tools_policy');
    } finally {
      await client.close();
    }
    expect(leakedSecrets(secrets(), stderr)).toEqual([]);
  });

  it('a key of another workspace: each request fails with a JSON-RPC error that says why', async () => {
    const { command, args } = bridgeCommand(gw.url, ['--workspace-id', WS, '--token-env-var', 'FG_KEY']);
    const transport = new V1StdioTransport({
      command,
      args,
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FG_KEY: other.apiKey },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const client = new V1Client({ name: 'stdio-e2e-v1', version: '1.0.0' }, { capabilities: {} });
    const error = await client.connect(transport).then(
      () => null,
      (e: unknown) => e as Error,
    );
    await client.close();
    expect(error?.message).toContain('upstream answered 403: forbidden');
    expect(error?.message).toContain(`the key does not grant access to workspace ${WS}`);
    expect(leakedSecrets(secrets(), stderr, error?.message ?? '')).toEqual([]);
  });
});

describe('mcp-remote (independent stdio↔HTTP client from npm) → gateway', () => {
  it('initialize, tools/list and tools/call with the bearer from an env-expanded header', async () => {
    const remote = mcpRemoteCommand(gw.mcpUrl(WS), full.apiKey, configDir);
    const transport = new V2StdioTransport({
      command: remote.command,
      args: remote.args,
      cwd: ROOT,
      env: { ...v2DefaultEnv(), ...remote.env },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const client = new V2Client({ name: 'mcp-remote-e2e', version: '1.0.0' }, { capabilities: {} });
    try {
      await client.connect(transport);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(CATALOG.map((t) => t.name));
      const ctx = await client.callTool({ name: 'get_workspace_context', arguments: {} });
      expect(ctx.isError).toBeFalsy();
      expect((ctx.structuredContent as { workspace: { id: string } }).workspace.id).toBe(WS);
    } catch (error) {
      throw new Error(`mcp-remote failed: ${(error as Error).message}\nstderr:\n${stderr.slice(-2000)}`);
    } finally {
      await client.close();
    }
    expect(leakedSecrets(secrets(), stderr)).toEqual([]);
  });
});
