import {
  Client as V2Client,
  ProtocolError as V2ProtocolError,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError as V1McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * The two SDK generations behind one small interface, so each end-to-end scenario runs unchanged with the v2
 * client (`@modelcontextprotocol/client`) and the v1 client (`@modelcontextprotocol/sdk`) still common in the wild.
 */

export interface ToolResult {
  isError?: boolean;
  content: unknown[];
  structuredContent?: unknown;
}

export interface ReadContents {
  uri: string;
  mimeType?: string;
  text?: string;
}

export interface McpSession {
  readonly flavour: ClientFlavour;
  protocolVersion(): string | undefined;
  serverCapabilities(): Record<string, unknown> | undefined;
  listTools(params?: Record<string, unknown>): Promise<Array<{ name: string; outputSchema?: unknown }>>;
  callTool(name: string, args?: Record<string, unknown>, meta?: Record<string, unknown>): Promise<ToolResult>;
  listResources(): Promise<Array<{ uri: string; mimeType?: string; annotations?: Record<string, unknown> }>>;
  readResource(uri: string): Promise<ReadContents[]>;
  listResourceTemplates(): Promise<Array<{ uriTemplate: string }>>;
  listPrompts(): Promise<Array<{ name: string; arguments?: Array<{ name: string; required?: boolean }> }>>;
  getPrompt(
    name: string,
    args: Record<string, string>,
  ): Promise<{ messages: Array<{ role: string; content: { type: string; text?: string } }> }>;
  close(): Promise<void>;
}

export type ClientFlavour = 'sdk-v2' | 'sdk-v1';

export interface ConnectOptions {
  token: string;
  headers?: Record<string, string>;
  /** v2 only: probe with server/discover first, as dual-era clients do. */
  autoNegotiation?: boolean;
  /** The name and version the client gives at initialize (default `CLIENT_INFO`). */
  clientInfo?: { name: string; version: string };
}

export const CLIENT_INFO = { name: 'flowgate-e2e', version: '9.9.9' };

/** The JSON-RPC error code a client surfaced as a thrown error, or `null` when the error is not a protocol error. */
export function protocolErrorCode(err: unknown): number | null {
  if (err instanceof V2ProtocolError) return err.code;
  if (err instanceof V1McpError) return err.code;
  return null;
}

async function connectV2(url: string, options: ConnectOptions): Promise<McpSession> {
  const transport = new V2Transport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${options.token}`, ...options.headers } },
  });
  const client = new V2Client(options.clientInfo ?? CLIENT_INFO, {
    capabilities: {},
    ...(options.autoNegotiation ? { versionNegotiation: { mode: 'auto' as const } } : {}),
  });
  await client.connect(transport);
  return {
    flavour: 'sdk-v2',
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    serverCapabilities: () => client.getServerCapabilities() as Record<string, unknown> | undefined,
    listTools: async (params) => (await client.listTools(params)).tools,
    callTool: async (name, args, meta) =>
      (await client.callTool({
        name,
        ...(args ? { arguments: args } : {}),
        ...(meta ? { _meta: meta } : {}),
      })) as ToolResult,
    listResources: async () => (await client.listResources()).resources,
    readResource: async (uri) => (await client.readResource({ uri })).contents as ReadContents[],
    listResourceTemplates: async () => (await client.listResourceTemplates()).resourceTemplates,
    listPrompts: async () => (await client.listPrompts()).prompts,
    getPrompt: async (name, args) => await client.getPrompt({ name, arguments: args }),
    close: () => client.close(),
  };
}

async function connectV1(url: string, options: ConnectOptions): Promise<McpSession> {
  const transport = new V1Transport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${options.token}`, ...options.headers } },
  });
  const client = new V1Client(options.clientInfo ?? CLIENT_INFO, { capabilities: {} });
  await client.connect(transport);
  return {
    flavour: 'sdk-v1',
    protocolVersion: () => transport.protocolVersion,
    serverCapabilities: () => client.getServerCapabilities() as Record<string, unknown> | undefined,
    listTools: async (params) => (await client.listTools(params)).tools,
    callTool: async (name, args, meta) =>
      (await client.callTool({
        name,
        ...(args ? { arguments: args } : {}),
        ...(meta ? { _meta: meta } : {}),
      })) as ToolResult,
    listResources: async () => (await client.listResources()).resources,
    readResource: async (uri) => (await client.readResource({ uri })).contents as ReadContents[],
    listResourceTemplates: async () => (await client.listResourceTemplates()).resourceTemplates,
    listPrompts: async () => (await client.listPrompts()).prompts,
    getPrompt: async (name, args) =>
      (await client.getPrompt({ name, arguments: args })) as Awaited<ReturnType<McpSession['getPrompt']>>,
    close: () => client.close(),
  };
}

export const CLIENT_FLAVOURS: readonly ClientFlavour[] = ['sdk-v2', 'sdk-v1'];

export function connectClient(
  flavour: ClientFlavour,
  url: string,
  options: ConnectOptions,
): Promise<McpSession> {
  return flavour === 'sdk-v2' ? connectV2(url, options) : connectV1(url, options);
}
