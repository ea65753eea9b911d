import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CLIENT_INFO } from './clients.js';
import { STREAMABLE_ACCEPT } from './mcp.js';

/** What the subscriptions/listen tests share: the 2026-07-28 client, a sleeping flow, raw request envelopes. */

export const V2 = '2026-07-28';
export const TASKS_EXT = 'io.modelcontextprotocol/tasks';
export const SUB_META = 'io.modelcontextprotocol/subscriptionId';

/** A flow whose run sleeps `ms` between two steps: long enough to subscribe to it while it runs. */
export const NAP_FLOW = `{:slug :nap
 :invocations {:default {:inputs [{:name :ms :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "take_nap" :invocation :default}]}
 :flow (let [input (flow/input)
             a (flow/step :function :before {:code (fn [x] {:ms (:ms x)}) :input input})
             _ (flow/step :sleep :nap {:duration-ms (:ms a)})]
         (flow/step :function :after {:code (fn [x] {:slept (:ms x)}) :input a}))}`;

export async function v2Client(url: string, token: string): Promise<Client> {
  const client = new Client(CLIENT_INFO, { capabilities: {}, versionNegotiation: { mode: { pin: V2 } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** Starts a nap run (returns at once) and gives its id. */
export async function startNap(client: Client, ms: number): Promise<string> {
  const result = await client.callTool({
    name: 'call_flow_tool',
    arguments: { flow_slug: 'nap', tool_name: 'take_nap', input: { ms } },
  });
  return (result.structuredContent as { run: { runId: string } }).run.runId;
}

/** The `_meta` envelope a 2026-07-28 request carries, declaring the Tasks extension or not. */
export function envelope(declaresTasks: boolean) {
  return {
    'io.modelcontextprotocol/protocolVersion': V2,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    'io.modelcontextprotocol/clientCapabilities': declaresTasks ? { extensions: { [TASKS_EXT]: {} } } : {},
  };
}

/** Headers of a raw 2026-07-28 request (the method, and the tool's name for tools/call, in headers). */
export function modernHeaders(token: string, method: string, name?: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: STREAMABLE_ACCEPT,
    'mcp-protocol-version': V2,
    'mcp-method': method,
    ...(name ? { 'mcp-name': name } : {}),
  };
}

/** A JSON-RPC message read off a listen stream. */
export interface ListenMessage {
  id?: string | number;
  method?: string;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  result?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  error?: { code: number; message: string; data?: Record<string, unknown> };
}
