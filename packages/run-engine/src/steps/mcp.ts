import { deadlineSignal } from '@flowgate/core';
import { STEP_LIMITS } from '@flowgate/flows';
import { z } from 'zod';
import { isRunError, RunError } from '../errors.js';
import type { StepContext } from '../ports.js';
import { fromJson, type JsonValue, type Value, VMap } from '../values.js';
import { connectionFor, parseConfig, type StepPorts } from './common.js';
import { guardedFetch } from './fetch.js';
import type { McpSession, RemoteToolResult } from './mcp-port.js';

const L = STEP_LIMITS.mcp;

export const mcpConfigSchema = z.strictObject({
  connection: z.string(),
  tool: z.string().min(1).max(L.toolNameLengthMax),
  arguments: z.record(z.string(), z.unknown()).default({}),
  'timeout-ms': z.number().int().min(1).max(L.timeoutMsMax).default(L.timeoutMsDefault),
  'on-error': z.enum(['fail', 'return']).default('fail'),
});

/** At most `max` characters, marked when cut. */
export function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** The first run error in an error's cause chain (what our guarded fetch threw, wrapped by the MCP client). */
function runErrorIn(error: unknown): RunError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (isRunError(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * One remote MCP server as a step reaches it: the slot's `mcp-server` connection, a session opened through the
 * connector on first use, and every request through the guarded fetch (address policy, response cap, each request
 * counted against the run's HTTP-call limit). `failure` turns whatever the client threw into a run error: our own
 * (limits, refused address, oversized response) as is, else a bounded `mcp_*` error.
 */
export class RemoteServer {
  private session: Promise<McpSession> | undefined;
  private fetchFailure: RunError | undefined;

  constructor(
    private readonly ports: StepPorts,
    private readonly ctx: StepContext,
    readonly slot: string,
    /** Per-request timeout handed to the connector. */
    private readonly timeoutMs: number,
    /** Aborts the whole session (the step's signal, plus a timeout for an :mcp step). */
    private readonly signal: AbortSignal,
  ) {}

  open(): Promise<McpSession> {
    this.session ??= this.connect();
    return this.session;
  }

  private async connect(): Promise<McpSession> {
    const connector = this.ports.mcp;
    if (!connector) {
      throw new RunError(
        'connection_unavailable',
        'this deployment has no MCP client, so remote MCP servers cannot be called',
      );
    }
    const connection = await connectionFor(this.ports, this.slot, 'mcp', this.ctx);
    let url: URL;
    try {
      url = new URL(connection.baseUrl);
    } catch {
      throw new RunError('step_config_invalid', `the MCP endpoint of :${this.slot} is not a valid URL`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
      throw new RunError(
        'step_config_invalid',
        `the MCP endpoint of :${this.slot} must be an http or https URL without credentials`,
      );
    }
    const guarded = guardedFetch({
      transport: this.ports.transport,
      maxResponseBytes: L.responseBytesMax,
      beforeSend: () => this.ctx.usage.countHttpCall(),
      // Fixed headers go only where the credentials go: the endpoint's own origin.
      credentialHeaders: Object.keys(connection.headers),
      signal: this.signal,
    });
    const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      try {
        return await guarded(input, init);
      } catch (error) {
        if (isRunError(error)) this.fetchFailure = error;
        throw error;
      }
    };
    try {
      return await connector({
        url,
        headers: { ...connection.headers },
        fetch,
        signal: this.signal,
        timeoutMs: this.timeoutMs,
      });
    } catch (error) {
      throw this.failure(error, `the MCP server bound to :${this.slot} could not be reached`);
    }
  }

  failure(error: unknown, what: string): RunError {
    const own = runErrorIn(error) ?? this.fetchFailure;
    if (own) return own;
    if (this.ctx.signal.aborted) return new RunError('mcp_request_failed', 'the call was stopped');
    if (this.signal.aborted) return new RunError('mcp_timeout', `${what}: the server did not answer in time`);
    const message = error instanceof Error ? error.message : String(error);
    return new RunError('mcp_request_failed', `${what}: ${bounded(message, L.errorCharsMax)}`);
  }

  async callTool(name: string, args: { [key: string]: JsonValue }): Promise<RemoteToolResult> {
    const session = await this.open();
    try {
      return await session.callTool(name, args);
    } catch (error) {
      throw this.failure(error, `the call of tool "${name}" on :${this.slot} failed`);
    }
  }

  /** Closes the session if one was opened; a failure to close changes nothing for the step. */
  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    try {
      await (await session).close();
    } catch {
      // the session or its closing request failed: nothing is left to release on our side
    }
  }
}

/** The text blocks of a tool result, joined: what an error or a model sees of it. */
export function resultText(result: RemoteToolResult): string {
  const texts: string[] = [];
  for (const block of result.content) {
    if (block && typeof block === 'object' && !Array.isArray(block) && block.type === 'text') {
      const text = block.text;
      if (typeof text === 'string') texts.push(text);
    }
  }
  return texts.join('\n');
}

export function toolResultValue(result: RemoteToolResult, ctx: StepContext): Value {
  return VMap.of({
    content: fromJson(result.content, ctx.meter),
    structured: result.structuredContent === undefined ? null : fromJson(result.structuredContent, ctx.meter),
    'is-error': result.isError,
  });
}

/** Runs an :mcp step: one call of one remote tool. */
export async function runMcpStep(rawConfig: unknown, ctx: StepContext, ports: StepPorts): Promise<Value> {
  const config = parseConfig(mcpConfigSchema, rawConfig, ':mcp');
  const timeoutMs = config['timeout-ms'];
  const stepDeadline = deadlineSignal(ctx.signal, timeoutMs);
  const server = new RemoteServer(ports, ctx, config.connection, timeoutMs, stepDeadline.signal);
  try {
    const result = await server.callTool(config.tool, config.arguments as { [key: string]: JsonValue });
    if (result.isError && config['on-error'] === 'fail') {
      const text = resultText(result);
      throw new RunError(
        'mcp_tool_error',
        `tool "${config.tool}" reported an error${text ? `: ${bounded(text, L.errorCharsMax)}` : ''}`,
      );
    }
    return toolResultValue(result, ctx);
  } finally {
    await server.close();
    stepDeadline.clear();
  }
}
