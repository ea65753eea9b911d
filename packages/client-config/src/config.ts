/**
 * `flowgate mcp config`: a paste-ready server entry for each popular MCP client, in that client's own file
 * format and environment-variable syntax. Everything is produced by real serialisers (smol-toml, yaml,
 * JSON.stringify) from validated parts, and the server name is reduced to [A-Za-z0-9_-], so no input can
 * add keys or tables. No network, and never a secret: only a reference to the variable (or an input prompt).
 */
import { stringify as toToml } from 'smol-toml';
import YAML from 'yaml';
import { apiBase, insecureApiUrlProblem, mcpEndpoint } from './credentials.js';
import { type NarrowingFlags, narrowingArgs, narrowingHeaders } from './narrowing-flags.js';
import type { Provider, Transport } from './providers.js';

export { PROVIDERS, type Provider, TRANSPORTS, type Transport } from './providers.js';

export type ConfigFormat = 'toml' | 'yaml' | 'json';

export interface ConfigInput {
  provider: Provider;
  transport: Transport;
  workspaceId: string;
  apiUrl: string;
  /** Raw --name; sanitised here. */
  name?: string | undefined;
  tokenEnvVar: string;
  narrowing: NarrowingFlags;
  /** The executable stdio configs start (default `flowgate`). */
  command?: string | undefined;
}

export interface RenderedConfig {
  provider: Provider;
  transport: Transport;
  format: ConfigFormat;
  serverName: string;
  /** Where the entry belongs. */
  file: string;
  /** The config text (TOML/YAML start with a `# file` comment; JSON is bare so it stays parseable). */
  content: string;
  /** Remarks for the user (stderr): merging, secrets, client limits. */
  notes: string[];
}

const MAX_NAME = 64;

/** `[A-Za-z0-9_-]` only, at most 64 characters; empty after cleaning → `flowgate-<workspace>`. */
export function sanitizeServerName(raw: string | undefined, workspaceId: string): string {
  const fallback = `flowgate-${workspaceId}`.slice(0, MAX_NAME);
  if (raw === undefined) return fallback;
  const cleaned = raw
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_NAME)
    .replace(/-+$/, '');
  return cleaned || fallback;
}

const FILES: Record<Provider, string> = {
  codex: '~/.codex/config.toml',
  claude: '.mcp.json (project root)',
  cursor: '.cursor/mcp.json (project) or ~/.cursor/mcp.json (global)',
  windsurf: '~/.codeium/windsurf/mcp_config.json',
  vscode: '.vscode/mcp.json',
  cline: 'cline_mcp_settings.json (Cline: MCP Servers → Configure MCP Servers)',
  roo: '.roo/mcp.json (project) or the global mcp_settings.json',
  continue: '.continue/mcpServers/NAME.yaml',
  gemini: '~/.gemini/settings.json (or .gemini/settings.json in the project)',
  opencode: 'opencode.json (project root) or ~/.config/opencode/opencode.json',
  goose: '~/.config/goose/config.yaml',
  zed: '~/.config/zed/settings.json (Zed: Open Settings)',
  generic: "your client's MCP server configuration",
};

const FORMATS: Record<Provider, ConfigFormat> = {
  codex: 'toml',
  claude: 'json',
  cursor: 'json',
  windsurf: 'json',
  vscode: 'json',
  cline: 'json',
  roo: 'json',
  continue: 'yaml',
  gemini: 'json',
  opencode: 'json',
  goose: 'yaml',
  zed: 'json',
  generic: 'json',
};

/** What stands in a config for the key; clients without env expansion get a placeholder that cannot pass as a key. */
export function envReference(provider: Provider, varName: string, inputId: string): string {
  switch (provider) {
    case 'claude':
    case 'gemini':
    case 'goose':
    case 'generic':
      return `\${${varName}}`;
    case 'cursor':
    case 'windsurf':
    case 'roo':
      return `\${env:${varName}}`;
    case 'vscode':
      return `\${input:${inputId}}`;
    case 'continue':
      return `\${{ secrets.${varName} }}`;
    case 'opencode':
      return `{env:${varName}}`;
    case 'codex':
      return varName;
    case 'cline':
    case 'zed':
      return `<paste the key from $${varName} here>`;
  }
}

