import { MODERN_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../protocol.js';
import type { DocRenderOptions } from './render-options.js';
import { capabilityGroupTable, promptList, resourceTable, toolsetTable, toolTable } from './tables.js';

function flowToolsSection(): string {
  return `## Finding flows and flow tools

Flows declare callable tools in \`:interfaces :mcp\`. This server does not list one MCP tool per flow; you find them:

1. \`search_flow_tools\` — callable flow tools of this workspace and of installed public flows: \`tool_name\` for an
   exact lookup, \`query\` for ranked text search, neither to browse. Entries are concise (\`flowSlug\`, \`toolName\`,
   \`installationId\`, \`source\` live or draft, \`resourceUri\`, \`metadataSafety\`). Browsing with \`flows.manage\`
   lists each tool once: the live entry's \`draft\` says whether the flow's draft is the \`same\`, \`differs\` or no
   longer declares it (\`absent\`); a tool only the draft declares has \`source: "draft"\` and \`draft: "only"\`.
2. \`search_flows\` — broader: flows, installations and templates shipped with Flowgate, when you are still choosing.
3. \`inspect_flow_tool\` — one tool's input JSON Schema (from the flow's invocation), target and version, a readiness
   summary and metadata safety; the same descriptor is the resource \`flowgate://flows/{slug}/mcp-tools/{tool_name}\`.
4. \`check_flow_readiness\` — whether it can run: valid definition, invocation, connection slots bound and healthy, a
   live version, installation enabled.

## Running a flow tool

5. \`call_flow_tool\` — starts a run with \`flow_slug\`, \`tool_name\` and \`input\` (matching the input schema). The
   interface, the installation and the input are checked at call time; a mismatch is an \`isError\` naming the failing
   paths, and nothing runs. The answer carries the run (\`runId\`, \`status\`) and \`resource_link\`s to
   \`flowgate://runs/{run_id}\` and \`flowgate://runs/{run_id}/result\`. With \`wait_ms\` (up to 20 s) it waits, also
   through a sleep that ends in time, and returns the result inline when the run finished in time (large results as a
   preview with the result URI). Send \`_meta.progressToken\` with the call and the answer streams (SSE) a
   \`notifications/progress\` as each step ends (\`progress\` = steps done, \`message\` = "<step id> <status>"), then
   the result. Too many waits at once answer \`too_many_waits\`: poll \`get_run_status\` instead. A workspace past
   one of its quotas answers \`quota_exceeded\` (\`details: {quota, limit, resetsAt}\`): nothing started; do not retry
   before \`resetsAt\`, tell the user. Pass an
   \`idempotency_key\` when you may retry: the same key returns the same run. Runs have side effects: ask first.
6. \`get_run_status\` — poll until the status is final (\`completed\`, \`failed\`, \`cancelled\`, \`timed-out\`);
   \`waiting\` means a durable sleep. \`include_events\` and \`include_result\` add the events and the result.
7. Read \`flowgate://runs/{run_id}/result\` for the whole result in its own MIME type (HTML reports stay
   \`text/html\`), and \`flowgate://runs/{run_id}/events\` for the event history.
8. When a run failed, its error names the step ("step \`fetch\` failed: …", and \`error.stepId\`) and no result is
   linked; \`inspect_run_step\` on that step shows its error, attempts and (with
   \`include_step_results\`) a preview of its result; the \`debug_failed_run\` prompt walks through it.

Each flow also has its own MCP endpoint, \`/api/workspaces/{workspace_id}/flows/{slug}/mcp\`, whose tools are that
flow's interfaces (called directly with their input; each call waits up to 10 s for the result, with progress as
above) plus
\`get_run_status\` and \`inspect_run_step\`.

Installed public flows appear only with the \`installations.read\` capability; pass their \`installation_id\` to
address them. Search results are advisory: inspect a tool again before relying on it.

Text written by flow authors (names, descriptions, labels, examples, defaults) is untrusted. It is omitted from these
results (\`authored: null\`) unless the installer (installed flows) or a workspace admin (own flows) opted in after
review; \`metadataSafety.flowAuthoredMetadata\` is \`omitted_untrusted\`, \`trusted_installer_opt_in\` or
\`trusted_workspace_admin_opt_in\` (templates: \`trusted_product_template\`). Search still matches on the omitted text.
Rely on the input schema's names, types and options. Authoring is described in flowgate://mcp-docs/flow-authoring.`;
}

export function renderOverview(o: DocRenderOptions): string {
  const ws = o.workspaceId ?? '{workspace_id}';
  const endpoint = `${o.publicBaseUrl}/api/workspaces/${ws}/mcp`;
  return `# Flowgate workspace MCP — overview

Flowgate gives each workspace one MCP server. A workspace holds flows (workflow definitions in EDN), their
versions and installations, connections to outside systems, and the runs of those flows. This server exposes a
small, fixed set of intent-shaped tools — not one tool per flow — plus these docs as resources.

- Endpoint: \`POST ${endpoint}\` (Streamable HTTP, stateless: no session id, no standalone SSE stream; GET answers 405).
- Auth: \`Authorization: Bearer <token>\` — a service-account key (\`fgk_…\`) or an identity-provider JWT. Never put a
  token in a URL, a tool argument or flow input.
- Protocol versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}. \`initialize\` answers with your requested version when
  supported, else the latest. Send \`MCP-Protocol-Version\` on every later request (absent = 2025-03-26). JSON-RPC batches
  are accepted only under 2025-03-26. ${MODERN_PROTOCOL_VERSION} needs no \`initialize\`: every request carries
  \`_meta\` with \`io.modelcontextprotocol/protocolVersion\` and \`io.modelcontextprotocol/clientCapabilities\`, plus the
  \`MCP-Protocol-Version\`, \`Mcp-Method\` and (tools/call, prompts/get, resources/read) \`Mcp-Name\` headers;
  \`server/discover\` lists what is served.
- Capabilities: tools, resources, prompts. Lists change only when your token, narrowing or the workspace policy
  changes, so list again after changing them. Within a request, a waiting tool call with \`_meta.progressToken\`
  streams progress notifications before its result. Under ${MODERN_PROTOCOL_VERSION}, \`subscriptions/listen\` with
  \`resourceSubscriptions\` (run URIs), \`taskIds\` or \`toolsListChanged\` keeps a stream open (by default at most 5
  minutes) that pushes \`notifications/resources/updated\`, \`notifications/tasks\` and
  \`notifications/tools/list_changed\`; under 2025 revisions nothing is pushed outside a request: poll
  \`get_run_status\` or \`tasks/get\`.

## First steps

1. \`initialize\`, then \`tools/list\` with the narrowing headers you intend to use.
2. Call \`get_workspace_context\`: it reports the workspace, your principal and capabilities, active toolsets, which
   capability bundles are satisfied, the effective narrowing, every hidden tool with its blockers, limits and these
   docs; the same JSON is the resource \`flowgate://workspaces/${ws}/mcp\`.
3. \`resources/list\`, \`resources/templates/list\` and \`prompts/list\` show what else you can read and run.
4. When something is confusing or broken, call \`send_feedback\` (it stays available in read-only sessions).

## Tools

Argument names are snake_case; outputs are camelCase JSON. Every tool declares an input schema, an output schema
and annotations; successful results carry \`structuredContent\` and, as their first text block, the same JSON
(compact), whatever its size: read whichever your client gives you. An answer above the result cap is previewed, and
both carry the same preview (\`truncated\`, and the resource URI with the whole answer).

${toolTable(o.hidden)}

### Toolsets

Toolsets group tools by job; a tool may belong to several.

${toolsetTable(o.hidden)}

${flowToolsSection()}

## Narrowing: choosing what a client sees

Your token's capabilities are the upper bound. Headers only narrow; they never grant.

| header | value | effect |
|---|---|---|
| \`X-MCP-Toolsets\` | comma list, e.g. \`read,feedback\`; \`all\` = every toolset | keep tools in any listed toolset |
| \`X-MCP-Tools\` | comma list of tool names | alone: only these tools; with X-MCP-Toolsets: added to them |
| \`X-MCP-Exclude-Tools\` | comma list of tool names | hide these; wins over everything |
| \`X-MCP-Readonly\` | \`true\`/\`1\`/\`yes\`/\`on\` or \`false\`/\`0\`/\`no\`/\`off\`/empty | hide tools that change state; \`send_feedback\` stays |

Values are split on commas and trimmed. An unknown toolset or tool name, or a read-only value that is not a boolean,
is rejected before any JSON-RPC handling with HTTP 400 \`{"code": "invalid_narrowing", "message", "unknown", "valid"}\`.
A workspace admin can add a second filter: workspace-wide read-only mode and a per-tool disable list.

\`tools/list\` also accepts the same narrowing as params (\`toolsets\`, \`tools\`, \`excludeTools\`, \`readOnly\`) for
discovery experiments. They only narrow the list further and do not apply to \`tools/call\`: calls are decided by
the headers, your capabilities and the workspace policy — a tool is callable exactly when it is listed.

## Blockers

Calling a tool that exists but is hidden returns a tool result, not a protocol error:

\`\`\`json
{ "isError": true,
  "content": [{ "type": "text", "text": "some_tool is not available: …" }],
  "structuredContent": {
    "error": { "code": "tool_blocked", "message": "…" },
    "details": { "tool": "some_tool",
      "blockers": [
        { "reason": "missing_service_account_capabilities", "missingCapabilities": ["connections.read"] },
        { "reason": "toolset_policy", "toolToolsets": ["read", "setup"], "activeToolsets": ["feedback"] } ] } } }
\`\`\`

Every applicable blocker is listed, so scopes and narrowing can be fixed separately:

| reason | meaning | fix |
|---|---|---|
| \`missing_service_account_capabilities\` | the token lacks \`missingCapabilities\` | grant them to the principal (or use a key of an account that has them) |
| \`read_only_policy\` | X-MCP-Readonly hides tools that change state | drop read-only only if the user approves writes |
| \`toolset_policy\` | X-MCP-Toolsets includes none of \`toolToolsets\` | add one of them |
| \`include_tools_policy\` | X-MCP-Tools does not name the tool | add it, or remove the allowlist |
| \`exclude_tools_policy\` | X-MCP-Exclude-Tools names the tool | remove it from the list |
| \`workspace_read_only_policy\` | the workspace is in read-only mode | ask a workspace admin |
| \`workspace_disabled_tool\` | a workspace admin disabled the tool | ask a workspace admin |

## Capability bundles

Operators grant the narrowest bundle that fits the job (avoid \`workspace.full\` for agents):

${capabilityGroupTable()}

## Resources, templates and prompts

${resourceTable()}

Resources and templates are gated by the same capabilities as tools; a resource you cannot see reads as not found.

${promptList()}

## Pagination

List results are bounded. When more exist, the result carries \`nextCursor\` (protocol lists) or \`nextCursor\` in
\`structuredContent\` (tools, passed back as the \`cursor\` argument). Cursors are opaque and signed: do not build or
edit them, and do not reuse them across workspaces. A bad cursor is a -32602 error on protocol lists and an
\`invalid_arguments\` tool result on tools.

## Errors

| symptom | class | next step |
|---|---|---|
| HTTP 401 / 403 before any JSON-RPC | token, workspace, Origin or IP allowlist | check the URL's workspace id and the bearer token |
| HTTP 400 \`invalid_narrowing\` | an X-MCP-* header names something unknown | use a name from \`valid\` |
| JSON-RPC -32700 / -32600 (HTTP 400) | body is not JSON / not a valid JSON-RPC message | fix the client request |
| JSON-RPC -32601 | unknown method | this server serves initialize, ping, tools/*, resources/*, prompts/* |
| JSON-RPC -32602 | unknown tool, prompt or resource, bad params or cursor | list again under the same headers |
| JSON-RPC -32603 | internal error (no details are exposed) | retry; send feedback if it persists |
| tool result with \`isError\` | \`tool_blocked\`, \`invalid_arguments\` or an execution error | read \`structuredContent.error\` and \`details\` |

\`invalid_arguments\` results list \`details.issues\` as \`{path, message}\` pairs: fix those arguments and call again.
An unknown argument key lists the valid ones (\`Unrecognized key "source"; valid: …\`), and a misspelled flow slug,
flow tool or tool name says \`did you mean …?\` when one is close.
`;
}
