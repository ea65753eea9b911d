import { relative, sep } from 'node:path';
import { createConsoleSignInCode, loadConfig, type RunningGateway, startGateway } from '@flowgate/gateway';
import { AdminClient } from './admin-client.js';
import { type CliIo, DEFAULT_API_URL } from './cli-io.js';
import {
  type DemoAccount,
  type DemoCredentials,
  demoCredentialsPath,
  ensurePrivateDir,
  loadOrCreateDevSecrets,
  readDemoCredentials,
  resolveDataDir,
  writeDemoCredentials,
} from './data-dir.js';
import { type DemoApi, startDemoApi } from './demo-api.js';
import { describeListenError, lockDataDir, waitForShutdownSignal } from './lifecycle.js';
import { DEMO_WORKSPACE_ID, seedDemo } from './seed.js';

export interface DevOptions {
  port: number;
}

export interface DevSession {
  gateway: RunningGateway;
  dataDir: string;
  credentialsPath: string;
  credentials: DemoCredentials;
  /** Keys created by this run (empty when an earlier run's keys were reused). */
  newKeys: DemoAccount[];
  /** The loopback stand-in for the outside systems the example flows call. */
  demoApi: DemoApi;
  /** A one-time link that signs a browser in to the admin console as an admin of the demo workspace. */
  consoleSignInUrl: string;
  close(): Promise<void>;
}

/**
 * Starts the local gateway on the embedded database in the data directory and seeds the demo workspace
 * through its own admin API, the same path an operator would use.
 */
export async function startDev(options: DevOptions, io: CliIo): Promise<DevSession> {
  const dataDir = resolveDataDir(io.env, io.cwd);
  ensurePrivateDir(dataDir);
  const unlock = lockDataDir(dataDir);
  try {
    const adminToken = io.env.FLOWGATE_ADMIN_TOKEN || loadOrCreateDevSecrets(dataDir).secrets.adminToken;
    const config = loadConfig({
      ...io.env,
      // Always the embedded database: `dev` must never seed demo data into a shared Postgres.
      DATABASE_URL: undefined,
      FLOWGATE_HOST: '127.0.0.1',
      FLOWGATE_PORT: String(options.port),
      FLOWGATE_DATA_DIR: dataDir,
      FLOWGATE_ADMIN_TOKEN: adminToken,
      // Request logs would bury the banner; FLOWGATE_LOG_LEVEL=info brings them back.
      FLOWGATE_LOG_LEVEL: io.env.FLOWGATE_LOG_LEVEL || 'warn',
      // The demo's connections point at the stand-in API on loopback; a deployment keeps the default (refused).
      FLOWGATE_ALLOW_PRIVATE_NETWORK: io.env.FLOWGATE_ALLOW_PRIVATE_NETWORK || 'true',
    });
    const demoApi = await startDemoApi();
    let gateway: RunningGateway;
    try {
      gateway = await startGateway({ config });
    } catch (error) {
      await demoApi.close();
      throw describeListenError(error, config.host, config.port);
    }
    try {
      const mcpUrl = `${gateway.url}/api/workspaces/${DEMO_WORKSPACE_ID}/mcp`;
      const client = new AdminClient({ apiUrl: gateway.url, token: adminToken });
      const existing = readDemoCredentials(dataDir);
      const seeded = await seedDemo(client, { existing, mcpUrl, demoApiUrl: demoApi.url });
      const credentialsPath = demoCredentialsPath(dataDir);
      // Rewritten on every run so the recorded endpoint follows the port in use.
      writeDemoCredentials(dataDir, seeded.credentials);
      const code = await createConsoleSignInCode(gateway.deps.db.db, DEMO_WORKSPACE_ID);
      return {
        consoleSignInUrl: `${gateway.url}/console/sign-in?code=${encodeURIComponent(code)}`,
        gateway,
        dataDir,
        credentialsPath,
        credentials: seeded.credentials,
        newKeys: seeded.newKeys,
        demoApi,
        close: async () => {
          await gateway.close();
          await demoApi.close();
          unlock();
        },
      };
    } catch (error) {
      await gateway.close();
      await demoApi.close();
      throw error;
    }
  } catch (error) {
    unlock();
    throw error;
  }
}

export async function runDev(options: DevOptions, io: CliIo): Promise<void> {
  // Listen for signals before starting, so one that arrives during the start is not fatal.
  const shutdown = waitForShutdownSignal();
  const session = await startDev(options, io);
  io.stdout(renderDevBanner(session, io.cwd));
  const signal = await shutdown;
  io.stdout(`\nReceived ${signal}, shutting down…\n`);
  await session.close();
  io.stdout('Stopped.\n');
}

/** Whether a demo key can call `call_flow_tool`: the key an agent config needs to run the examples. */
function canRunFlows(account: DemoAccount): boolean {
  return account.capabilities.some((c) => c === 'flows.run' || c === 'workspace.full');
}

