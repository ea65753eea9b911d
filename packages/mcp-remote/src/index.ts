/**
 * The run engine's MCP port (`McpConnector`) on the official SDK client (`@modelcontextprotocol/client`, v2): one
 * Streamable HTTP session to a remote, untrusted MCP server, negotiated in `auto` mode (`server/discover` for a
 * 2026-07-28 server, `initialize` for a 2025-era one).
 *
 * The caller's `fetch` is the only network path (it applies the address policy and the size caps); around it this
 * module answers every non-POST with a synthetic 405, so the SDK's standalone SSE stream (GET) or session DELETE never
 * leaves the process and can never hang a session. Only the caller's headers are sent, besides those the protocol
 * itself needs (content type, accept, protocol version, method and name). Everything the server returns is
 * validated and bounded before it is handed on.
 */
import type {
  JsonValue,
  McpConnectOptions,
  McpConnector,
  McpSession,
  RemoteServerInfo,
  RemoteTool,
  RemoteToolResult,
} from '@flowgate/run-engine';
import {
  Client,
  type FetchLike,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { z } from 'zod';

export type McpRemoteErrorCode =
  | 'mcp_connect_failed'
  | 'mcp_timeout'
  | 'mcp_protocol_error'
  | 'mcp_tool_failed';

/**
 * Every failure of a session (except an abort through the caller's `signal`, which rejects with the signal's reason
 * like `fetch` does). The message is short and bounded: at most {@link MAX_REMOTE_TEXT} characters of anything the
 * server sent, never its error data. `rpcCode` is the JSON-RPC error code when the server answered one; `cause` is
 * set only to an error thrown by the caller's own `fetch` (address refused, size cap, call limit), never to an SDK
 * error carrying server text.
 */
export class McpRemoteError extends Error {
  readonly code: McpRemoteErrorCode;
  readonly rpcCode?: number;

  constructor(code: McpRemoteErrorCode, message: string, options?: { cause?: unknown; rpcCode?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McpRemoteError';
    this.code = code;
    if (options?.rpcCode !== undefined) this.rpcCode = options.rpcCode;
  }
}

/** At most this many characters of server-sent text in an error message. */
export const MAX_REMOTE_TEXT = 300;
/** `listTools()` stops after this many tools or pages and keeps what it has. */
export const MAX_REMOTE_TOOLS = 200;
export const MAX_TOOL_PAGES = 10;
export const MAX_TOOL_DESCRIPTION = 2000;
const MAX_TOOL_TITLE = 200;
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Extra time the fetch-level backstop gives the SDK's own per-request timeout, which should fire first. */
const FETCH_TIMEOUT_GRACE_MS = 1000;

const CLIENT_INFO = { name: 'flowgate', version: '1.0.0' };

export const connectRemoteMcp: McpConnector = async (options: McpConnectOptions): Promise<McpSession> => {
  const fromFetch = new WeakSet<object>();
  const transport = new StreamableHTTPClientTransport(options.url, {
    fetch: sessionFetch(options, fromFetch),
    requestInit: { headers: { ...options.headers } },
  });
  const client = new Client(CLIENT_INFO, {
    capabilities: {},
    versionNegotiation: { mode: 'auto', probe: { timeoutMs: options.timeoutMs } },
    // No handler could answer a server's request for input: fail the call instead of looping.
    inputRequired: { autoFulfill: false },
  });
  const requestOptions = { timeout: options.timeoutMs, signal: options.signal };

  try {
    await client.connect(transport, requestOptions);
  } catch (error) {
    await client.close().catch(() => {});
    throw toRemoteError(error, 'mcp_connect_failed', options.signal, fromFetch);
  }

  const server = serverInfoOf(client);
  if (!server) {
    await client.close().catch(() => {});
    throw new McpRemoteError('mcp_protocol_error', 'the MCP server did not report a protocol version');
  }

  return {
    server,

    async listTools(): Promise<RemoteTool[]> {
      if (!client.getServerCapabilities()?.tools) return [];
      const tools: RemoteTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        let result: z.infer<typeof ToolPage>;
        try {
          // One page at a time with our own page schema, each tool checked alone: the SDK's aggregate walk throws
          // past its page cap, losing what it had. (On 2026-07-28 the SDK's wire codec still checks each page
          // against the spec schema first, so there a malformed tool fails the page: mcp_protocol_error.)
          result = await client.request(
            { method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) },
            ToolPage,
            requestOptions,
          );
        } catch (error) {
          throw toRemoteError(error, 'mcp_protocol_error', options.signal, fromFetch);
        }
        for (const raw of result.tools) {
          const tool = parseTool(raw);
          if (tool) tools.push(tool);
          if (tools.length >= MAX_REMOTE_TOOLS) return tools;
        }
        if (result.nextCursor === undefined || result.nextCursor === cursor) return tools;
        cursor = result.nextCursor;
      }
      return tools;
    },

    async callTool(name: string, args: { [key: string]: JsonValue }): Promise<RemoteToolResult> {
      let result: unknown;
      try {
        result = await client.callTool({ name, arguments: args }, requestOptions);
      } catch (error) {
        throw toRemoteError(error, 'mcp_tool_failed', options.signal, fromFetch);
      }
      const parsed = ToolResult.safeParse(result);
      if (!parsed.success)
        throw new McpRemoteError('mcp_protocol_error', `invalid tools/call result from ${name}`);
      return parsed.data;
    },

    async close(): Promise<void> {
      await client.close();
    },
  };
};

