import { afterEach, describe, expect, it } from 'vitest';
import { type RunOutcome, runBody } from '../interpreter.js';
import type { RunLimits } from '../limits.js';
import type { JournalEntry, StepEvent } from '../ports.js';
import { memoryKv, modelOf, startServer, type TestServer } from '../testing.js';
import type { ResolvedConnection } from './common.js';
import { createStepRunner } from './index.js';
import type { McpConnectOptions, McpConnector, RemoteToolResult } from './mcp-port.js';

const TOKEN = 'mcp-secret-token-0123456789';
const REQUIRES = ':requires [{:slot :docs :type :mcp-server}]';

const open: TestServer[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/**
 * A connector that speaks through the fetch it is given, one request per operation (open, call, close), to a loopback
 * server: enough to see the guarded fetch at work without the protocol.
 */
function connector(reply: (name: string, args: unknown) => RemoteToolResult) {
  const seen: { options: McpConnectOptions; calls: { name: string; args: unknown }[]; closed: number }[] = [];
  const connect: McpConnector = async (options) => {
    const record = { options, calls: [] as { name: string; args: unknown }[], closed: 0 };
    seen.push(record);
    const post = (body: unknown) =>
      options.fetch(options.url, {
        method: 'POST',
        headers: { ...options.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: options.signal,
      });
    await post({ method: 'initialize' });
    return {
      server: { protocolVersion: '2025-06-18', name: 'fake' },
      listTools: async () => [],
      callTool: async (name, args) => {
        record.calls.push({ name, args });
        await post({ method: 'tools/call', name });
        return reply(name, args);
      },
      close: async () => {
        record.closed++;
        await options.fetch(options.url, { method: 'DELETE', headers: options.headers });
      },
    };
  };
  return { connect, seen };
}

async function mcpRun(
  step: string,
  options: {
    connect?: McpConnector;
    limits?: Partial<RunLimits>;
    allowPrivateNetwork?: boolean;
    connection?: Partial<ResolvedConnection>;
  },
) {
  const server = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  open.push(server);
  const events: StepEvent[] = [];
  const journal = new Map<string, JournalEntry>();
  const outcome: RunOutcome = await runBody(
    modelOf(step, REQUIRES),
    {},
    {
      steps: createStepRunner({
        connections: {
          resolve: async (slot, purpose) => {
            expect([slot, purpose]).toEqual(['docs', 'mcp']);
            return {
              baseUrl: `${server.url}/mcp`,
              headers: { authorization: `Bearer ${TOKEN}`, 'x-tenant': 'acme' },
              knownSecrets: [TOKEN],
              ...options.connection,
            };
          },
        },
        kv: memoryKv(),
        allowPrivateNetwork: options.allowPrivateNetwork ?? true,
        ...(options.connect ? { mcp: options.connect } : {}),
      }),
      onEvent: (e) => {
        events.push(e);
      },
      record: (id, entry) => {
        journal.set(id, entry);
      },
      limits: options.limits ?? {},
    },
  );
  return { outcome, events, journal, server };
}

const text = (t: string): RemoteToolResult => ({ content: [{ type: 'text', text: t }], isError: false });

describe(':mcp steps', () => {
  it('calls the tool through the bound connection and returns content, structured content and is-error', async () => {
    const fake = connector(() => ({
      content: [{ type: 'text', text: '3 hits' }],
      structuredContent: { hits: [{ id: 1 }] },
      isError: false,
    }));
    const { outcome, server, journal } = await mcpRun(
      '(flow/step :mcp :search {:connection :docs :tool "search" :arguments {:query "refunds" :limit 3}})',
      { connect: fake.connect },
    );
    expect(outcome).toEqual({
      status: 'completed',
      result: expect.objectContaining({
        json: {
          content: [{ type: 'text', text: '3 hits' }],
          structured: { hits: [{ id: 1 }] },
          'is-error': false,
        },
      }),
      usage: { steps: 1, httpCalls: 3, llmTokens: 0 },
    });
    expect(fake.seen).toHaveLength(1);
    expect(fake.seen[0]?.options.url.href).toBe(`${server.url}/mcp`);
    expect(fake.seen[0]?.options.headers).toEqual({ authorization: `Bearer ${TOKEN}`, 'x-tenant': 'acme' });
    expect(fake.seen[0]?.options.timeoutMs).toBe(20_000);
    expect(fake.seen[0]?.calls).toEqual([{ name: 'search', args: { query: 'refunds', limit: 3 } }]);
    expect(fake.seen[0]?.closed).toBe(1);
    expect(server.requests.map((r) => [r.method, r.headers.authorization, r.headers['x-tenant']])).toEqual([
      ['POST', `Bearer ${TOKEN}`, 'acme'],
      ['POST', `Bearer ${TOKEN}`, 'acme'],
      ['DELETE', `Bearer ${TOKEN}`, 'acme'],
    ]);
    expect(journal.get('search')?.status).toBe('completed');
  });

  it('fails on a remote tool error with the bounded, redacted remote text, or returns it with :on-error :return', async () => {
    const failing = connector(() => ({
      content: [{ type: 'text', text: `bad token ${TOKEN} ${'x'.repeat(600)}` }],
      isError: true,
    }));
    const { outcome, events } = await mcpRun('(flow/step :mcp :call {:connection :docs :tool "search"})', {
      connect: failing.connect,
    });
    expect(outcome.status).toBe('failed');
    const error = outcome.status === 'failed' ? outcome.error : undefined;
    expect(error?.code).toBe('mcp_tool_error');
    expect(error?.stepId).toBe('call');
    expect(error?.message).toBe(`tool "search" reported an error: bad token [redacted] ${'x'.repeat(462)}…`);
    expect(JSON.stringify(events)).not.toContain(TOKEN);

    const returning = connector(() => ({ content: [{ type: 'text', text: 'nope' }], isError: true }));
    const returned = await mcpRun(
      '(flow/step :mcp :call {:connection :docs :tool "search" :on-error :return})',
      { connect: returning.connect },
    );
    expect(returned.outcome).toMatchObject({
      status: 'completed',
      result: { json: { content: [{ type: 'text', text: 'nope' }], structured: null, 'is-error': true } },
    });
  });

  it('counts every request against the run’s HTTP-call limit', async () => {
    const fake = connector(() => text('ok'));
    const { outcome, server } = await mcpRun('(flow/step :mcp :call {:connection :docs :tool "search"})', {
      connect: fake.connect,
      limits: { maxHttpCalls: 1 },
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'http_call_limit_exceeded', stepId: 'call' },
      usage: { httpCalls: 1 },
    });
    expect(server.requests).toHaveLength(1);
    expect(fake.seen[0]?.calls).toEqual([{ name: 'search', args: {} }]);
  });

  it('refuses a private endpoint unless the deployment allows it, whatever the client makes of the error', async () => {
    // A client that hides the cause: the step still reports the refused address.
    const hiding: McpConnector = async (options) => {
      try {
        await options.fetch(options.url, { method: 'POST', body: '{}' });
      } catch {
        throw new Error('connection failed');
      }
      throw new Error('unreachable');
    };
    const { outcome, server } = await mcpRun('(flow/step :mcp :call {:connection :docs :tool "search"})', {
      connect: hiding,
      allowPrivateNetwork: false,
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'network_address_refused', stepId: 'call' },
      usage: { httpCalls: 0 },
    });
    expect(server.requests).toHaveLength(0);
  });

  it('reports a protocol failure as mcp_request_failed, and a missing connector as connection_unavailable', async () => {
    const broken: McpConnector = async () => {
      throw new Error('the server speaks no known protocol version');
    };
    const failed = await mcpRun('(flow/step :mcp :call {:connection :docs :tool "search"})', {
      connect: broken,
    });
    expect(failed.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'mcp_request_failed',
        message:
          'the MCP server bound to :docs could not be reached: the server speaks no known protocol version',
      },
    });
    const none = await mcpRun('(flow/step :mcp :call {:connection :docs :tool "search"})', {});
    expect(none.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'connection_unavailable',
        message: 'this deployment has no MCP client, so remote MCP servers cannot be called',
      },
    });
  });
});
