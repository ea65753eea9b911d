/**
 * What the run engine needs from an MCP client to call tools on a remote server (`:mcp` steps and the tools of `:llm`
 * steps). The engine never speaks the protocol itself: the worker passes a connector built on the official SDK
 * (@flowgate/mcp-remote), and tests pass fakes. Everything a remote server returns is untrusted data.
 */
import type { JsonValue } from '../values.js';

/** One tool as the remote server lists it: untrusted metadata, shown to a model only under the trust rule. */
export interface RemoteTool {
  name: string;
  title?: string;
  description?: string;
  /** The remote JSON Schema of the arguments, as sent. */
  inputSchema: { [key: string]: JsonValue };
  annotations?: { [key: string]: JsonValue };
}

export interface RemoteToolResult {
  /** Content blocks as sent (text, image, resource, …). */
  content: JsonValue[];
  structuredContent?: { [key: string]: JsonValue };
  isError: boolean;
}

export interface RemoteServerInfo {
  /** The protocol revision agreed with the server, e.g. `2026-07-28` or `2025-06-18`. */
  protocolVersion: string;
  name: string;
  version?: string;
}

export interface McpSession {
  readonly server: RemoteServerInfo;
  /** Every tool the server lists (all pages), bounded in count. */
  listTools(): Promise<RemoteTool[]>;
  callTool(name: string, args: { [key: string]: JsonValue }): Promise<RemoteToolResult>;
  close(): Promise<void>;
}

export interface McpConnectOptions {
  /** The Streamable HTTP endpoint. */
  url: URL;
  /** Auth and fixed headers of the connection; nothing else of ours is sent. */
  headers: Record<string, string>;
  /**
   * The only way out: a fetch that applies the outbound address policy, caps response sizes and counts each request
   * against the run's HTTP-call limit.
   */
  fetch: typeof fetch;
  /** Aborts every request of the session (run cancelled, deadline, step timeout). */
  signal: AbortSignal;
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
}

/** Opens a session (protocol negotiation included); rejects with a clear message when the server cannot be used. */
export type McpConnector = (options: McpConnectOptions) => Promise<McpSession>;