export function renderConfig(input: ConfigInput): RenderedConfig {
  const { provider, transport } = input;
  const name = sanitizeServerName(input.name, input.workspaceId);
  const url = mcpEndpoint(input.apiUrl, input.workspaceId);
  const varName = input.tokenEnvVar;
  const inputId = `${name}-token`;
  const ref = envReference(provider, varName, inputId);
  const headers = { Authorization: `Bearer ${ref}`, ...narrowingHeaders(input.narrowing) };
  const command = input.command ?? 'flowgate';
  const args = [
    'mcp',
    'stdio',
    '--workspace',
    input.workspaceId,
    '--token-env-var',
    varName,
    '--api-url',
    apiBase(input.apiUrl),
    ...narrowingArgs(input.narrowing),
  ];
  const http = transport === 'http';
  const envBlock = { [varName]: ref };
  const file = FILES[provider].replace('NAME', name);
  const notes: string[] = [];
  let doc: unknown;

  switch (provider) {
    case 'codex':
      // Codex reads the variable itself (bearer_token_env_var) and forwards only whitelisted env to commands.
      doc = {
        mcp_servers: {
          [name]: http
            ? {
                url,
                bearer_token_env_var: varName,
                ...(Object.keys(narrowingHeaders(input.narrowing)).length
                  ? { http_headers: narrowingHeaders(input.narrowing) }
                  : {}),
              }
            : { command, args, env_vars: [varName] },
        },
      };
      break;
    case 'claude':
      doc = {
        mcpServers: {
          [name]: http ? { type: 'http', url, headers } : { type: 'stdio', command, args, env: envBlock },
        },
      };
      break;
    case 'cursor':
      doc = {
        mcpServers: { [name]: http ? { url, headers } : { type: 'stdio', command, args, env: envBlock } },
      };
      break;
    case 'windsurf':
      doc = { mcpServers: { [name]: http ? { serverUrl: url, headers } : { command, args, env: envBlock } } };
      break;
    case 'vscode':
      doc = {
        inputs: [
          {
            type: 'promptString',
            id: inputId,
            description: `Flowgate API key for workspace ${input.workspaceId}`,
            password: true,
          },
        ],
        servers: {
          [name]: http ? { type: 'http', url, headers } : { type: 'stdio', command, args, env: envBlock },
        },
      };
      notes.push('VS Code asks for the key once and keeps it in its secret storage.');
      break;
    case 'cline':
      doc = {
        mcpServers: {
          [name]: http
            ? { type: 'streamableHttp', url, headers, disabled: false }
            : { type: 'stdio', command, args, env: envBlock, disabled: false },
        },
      };
      notes.push(
        `Cline does not expand environment variables: replace the placeholder with the key. The key is then stored in plain text in ${FILES.cline.split(' ')[0]}; keep that file private.`,
      );
      break;
    case 'roo':
      doc = {
        mcpServers: {
          [name]: http
            ? { type: 'streamable-http', url, headers }
            : { type: 'stdio', command, args, env: envBlock },
        },
      };
      break;
    case 'continue':
      doc = {
        name: `Flowgate ${input.workspaceId}`,
        version: '0.0.1',
        schema: 'v1',
        mcpServers: [
          http
            ? { name, type: 'streamable-http', url, requestOptions: { headers } }
            : { name, type: 'stdio', command, args, env: envBlock },
        ],
      };
      notes.push(
        `Continue reads secrets.${varName} from .env in ~/.continue/ or the workspace's .continue/, or from Continue Hub.`,
      );
      break;
    case 'gemini':
      doc = { mcpServers: { [name]: http ? { httpUrl: url, headers } : { command, args, env: envBlock } } };
      break;
    case 'opencode':
      doc = {
        $schema: 'https://opencode.ai/config.json',
        mcp: {
          [name]: http
            ? { type: 'remote', url, headers, enabled: true }
            : { type: 'local', command: [command, ...args], environment: envBlock, enabled: true },
        },
      };
      break;
    case 'goose':
      // Goose substitutes ${VAR} in headers from env_keys, which it reads from its keyring or the environment.
      doc = {
        extensions: {
          [name]: http
            ? {
                enabled: true,
                type: 'streamable_http',
                name,
                description: `Flowgate workspace ${input.workspaceId}`,
                uri: url,
                envs: {},
                env_keys: [varName],
                headers,
                timeout: 300,
              }
            : {
                enabled: true,
                type: 'stdio',
                name,
                description: `Flowgate workspace ${input.workspaceId}`,
                cmd: command,
                args,
                envs: {},
                env_keys: [varName],
                timeout: 300,
              },
        },
      };
      notes.push(
        `Goose looks ${varName} up in its secret store or the environment; \`goose configure\` can store it.`,
      );
      break;
    case 'zed':
      doc = {
        context_servers: {
          [name]: http ? { source: 'custom', url, headers } : { source: 'custom', command, args, env: {} },
        },
      };
      if (http) {
        notes.push(
          'Zed does not expand environment variables in settings: replace the placeholder with the key, or use --transport stdio so the key stays in the environment.',
        );
      } else {
        notes.push(`The bridge reads $${varName} from the environment Zed was started with.`);
      }
      break;
    case 'generic':
      doc = {
        mcpServers: {
          [name]: http ? { type: 'http', url, headers } : { type: 'stdio', command, args, env: envBlock },
        },
      };
      notes.push(
        `Write \${${varName}} in your client's own variable syntax, or supply the header from its secret store.`,
      );
      break;
  }

  const format = FORMATS[provider];
  let content: string;
  if (format === 'toml') content = `# ${file}\n${toToml(doc as Record<string, unknown>)}\n`;
  else if (format === 'yaml') content = `# ${file}\n${YAML.stringify(doc, { lineWidth: 0 })}`;
  else content = `${JSON.stringify(doc, null, 2)}\n`;
  if (provider !== 'continue')
    notes.unshift('Merge this entry into that file; keep the entries already there.');
  if (!http)
    notes.push(
      `The stdio entry runs \`${command}\`; it must be on the client's PATH (or pass --command with a full path).`,
    );
  if (insecureApiUrlProblem(input.apiUrl)) {
    notes.push(
      http
        ? 'The URL is plain http:// to another machine: the client would send the key unencrypted. Use https://.'
        : 'The URL is plain http:// to another machine: the bridge refuses to send the key there. Use https:// (or add --allow-insecure-http to the args on a trusted network).',
    );
  }
  return { provider, transport, format, serverName: name, file, content, notes };
}
