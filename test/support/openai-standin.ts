import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible `/v1/chat/completions` on 127.0.0.1 whose answers a test scripts: each request is recorded
 * whole (messages, tools, headers) and answered by `script`, which sees the request and how many came before it.
 */

export interface ChatRequest {
  authorization: string | null;
  body: {
    model?: string;
    messages: Array<{
      role: string;
      content?: string | null;
      tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
      tool_call_id?: string;
    }>;
    tools?: Array<{
      type: string;
      function: { name: string; description?: string; parameters?: Record<string, unknown> };
    }>;
    [key: string]: unknown;
  };
}

/** What the model answers: plain text, or calls of tools by name with their arguments. */
export type ScriptedReply =
  | { text: string }
  | { toolCalls: Array<{ name: string; arguments: Record<string, unknown> | string }> };

export interface OpenAiStandIn {
  /** The base URL of an `llm-provider` connection (`…/v1`). */
  baseUrl: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function completion(reply: ScriptedReply, round: number) {
  const message =
    'text' in reply
      ? { role: 'assistant', content: reply.text }
      : {
          role: 'assistant',
          content: null,
          tool_calls: reply.toolCalls.map((call, i) => ({
            id: `call_${round}_${i}`,
            type: 'function',
            function: {
              name: call.name,
              arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
            },
          })),
        };
  return {
    id: `chatcmpl-${round}`,
    object: 'chat.completion',
    model: 'stand-in',
    choices: [{ index: 0, message, finish_reason: 'text' in reply ? 'stop' : 'tool_calls' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

export async function startOpenAiStandIn(
  script: (request: ChatRequest, index: number) => ScriptedReply | Promise<ScriptedReply>,
): Promise<OpenAiStandIn> {
  const requests: ChatRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const text = await readBody(req);
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"not found"}');
        return;
      }
      const request: ChatRequest = {
        authorization: req.headers.authorization ?? null,
        body: JSON.parse(text) as ChatRequest['body'],
      };
      const index = requests.length;
      requests.push(request);
      const reply = await script(request, index);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(reply, index)));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
