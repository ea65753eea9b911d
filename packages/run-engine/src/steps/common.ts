import { isSecretKey } from '@flowgate/secrets';
import type { z } from 'zod';
import { isRunError, RunError } from '../errors.js';
import type { StepContext } from '../ports.js';
import type { JsonValue } from '../values.js';
import type { McpConnector } from './mcp-port.js';
import type { TransportOptions } from './transport.js';

/** A bound connection as a step needs it; the caller resolves the flow's slot binding and decrypts the secret. */
export interface ResolvedConnection {
  /** e.g. `https://api.example.com/v1`; step paths are appended to it. */
  baseUrl: string;
  /** Authentication headers (e.g. `{authorization: "Bearer …"}`), sent only to the base URL's origin. */
  headers: Record<string, string>;
  /** Every secret value of the connection, redacted wherever it could appear. */
  knownSecrets: readonly string[];
  /** Model used by :llm steps without :model. */
  defaultModel?: string;
}

export type ConnectionPurpose = 'http' | 'llm' | 'mcp';

/** Resolves a flow's `:requires` slot to its bound connection in the run's workspace. */
export interface ConnectionResolver {
  /**
   * `mcp`: an `mcp-server` connection, with `baseUrl` its Streamable HTTP endpoint and `headers` its auth headers plus
   * its fixed headers.
   */
  resolve(slot: string, purpose: ConnectionPurpose): Promise<ResolvedConnection>;
}

/**
 * The workspace's key-value store (packages/run-engine/README.md); the caller scopes it to the run's workspace. Values
 * are plain JSON.
 */
export interface KvStore {
  get(key: string): Promise<JsonValue | undefined>;
  put(key: string, value: JsonValue, ttlSeconds?: number): Promise<void>;
  delete(key: string): Promise<void>;
}

export interface StepPorts {
  connections: ConnectionResolver;
  kv: KvStore;
  transport: TransportOptions;
  llm: { maxAttempts: number; backoffMs: number };
  /** Added to outbound :http requests under any header the flow or connection sets. */
  outboundHeaders?: () => Record<string, string>;
  /** Opens sessions with remote MCP servers; without it :mcp steps and :llm :tools fail. */
  mcp?: McpConnector;
  /** The workspace's LLM token quota; without it only the run's own limit bounds tokens. */
  llmQuota?: LlmQuota;
}

/**
 * The workspace's monthly LLM token quota as steps see it: an :llm step asks before it starts, and every completed
 * call adds what it used (a call's tokens are known only after it, so the last call of a month may pass the limit).
 */
export interface LlmQuota {
  /** Throws a `quota_exceeded` RunError when the month's tokens are used up. */
  check(): Promise<void>;
  /** Adds the tokens of a completed call. */
  add(tokens: number): Promise<void>;
}

/** Validates a step config at the edge; the first problem becomes a `step_config_invalid` error. */
export function parseConfig<S extends z.ZodType>(schema: S, config: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(config);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `:${issue.path.map(String).join(' :')}` : 'the config';
  throw new RunError('step_config_invalid', `${what} step: ${where}: ${issue?.message ?? 'invalid'}`);
}

export async function connectionFor(
  ports: StepPorts,
  slot: string,
  purpose: ConnectionPurpose,
  ctx: StepContext,
): Promise<ResolvedConnection> {
  let connection: ResolvedConnection;
  try {
    connection = await ports.connections.resolve(slot, purpose);
  } catch (error) {
    if (isRunError(error)) throw error;
    throw new RunError('connection_unavailable', `the connection bound to :${slot} is not available`);
  }
  // Credential header values count as secrets even if the resolver did not list them (e.g. "Bearer …" as a whole).
  const credentialValues = Object.entries(connection.headers)
    .filter(([name]) => isSecretKey(name))
    .map(([, value]) => value);
  ctx.addKnownSecrets([...connection.knownSecrets, ...credentialValues]);
  return connection;
}
