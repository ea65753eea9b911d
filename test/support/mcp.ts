import { answer, type HttpAnswer } from './gateway.js';

/** Raw Streamable HTTP requests, for asserting the wire behaviour the SDK clients hide. */

export const STREAMABLE_ACCEPT = 'application/json, text/event-stream';

export interface McpPostOptions {
  /** Bearer token; `null` sends no Authorization header. */
  token: string | null;
  /** JSON-serialised unless it is already a string (malformed bodies). */
  body: unknown;
  /** Sent as MCP-Protocol-Version unless `null`. */
  protocolVersion?: string | null;
  headers?: Record<string, string>;
}

export async function mcpPost(url: string, options: McpPostOptions): Promise<HttpAnswer> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: STREAMABLE_ACCEPT,
  };
  if (options.token !== null) headers.authorization = `Bearer ${options.token}`;
  if (options.protocolVersion) headers['mcp-protocol-version'] = options.protocolVersion;
  Object.assign(headers, options.headers);
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  return answer(res);
}

let nextId = 1;

export function rpc(method: string, params?: Record<string, unknown>, id: number | string = nextId++) {
  return { jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) };
}

export function initializeParams(protocolVersion: string) {
  return {
    protocolVersion,
    capabilities: {},
    clientInfo: { name: 'e2e-raw', version: '1.0.0' },
  };
}

/** A JSON-RPC response body narrowed for assertions. */
export interface RpcAnswer {
  jsonrpc: string;
  id: number | string | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export function asRpc(answer: HttpAnswer): RpcAnswer {
  if (typeof answer.json !== 'object' || answer.json === null || Array.isArray(answer.json)) {
    throw new Error(`expected a JSON-RPC object, got HTTP ${answer.status}: ${answer.text}`);
  }
  return answer.json as RpcAnswer;
}

/** Stack-trace shapes that must never appear in an answer. */
export const STACK_TRACE = /\n\s+at\s|\bat [\w.<>]+ \(|node:internal|\.ts:\d+:\d+/;

/** Tool names of a tools/list result (fails when the answer is not one). */
export function toolNamesOf(result: Record<string, unknown> | undefined): string[] {
  const tools = result?.tools;
  if (!Array.isArray(tools)) throw new Error(`not a tools/list result: ${JSON.stringify(result)}`);
  return tools.map((t: { name: string }) => t.name);
}