/** Shows paths relative to the working directory when inside it: shorter and copy-paste friendly. */
function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !rel.startsWith(sep) ? rel : path;
}

export function renderDevBanner(session: DevSession, cwd: string): string {
  const { gateway, credentials, newKeys } = session;
  const credsShown = displayPath(session.credentialsPath, cwd);
  const lines: string[] = [];
  lines.push(`Flowgate dev server: ${gateway.url}`);
  lines.push(`  data:          ${displayPath(session.dataDir, cwd)} (embedded database)`);
  lines.push(`  MCP endpoint:  ${credentials.mcpUrl}`);
  lines.push(`  workspace:     ${credentials.workspaceId}`);
  lines.push(`  console:       ${gateway.url}/console`);
  lines.push(`  sign in once:  ${session.consoleSignInUrl}  (one-time link, valid 10 minutes)`);
  lines.push('');
  if (newKeys.length > 0) {
    lines.push(`Demo API keys — shown once; also saved to ${credsShown} (mode 0600):`);
    const width = Math.max(...newKeys.map((a) => a.name.length));
    for (const a of newKeys)
      lines.push(
        `  ${a.name.padEnd(width)}  ${a.apiKey}  (${a.capabilities.join(', ')}) ${canRunFlows(a) ? '— can run flows' : '— read-only, cannot run flows'}`,
      );
  } else {
    lines.push(`Demo API keys: unchanged; they are in ${credsShown} (not shown again).`);
  }
  // Decided by what each key may do now, not by its name: an account the user changed keeps its changes.
  const runner = credentials.accounts.findIndex(canRunFlows);
  const looker = credentials.accounts.findIndex((a) => !canRunFlows(a));
  const exportLine = (i: number) =>
    `  export FLOWGATE_TOKEN="$(node -p "require('${session.credentialsPath}').accounts[${i}].apiKey")"`;
  lines.push('');
  if (runner >= 0) {
    const name = credentials.accounts[runner]?.name;
    lines.push(
      `Put the ${name} key in FLOWGATE_TOKEN: it can run flows (client configs below reference the variable, not the key):`,
    );
    lines.push(exportLine(runner));
  } else {
    lines.push('No demo key can run flows (flows.run); give one that capability to run the examples.');
  }
  if (looker >= 0) {
    const name = credentials.accounts[looker]?.name;
    lines.push(`For an agent that should only look, use the ${name} key instead (it cannot run flows):`);
    lines.push(exportLine(looker));
  }
  lines.push('');
  lines.push('Claude Code — .mcp.json in your project:');
  const mcpJson = {
    mcpServers: {
      flowgate: {
        type: 'http',
        url: credentials.mcpUrl,
        // Claude Code expands ${VAR} in .mcp.json, so the file never holds the key itself.
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the client's own variable syntax, not a template
        headers: { Authorization: 'Bearer ${FLOWGATE_TOKEN}' },
      },
    },
  };
  for (const line of JSON.stringify(mcpJson, null, 2).split('\n')) lines.push(`  ${line}`);
  lines.push('');
  lines.push('Try it with curl:');
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '0' } },
  });
  lines.push(`  curl -sS ${credentials.mcpUrl} \\`);
  lines.push('    -H "Authorization: Bearer $FLOWGATE_TOKEN" \\');
  lines.push(`    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\`);
  lines.push(`    -d '${initialize}'`);
  lines.push('');
  const full = Math.max(0, runner);
  lines.push(
    `Run an example flow over MCP (${credentials.accounts[full]?.name ?? 'demo-full'} key; the flow calls the local stand-in API):`,
  );
  const call = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'call_flow_tool',
      arguments: {
        flow_slug: 'enrich-company',
        tool_name: 'enrich_company',
        input: { domain: 'acme.com' },
        wait_ms: 10000,
      },
    },
  });
  lines.push(`  curl -sS ${credentials.mcpUrl} \\`);
  lines.push(
    `    -H "Authorization: Bearer $(node -p "require('${session.credentialsPath}').accounts[${full}].apiKey")" \\`,
  );
  lines.push(`    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\`);
  lines.push(`    -d '${call}'`);
  lines.push('');
  lines.push('Admin commands in another terminal use this server and its operator token automatically:');
  const apiUrl = gateway.url === DEFAULT_API_URL ? '' : ` --api-url ${gateway.url}`;
  lines.push(
    `  pnpm flowgate${apiUrl} runs start summarize-text --workspace ${credentials.workspaceId} --input '{"text":"Flowgate runs flows for agents."}' --wait`,
  );
  lines.push(
    `  pnpm flowgate${apiUrl} runs start answer-from-docs --workspace ${credentials.workspaceId} --input '{"question":"How do I rotate a connection secret?"}' --wait`,
  );
  lines.push(`  pnpm flowgate${apiUrl} runs list --workspace ${credentials.workspaceId}`);
  lines.push('');
  lines.push('Press Ctrl+C to stop.');
  return `${lines.join('\n')}\n`;
}