/**
 * The session's only way out: the caller's fetch for POSTs, bounded by the session's signal and a backstop timeout
 * (the SDK's timeout rejects the call but does not always abort the exchange), and a synthetic 405 for anything else.
 */
function sessionFetch(options: McpConnectOptions, fromFetch: WeakSet<object>): FetchLike {
  return async (input, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'POST') {
      return new Response(null, {
        status: 405,
        statusText: 'Method Not Allowed',
        headers: { allow: 'POST' },
      });
    }
    // A timer of our own, not AbortSignal.timeout inside AbortSignal.any: a composite follows its sources weakly
    // and Node may collect the timeout signal before it fires (nodejs/node#57736). It stays armed after the
    // headers: the body (an SSE stream) is read under the same bound.
    const timeout = new AbortController();
    const timer: { unref?: () => void } | number = setTimeout(
      () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      options.timeoutMs + FETCH_TIMEOUT_GRACE_MS,
    );
    // Node: the bound alone must not keep a finished process alive (other runtimes answer a number).
    if (typeof timer === 'object') timer.unref?.();
    const signals = [options.signal, timeout.signal];
    if (init?.signal) signals.push(init.signal);
    try {
      return await options.fetch(input, { ...init, signal: AbortSignal.any(signals) });
    } catch (error) {
      if (error !== null && typeof error === 'object') fromFetch.add(error);
      throw error;
    }
  };
}

function serverInfoOf(client: Client): RemoteServerInfo | undefined {
  const protocolVersion = client.getNegotiatedProtocolVersion();
  if (!protocolVersion) return undefined;
  const implementation = client.getServerVersion();
  const name = typeof implementation?.name === 'string' ? bounded(implementation.name, MAX_TOOL_TITLE) : '';
  const info: RemoteServerInfo = { protocolVersion, name };
  if (typeof implementation?.version === 'string')
    info.version = bounded(implementation.version, MAX_TOOL_TITLE);
  return info;
}

