/**
 * What a run's steps reach, built for one run in its own workspace: the connections bound to the flow's slots (for an
 * installation, the installation's bindings to the installing workspace's connections) with their secrets decrypted
 * here and nowhere else, and the workspace's key-value store.
 */
import { QuotaExceeded, quotaPeriod } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import type {
  ConnectionResolver,
  JsonValue,
  KvStore,
  LlmQuota,
  ResolvedConnection,
  RunErrorCode,
} from '@flowgate/run-engine';
import { RunError } from '@flowgate/run-engine';
import { authHeaders, fixedHeaders, type SecretBox } from '@flowgate/secrets';

type RunRow = repos.RunRow;

/** The slot → connection id map a run uses. */
export async function slotBindingsOf(db: Database, run: RunRow): Promise<Record<string, string>> {
  if (run.installationId !== null) {
    const inst = await repos.getInstallation(db, run.workspaceId, run.installationId);
    return inst ? { ...inst.slotBindings } : {};
  }
  return repos.getFlowBindingsById(db, run.workspaceId, run.flowId, run.target);
}

export interface RunConnections {
  resolver: ConnectionResolver;
  /** Every secret of every bound connection: redacted from everything the run lets out. */
  knownSecrets: string[];
}

/**
 * Resolves every bound connection once, up front, so their secrets are known before the first step (and redacted
 * from every event and result, including ones a step echoes back).
 */
export async function runConnections(db: Database, box: SecretBox, run: RunRow): Promise<RunConnections> {
  const bindings = await slotBindingsOf(db, run);
  const resolved = new Map<string, ResolvedConnection>();
  const problems = new Map<string, string>();
  // A slot whose connection an admin disabled fails with its own code, so the cause is plain from the run.
  const disabled = new Set<string>();
  const knownSecrets: string[] = [];
  /** Slots bound to `mcp-server` connections: handed out for MCP calls only, and MCP calls reach nothing else. */
  const mcpSlots = new Set<string>();
  for (const [slot, connectionId] of Object.entries(bindings)) {
    const row = await repos.getConnection(db, run.workspaceId, connectionId);
    if (!row) {
      problems.set(slot, `the connection bound to :${slot} no longer exists`);
      continue;
    }
    if (row.status === 'disabled') {
      problems.set(slot, `the connection bound to :${slot} is disabled`);
      disabled.add(slot);
      continue;
    }
    const secret = row.secretCiphertext ? box.decrypt(row.secretCiphertext, run.workspaceId) : null;
    if (secret) knownSecrets.push(secret);
    // A webhook whose path is its token is stored whole as a `secret` connection: the secret is the base URL,
    // so the URL is never shown to readers and is redacted from the run like any secret.
    if (row.type === 'secret' && secret && /^https?:\/\//i.test(secret)) {
      resolved.set(slot, { baseUrl: secret, headers: {}, knownSecrets: [secret] });
      continue;
    }
    if (!row.baseUrl) {
      problems.set(slot, `the connection bound to :${slot} has no base URL`);
      continue;
    }
    if (row.type === 'mcp-server') mcpSlots.add(slot);
    resolved.set(slot, {
      baseUrl: row.baseUrl,
      // An MCP server's fixed headers (e.g. a tenant) go with its credentials, to its endpoint only.
      headers:
        row.type === 'mcp-server'
          ? { ...fixedHeaders(row.config), ...authHeaders(row, secret) }
          : authHeaders(row, secret),
      knownSecrets: secret ? [secret] : [],
      ...(row.config.model ? { defaultModel: row.config.model } : {}),
    });
  }
  return {
    knownSecrets,
    resolver: {
      async resolve(slot, purpose) {
        const connection = resolved.get(slot);
        if (connection && (purpose === 'mcp') !== mcpSlots.has(slot)) {
          throw new RunError(
            'connection_unavailable',
            purpose === 'mcp'
              ? `the connection bound to :${slot} is not an MCP server`
              : `the connection bound to :${slot} is an MCP server; call it with an :mcp step`,
          );
        }
        if (connection) return connection;
        const code: RunErrorCode = disabled.has(slot) ? 'connection_disabled' : 'connection_unavailable';
        throw new RunError(code, problems.get(slot) ?? `no connection is bound to :${slot} for this run`);
      },
    },
  };
}

/** `:kv` on the run's workspace. */
export function workspaceKv(db: Database, workspaceId: string): KvStore {
  return {
    async get(key) {
      const hit = await repos.kvGet(db, workspaceId, key);
      return hit === null ? undefined : (hit.value as JsonValue);
    },
    async put(key, value, ttlSeconds) {
      const stored = await repos.kvPut(db, workspaceId, key, value, ttlSeconds);
      if (!stored) {
        throw new RunError(
          'step_failed',
          `the workspace's key-value store is full (${repos.MAX_KV_ENTRIES_PER_WORKSPACE} entries)`,
        );
      }
    },
    async delete(key) {
      await repos.kvDelete(db, workspaceId, key);
    },
  };
}

/**
 * The workspace's `llmTokensPerMonth` quota over its counter: a step checks it before it starts, and while a quota
 * was found at the check, each completed call adds its tokens (counted only while a quota is set, like every quota).
 */
export function workspaceLlmQuota(
  db: Database,
  workspaceId: string,
  now: () => Date = () => new Date(),
): LlmQuota {
  let limited = false;
  return {
    async check() {
      const at = now();
      const standing = await repos.quotaStanding(
        db,
        workspaceId,
        'llmTokensPerMonth',
        quotaPeriod('llmTokensPerMonth', at),
      );
      limited = standing !== null;
      if (standing && standing.used >= standing.limit)
        throw new RunError(
          'quota_exceeded',
          new QuotaExceeded('llmTokensPerMonth', standing.limit, at).message,
        );
    },
    async add(tokens) {
      if (!limited) return;
      await repos.addQuotaUse(
        db,
        workspaceId,
        'llmTokensPerMonth',
        quotaPeriod('llmTokensPerMonth', now()),
        tokens,
      );
    },
  };
}
