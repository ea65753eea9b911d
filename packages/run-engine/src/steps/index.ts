import type { StepRunner } from '../ports.js';
import type { ConnectionResolver, KvStore, LlmQuota, StepPorts } from './common.js';
import { runHttpStep } from './http.js';
import { runKvStep } from './kv.js';
import { runLlmStep } from './llm.js';
import { runMcpStep } from './mcp.js';
import type { McpConnector } from './mcp-port.js';
import { isBlockedAddress, type Resolver, systemResolver } from './net.js';
import { runSleepStep } from './sleep.js';

export interface StepRunnerOptions {
  connections: ConnectionResolver;
  kv: KvStore;
  /** Lets steps reach loopback, private and link-local addresses: for development and tests only. */
  allowPrivateNetwork?: boolean;
  /** DNS resolution (every address of a name); the system resolver by default. */
  resolve?: Resolver;
  /** Retries of :llm calls on network errors, 429 and 5xx (attempts in total; default 2, backoff 1000 ms). */
  llm?: { maxAttempts?: number; backoffMs?: number };
  /** Headers added to every outbound :http request unless the flow sets them (trace context propagation). */
  outboundHeaders?: () => Record<string, string>;
  /**
   * Opens sessions with remote MCP servers (@flowgate/mcp-remote's connector in the worker). Without it :mcp steps
   * and :llm steps with :tools fail with `connection_unavailable`.
   */
  mcp?: McpConnector;
  /** The workspace's LLM token quota (the worker's, over the database). */
  llmQuota?: LlmQuota;
}

/** The executors of :http, :llm, :kv, :sleep and :mcp behind the `StepRunner` port. */
export function createStepRunner(options: StepRunnerOptions): StepRunner {
  const ports: StepPorts = {
    connections: options.connections,
    kv: options.kv,
    transport: {
      isBlocked: options.allowPrivateNetwork ? undefined : isBlockedAddress,
      resolve: options.resolve ?? systemResolver,
    },
    llm: { maxAttempts: options.llm?.maxAttempts ?? 2, backoffMs: options.llm?.backoffMs ?? 1000 },
    ...(options.outboundHeaders ? { outboundHeaders: options.outboundHeaders } : {}),
    ...(options.mcp ? { mcp: options.mcp } : {}),
    ...(options.llmQuota ? { llmQuota: options.llmQuota } : {}),
  };
  return async (request, ctx) => {
    switch (request.type) {
      case 'http':
        return { kind: 'result', value: await runHttpStep(request.config, ctx, ports) };
      case 'llm':
        return { kind: 'result', value: await runLlmStep(request.config, ctx, ports) };
      case 'kv':
        return { kind: 'result', value: await runKvStep(request.config, ctx, ports) };
      case 'sleep':
        return runSleepStep(request.config, ctx);
      case 'mcp':
        return { kind: 'result', value: await runMcpStep(request.config, ctx, ports) };
    }
  };
}
