import type { DocRenderOptions } from './render-options.js';

const TOKEN_VAR = 'FLOWGATE_MCP_TOKEN';

export function renderClientSetup(o: DocRenderOptions): string {
  const ws = o.workspaceId ?? 'ws-acme';
  const url = `${o.publicBaseUrl}/api/workspaces/${ws}/mcp`;
  // Workspace ids are [a-z0-9-], so the server name is safe as a TOML/YAML/JSON key as is.
  const name = `flowgate-${ws}`;
  const stdioArgs = ['mcp', 'stdio', '--workspace', ws, '--token-env-var', TOKEN_VAR];
  const stdioJson = JSON.stringify(stdioArgs);
  const fence = '```';
  return `# Connect an MCP client to Flowgate

One server entry per workspace${o.workspaceId ? '' : ` (examples use the workspace \`${ws}\`; put yours in its place)`}:

| field | value |
|---|---|
| transport | Streamable HTTP ("http" in most clients); not legacy SSE |
| URL | \`${url}\` |
| auth header | \`Authorization: Bearer <token>\` |
| optional narrowing headers | \`X-MCP-Toolsets\`, \`X-MCP-Tools\`, \`X-MCP-Exclude-Tools\`, \`X-MCP-Readonly\` |

Keep the token in an environment variable (here \`${TOKEN_VAR}\`) or the client's secret store — never in a URL,
a committed file or a tool argument. A service-account key is shown once when it is created
(\`flowgate service-accounts keys create <service-account-id>\`); rotate by creating a new key, moving clients, and
revoking the old one.

Narrowing headers go next to \`Authorization\` in the same \`headers\` block, for example
\`"X-MCP-Readonly": "true"\` and \`"X-MCP-Toolsets": "read,setup,feedback"\` for an exploration or support session.

\`flowgate mcp config --workspace ${ws} --provider <client> --transport http|stdio\` prints any of the snippets below
ready to paste (providers: codex, claude, cursor, windsurf, vscode, cline, roo, continue, gemini, opencode, goose,
zed, generic).

## Codex

\`~/.codex/config.toml\` — Codex reads the token from the named variable:

${fence}toml
[mcp_servers.${name}]
url = "${url}"
bearer_token_env_var = "${TOKEN_VAR}"

[mcp_servers.${name}.http_headers]
X-MCP-Toolsets = "read,setup,feedback"
${fence}

## Claude Code

\`.mcp.json\` in the project (Claude Code expands \`\${VAR}\`):

${fence}json
{
  "mcpServers": {
    "${name}": {
      "type": "http",
      "url": "${url}",
      "headers": { "Authorization": "Bearer \${${TOKEN_VAR}}" }
    }
  }
}
${fence}

Or from a shell: \`claude mcp add --transport http ${name} ${url} --header "Authorization: Bearer $${TOKEN_VAR}"\`.
Claude Code rejects tool results over about 25k tokens; Flowgate keeps results bounded and links large values.

## Cursor

\`.cursor/mcp.json\` (project) or \`~/.cursor/mcp.json\`:

${fence}json
{
  "mcpServers": {
    "${name}": {
      "url": "${url}",
      "headers": { "Authorization": "Bearer \${env:${TOKEN_VAR}}" }
    }
  }
}
${fence}

Cursor uses only the first 40 tools of a server; the Flowgate catalog stays well below that.

## Windsurf

\`~/.codeium/windsurf/mcp_config.json\`:

${fence}json
{
  "mcpServers": {
    "${name}": {
      "serverUrl": "${url}",
      "headers": { "Authorization": "Bearer \${env:${TOKEN_VAR}}" }
    }
  }
}
${fence}

## VS Code (GitHub Copilot)

\`.vscode/mcp.json\` — VS Code prompts for the token once and stores it as a secret:

${fence}json
{
  "servers": {
    "${name}": {
      "type": "http",
      "url": "${url}",
      "headers": { "Authorization": "Bearer \${input:flowgate_mcp_token}" }
    }
  },
  "inputs": [
    { "type": "promptString", "id": "flowgate_mcp_token", "description": "Flowgate MCP bearer token", "password": true }
  ]
}
${fence}

## Cline

\`cline_mcp_settings.json\`. Cline does not expand variables in headers, so a literal token would sit in the file;
prefer the stdio bridge, which reads the token from the environment Cline was started with:

${fence}json
{
  "mcpServers": {
    "${name}": {
      "command": "flowgate",
      "args": ${stdioJson}
    }
  }
}
${fence}

The direct HTTP form is \`{"type": "streamableHttp", "url": "${url}", "headers": {"Authorization": "Bearer <token>"}}\`.

## Roo Code

\`.roo/mcp.json\`:

${fence}json
{
  "mcpServers": {
    "${name}": {
      "type": "streamable-http",
      "url": "${url}",
      "headers": { "Authorization": "Bearer \${env:${TOKEN_VAR}}" }
    }
  }
}
${fence}

## Continue

\`.continue/mcpServers/${name}.yaml\` (store the token as a Continue secret named \`${TOKEN_VAR}\`):

${fence}yaml
name: Flowgate ${ws}
version: 0.0.1
schema: v1
mcpServers:
  - name: ${name}
    type: streamable-http
    url: ${url}
    requestOptions:
      headers:
        Authorization: Bearer \${{ secrets.${TOKEN_VAR} }}
${fence}

## Gemini CLI

\`~/.gemini/settings.json\` (Gemini CLI expands \`$VAR\` and \`\${VAR}\`):

${fence}json
{
  "mcpServers": {
    "${name}": {
      "httpUrl": "${url}",
      "headers": { "Authorization": "Bearer $${TOKEN_VAR}" }
    }
  }
}
${fence}

## opencode

\`opencode.json\`:

${fence}json
{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "${name}": {
      "type": "remote",
      "url": "${url}",
      "headers": { "Authorization": "Bearer {env:${TOKEN_VAR}}" },
      "enabled": true
    }
  }
}
${fence}

## Goose

Run \`goose configure\` → Add Extension → Remote Extension (Streamable HTTP), give the URL and add the
\`Authorization\` header when prompted. The result in \`~/.config/goose/config.yaml\`:

${fence}yaml
extensions:
  ${name}:
    enabled: true
    type: streamable_http
    name: ${name}
    uri: ${url}
    headers:
      Authorization: Bearer <token>
    timeout: 300
${fence}

## Zed

\`settings.json\`. Zed does not expand variables; use the stdio bridge to keep the token out of the file:

${fence}json
{
  "context_servers": {
    "${name}": {
      "command": "flowgate",
      "args": ${stdioJson}
    }
  }
}
${fence}

The direct HTTP form is \`{"url": "${url}", "headers": {"Authorization": "Bearer <token>"}}\`.

## Any client that only runs commands: the stdio bridge

${fence}sh
export ${TOKEN_VAR}="<token>"
flowgate mcp stdio --workspace ${ws} --token-env-var ${TOKEN_VAR} [--read-only] [--toolsets read,setup,feedback] \\
  [--tools …] [--exclude-tools …] [--api-url ${o.publicBaseUrl}]
${fence}

The bridge forwards JSON-RPC between stdin/stdout and the HTTP endpoint; its flags become the X-MCP-* headers, upstream
failures become JSON-RPC errors, and it never prints the token. Pass the variable through the client's \`env\` block
if the client does not inherit your shell environment.

## Check the setup

\`flowgate mcp doctor --workspace ${ws} --token-env-var ${TOKEN_VAR}\` with the same narrowing flags runs
\`initialize\` and \`tools/list\`, never calls a tool, and prints the stage and a hint on failure. Inside a client, call
\`get_workspace_context\` and compare the visible tools with what you expect. If a tool is missing, its blockers say
whether the token's capabilities or the narrowing hide it (see flowgate://mcp-docs/overview).
`;
}
