import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How the end-to-end tests start `flowgate mcp stdio` and independent stdio clients as real processes. */

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI_MAIN = join(ROOT, 'apps', 'cli', 'src', 'main.ts');
export const MCP_REMOTE_PROXY = join(ROOT, 'test', 'node_modules', 'mcp-remote', 'dist', 'proxy.js');

/**
 * mcp-remote pointed at `mcpUrl`, as a stdio command. The bearer is read by mcp-remote from `AUTH_HEADER`
 * (`Bearer …`), which it expands itself, so the key stays out of the process arguments; its state goes to
 * `MCP_REMOTE_CONFIG_DIR`.
 */
export function mcpRemoteCommand(
  mcpUrl: string,
  apiKey: string,
  configDir: string,
): { command: string; args: string[]; env: Record<string, string> } {
  return {
    command: process.execPath,
    args: [
      MCP_REMOTE_PROXY,
      mcpUrl,
      '--header',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal placeholder for mcp-remote
      'Authorization:${AUTH_HEADER}',
      '--transport',
      'http-only',
      '--allow-http',
    ],
    env: { AUTH_HEADER: `Bearer ${apiKey}`, MCP_REMOTE_CONFIG_DIR: configDir },
  };
}

/** `node --import tsx apps/cli/src/main.ts --api-url URL mcp stdio …`: one process, stdin/stdout straight through. */
export function bridgeCommand(apiUrl: string, args: string[]): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', CLI_MAIN, '--api-url', apiUrl, 'mcp', 'stdio', ...args],
  };
}

/** The checkout launcher (`apps/cli/bin/flowgate.mjs`) that the README tells stdio entries to start. */
export function launcherCommand(apiUrl: string, args: string[]): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: [join(ROOT, 'apps', 'cli', 'bin', 'flowgate.mjs'), '--api-url', apiUrl, 'mcp', 'stdio', ...args],
  };
}

/** A key-shaped value no server has issued, for processes that must refuse before any request. */
export function unusedKey(): string {
  return `fgk_${'u'.repeat(16)}_${'n'.repeat(43)}`;
}

/** Asserts-friendly scan: which of the secrets (and their secret halves) occur in the texts. */
export function leakedSecrets(secrets: string[], ...texts: string[]): string[] {
  const needles = secrets.flatMap((s) => {
    const half = /^fgk_[A-Za-z0-9]{16}_([A-Za-z0-9]{43})$/.exec(s)?.[1];
    return half ? [s, half] : [s];
  });
  return needles.filter((n) => texts.some((t) => t.includes(n)));
}

export interface ScriptedUpstream {
  url: string;
  bodies: string[];
  close(): Promise<void>;
}

/** A tiny node:http server that answers each request through `reply`, which may leave it hanging. */
export async function startScriptedUpstream(
  reply: (body: string, res: ServerResponse, req: IncomingMessage) => void,
): Promise<ScriptedUpstream> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      reply(body, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