function toRemoteError(
  error: unknown,
  fallback: McpRemoteErrorCode,
  signal: AbortSignal,
  fromFetch: WeakSet<object>,
): Error {
  if (signal.aborted) {
    return signal.reason instanceof Error
      ? signal.reason
      : new McpRemoteError('mcp_timeout', 'the call was aborted');
  }
  if (error instanceof McpRemoteError) return error;
  const own = causeChain(error).find((e) => fromFetch.has(e));
  if (own !== undefined) {
    if (isAbort(own)) return new McpRemoteError('mcp_timeout', 'the MCP server did not answer in time');
    // Node's fetch says only "fetch failed"; the system error code (ECONNREFUSED, ENOTFOUND…) sits deeper.
    const detail = causeChain(own)
      .map((e) => (e as { code?: unknown }).code)
      .find((c): c is string => typeof c === 'string' && /^E[A-Z_]+$/.test(c));
    const message = `cannot reach the MCP server: ${bounded(messageOf(own))}${detail ? ` (${detail})` : ''}`;
    return new McpRemoteError('mcp_connect_failed', message, { cause: own });
  }
  if (error instanceof ProtocolError) {
    // The server's own JSON-RPC error: its code and a bounded message, never its data.
    return new McpRemoteError(fallback, `remote error ${error.code}: ${bounded(error.message)}`, {
      rpcCode: error.code,
    });
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) {
      return new McpRemoteError('mcp_timeout', 'the MCP server did not answer in time');
    }
    const code = fallback === 'mcp_connect_failed' ? fallback : 'mcp_protocol_error';
    return new McpRemoteError(code, bounded(error.message));
  }
  if (isAbort(error)) return new McpRemoteError('mcp_timeout', 'the MCP server did not answer in time');
  const code = fallback === 'mcp_connect_failed' ? fallback : 'mcp_protocol_error';
  return new McpRemoteError(code, bounded(messageOf(error)));
}

function causeChain(error: unknown): object[] {
  const chain: object[] = [];
  let current: unknown = error;
  while (current !== null && typeof current === 'object' && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

/** By name: a DOMException is not an Error subclass on every runtime. */
function isAbort(error: unknown): boolean {
  const name = error !== null && typeof error === 'object' ? (error as { name?: unknown }).name : undefined;
  return name === 'AbortError' || name === 'TimeoutError';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function bounded(text: string, max = MAX_REMOTE_TEXT): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

// biome-ignore lint/suspicious/noExplicitAny: recursive JSON value schema
const JsonValueSchema: z.ZodType<JsonValue> = z.lazy((): any =>
  z.union([
    z.null(),
    z.boolean(),
    z.number(),
    z.string(),
    z.array(JsonValueSchema),
    z.record(z.string(), JsonValueSchema),
  ]),
);
const JsonObject = z.record(z.string(), JsonValueSchema);

const ToolPage = z.object({
  tools: z.array(z.unknown()),
  nextCursor: z.string().optional().catch(undefined),
});

const RemoteToolSchema = z.object({
  name: z.string().regex(TOOL_NAME),
  title: z
    .string()
    .transform((t) => bounded(t, MAX_TOOL_TITLE))
    .optional()
    .catch(undefined),
  description: z
    .string()
    .transform((d) => d.slice(0, MAX_TOOL_DESCRIPTION))
    .optional()
    .catch(undefined),
  inputSchema: JsonObject.catch({ type: 'object' }),
  annotations: JsonObject.optional().catch(undefined),
});

function parseTool(raw: unknown): RemoteTool | undefined {
  const parsed = RemoteToolSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const { name, title, description, inputSchema, annotations } = parsed.data;
  const tool: RemoteTool = { name, inputSchema };
  if (title !== undefined) tool.title = title;
  if (description !== undefined) tool.description = description;
  if (annotations !== undefined) tool.annotations = annotations;
  return tool;
}

const ToolResult = z
  .object({
    content: z.array(JsonValueSchema).catch([]),
    structuredContent: JsonObject.optional().catch(undefined),
    isError: z.boolean().optional().catch(undefined),
  })
  .transform(({ content, structuredContent, isError }): RemoteToolResult => {
    const result: RemoteToolResult = { content, isError: isError === true };
    if (structuredContent !== undefined) result.structuredContent = structuredContent;
    return result;
  });

export { checkMcpServer, type McpServerCheck } from './check.js';
