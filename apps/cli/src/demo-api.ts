import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDemoMcp, type DemoMcp } from './demo-mcp.js';

/**
 * A stand-in for the outside systems the example flows call (company data, sales figures, helpdesk, mailer,
 * fulfilment, an OpenAI-compatible LLM, a documentation MCP server), served on loopback by `flowgate dev` so the
 * demo runs without internet or real accounts. Answers are small, deterministic and derived from the request.
 */

export interface DemoApi {
  /**
   * `http://127.0.0.1:<port>`; a slot's connection points at `<url>/<slot>` (the LLM at `<url>/llm/v1`, an MCP
   * server at `<url>/<slot>/mcp`).
   */
  url: string;
  close(): Promise<void>;
}

/** The default model of the demo LLM connection (the stand-in answers any name, and lists this one). */
export const DEMO_MODEL = 'demo-model';

/** Where a demo connection of a slot points, below the stand-in's URL. */
export function demoSlotPath(slot: string, type: string): string {
  if (type === 'llm-provider') return '/llm/v1';
  return type === 'mcp-server' ? `/${slot}/mcp` : `/${slot}`;
}

const MAX_BODY = 64 * 1024;
const words = (text: string) => text.split(/\s+/).filter(Boolean);

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return {};
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function company(domain: string) {
  const name = domain.split('.')[0] ?? domain;
  return {
    name: name.charAt(0).toUpperCase() + name.slice(1),
    domain,
    industry: 'Software',
    employee_count: 120 + (domain.length % 7) * 40,
    location: { country: domain.endsWith('.de') ? 'DE' : 'US' },
  };
}

interface DemoTool {
  function?: {
    name?: unknown;
    parameters?: { properties?: Record<string, { type?: unknown }>; required?: unknown };
  };
}

/**
 * With tools offered and no tool result yet, the demo model calls the first tool once, filling each required string
 * argument with the prompt's last word; once results are in, it answers from them.
 */
function toolTurn(tools: DemoTool[], prompt: string) {
  const fn = tools[0]?.function;
  const name = typeof fn?.name === 'string' ? fn.name : 'unknown';
  const required = Array.isArray(fn?.parameters?.required) ? (fn.parameters.required as unknown[]) : [];
  const topic = (words(prompt).at(-1) ?? 'flowgate').toLowerCase().replace(/[^a-z0-9-]/g, '') || 'flowgate';
  const args: Record<string, unknown> = {};
  for (const key of required) {
    if (typeof key === 'string' && fn?.parameters?.properties?.[key]?.type === 'string') args[key] = topic;
  }
  return {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call-demo-1', type: 'function', function: { name, arguments: JSON.stringify(args) } },
    ],
  };
}

/**
 * An OpenAI-compatible chat completion: a JSON triage when asked for JSON, a tool call when offered tools (then an
 * answer from the tool results), else the prompt's first words.
 */
function completion(body: Record<string, unknown>) {
  const messages = Array.isArray(body.messages)
    ? (body.messages as Array<{ role?: unknown; content?: unknown }>)
    : [];
  const prompt = String(messages.findLast((m) => m.role === 'user')?.content ?? '');
  const system = String(messages.find((m) => m.role === 'system')?.content ?? '');
  const asJson = (body.response_format as { type?: unknown } | undefined)?.type === 'json_object';
  const tools = Array.isArray(body.tools) ? (body.tools as DemoTool[]) : [];
  const toolResults = messages.filter((m) => m.role === 'tool').map((m) => String(m.content ?? ''));
  let content: string;
  if (tools.length > 0 && toolResults.length === 0) {
    const message = toolTurn(tools, prompt);
    return {
      id: 'chatcmpl-demo',
      object: 'chat.completion',
      model: typeof body.model === 'string' ? body.model : 'demo',
      choices: [{ index: 0, message, finish_reason: 'tool_calls' }],
      usage: {
        prompt_tokens: words(prompt).length,
        completion_tokens: 8,
        total_tokens: words(prompt).length + 8,
      },
    };
  }
  if (toolResults.length > 0) {
    content = `(demo model) From ${toolResults.length} tool result${toolResults.length === 1 ? '' : 's'}: ${words(toolResults.join(' ')).slice(0, 30).join(' ')}`;
  } else if (asJson) {
    const lower = prompt.toLowerCase();
    const category = /invoice|charge|refund|billing/.test(lower)
      ? 'billing'
      : /error|crash|bug|broken/.test(lower)
        ? 'bug'
        : 'question';
    const priority = /urgent|down|outage|asap/.test(lower) ? 'urgent' : 'normal';
    content = JSON.stringify({ category, priority, summary: words(prompt).slice(0, 12).join(' ') });
  } else {
    const limit = Number(/at most (\d+) words/.exec(system)?.[1] ?? 40);
    content = `(demo model) ${words(prompt).slice(0, Math.min(limit, 40)).join(' ')}`;
  }
  const promptTokens = words(system).length + words(prompt).length;
  const completionTokens = words(content).length;
  return {
    id: 'chatcmpl-demo',
    object: 'chat.completion',
    model: typeof body.model === 'string' ? body.model : 'demo',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

let sequence = 0;

/** Hands a request to the stand-in MCP server (a fetch-shaped handler) and streams its answer back. */
async function answerMcp(mcp: DemoMcp, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return send(res, 413, { error: 'too large' });
    chunks.push(chunk);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const response = await mcp.fetch(
    new Request(`http://127.0.0.1${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
    }),
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

async function answer(req: IncomingMessage, res: ServerResponse, mcp: DemoMcp): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://demo');
  if (/^\/[a-z][a-z0-9-]*\/mcp$/.test(url.pathname)) return answerMcp(mcp, req, res);
  const route = `${req.method} ${url.pathname}`;
  switch (route) {
    case 'GET /crm/companies':
      return send(res, 200, company(url.searchParams.get('domain') ?? 'example.com'));
    case 'GET /sales/reports/daily':
      return send(res, 200, {
        date: url.searchParams.get('date'),
        rows: [
          { region: 'North', orders: 42, revenue: 5120 },
          { region: 'South', orders: 31, revenue: 3870 },
        ],
      });
    case 'POST /helpdesk/tickets':
    case 'POST /mailer/messages':
    case 'POST /fulfilment/shipments':
      await readJson(req);
      sequence += 1;
      return send(res, 201, { id: `demo-${sequence}`, status: 'accepted' });
    // The model list is where a connection check probes an llm-provider: the demo LLM must pass its own check.
    case 'GET /llm/v1/models':
      return send(res, 200, {
        object: 'list',
        data: [{ id: DEMO_MODEL, object: 'model', created: 0, owned_by: 'flowgate-demo' }],
      });
    case 'POST /llm/v1/chat/completions':
      return send(res, 200, completion(await readJson(req)));
    default:
      // A demo connection's base URL (`/<slot>`) answers, so its health check reads plain "healthy".
      if (req.method === 'GET' && /^\/[a-z][a-z0-9-]*$/.test(url.pathname))
        return send(res, 200, { service: url.pathname.slice(1), demo: true });
      return send(res, 404, { error: 'not a demo route' });
  }
}

export async function startDemoApi(): Promise<DemoApi> {
  const mcp = createDemoMcp();
  const server: Server = createServer((req, res) => {
    answer(req, res, mcp).catch(() => send(res, 500, { error: 'demo api failure' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await mcp.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
