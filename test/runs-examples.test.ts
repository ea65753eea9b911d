import { isFinalRunStatus } from '@flowgate/core';
import { EXAMPLE_FLOWS } from '@flowgate/flows';
import { startTestMcpServer, type TestMcpServer } from '@flowgate/mcp-remote/testing';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import {
  getRun,
  installFlow,
  type Loopback,
  type ReceivedRequest,
  startLoopback,
  startRun,
  waitForRun,
} from './support/runs.js';

/**
 * Every example flow runs end to end on the real gateway: started through the admin API, queued, claimed and executed
 * by the in-process worker, its steps calling loopback stand-ins for the APIs it binds (a sales API, a company-data
 * API, an OpenAI-compatible provider, a helpdesk, a mailer, a fulfilment service). PGlite by default, Postgres with
 * DATABASE_URL.
 */

const WS = 'ws-examples';
const MODEL = 'fg-test-model';
/** One bearer secret per connection, so each request can be checked to carry its own connection's credential. */
const SECRETS = {
  crm: 'crm-secret-5b2f8e1c9d',
  llm: 'llm-secret-a41c7e02bb',
  helpdesk: 'helpdesk-secret-3e9d10f7',
  mailer: 'mailer-secret-77c2a9e0',
  fulfilment: 'fulfilment-secret-c0ffee12',
} as const;

const SALES_ROWS = [
  { region: 'EMEA', orders: 12, revenue: 3400 },
  { region: 'APAC', orders: 7, revenue: 2100 },
];

const TRIAGE_JSON = { category: 'billing', priority: 'urgent', summary: 'The customer was charged twice.' };
const SUMMARY = 'Flowgate runs flows durably.';

function llmAnswer(req: ReceivedRequest) {
  const body = req.body as {
    response_format?: { type: string };
    tools?: Array<{ function: { name: string } }>;
    messages: Array<{ role: string }>;
  };
  // answer-from-docs offers the docs server's read_page: call it once, then answer.
  if (body.tools && !body.messages.some((m) => m.role === 'tool')) {
    const call = {
      id: 'c1',
      type: 'function',
      function: { name: 'read_page', arguments: '{"topic":"runs"}' },
    };
    return {
      status: 200,
      json: {
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, tool_calls: [call] },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
      },
    };
  }
  const content = body.response_format?.type === 'json_object' ? JSON.stringify(TRIAGE_JSON) : SUMMARY;
  return {
    status: 200,
    json: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
    },
  };
}

function answer(req: ReceivedRequest) {
  const expected = `Bearer ${SECRETS[req.path.split('/')[1] as keyof typeof SECRETS]}`;
  if (!req.path.startsWith('/sales/') && req.authorization !== expected)
    return { status: 401, json: { error: 'bad credential' } };
  switch (`${req.method} ${req.path}`) {
    case 'GET /sales/reports/daily':
      return { status: 200, json: { date: req.query.date, rows: SALES_ROWS } };
    case 'GET /crm/companies':
      return req.query.domain === 'acme.test'
        ? {
            status: 200,
            json: {
              name: 'Acme Corp',
              domain: 'acme.test',
              industry: 'Manufacturing',
              employee_count: 420,
              location: { country: 'DE', city: 'Berlin' },
              internal_score: 0.93,
            },
          }
        : { status: 404, json: { error: 'no such company' } };
    case 'POST /llm/chat/completions':
      return llmAnswer(req);
    case 'POST /helpdesk/tickets':
      return { status: 201, json: { id: 'T-1001', status: 'open' } };
    case 'POST /mailer/messages':
      return { status: 202, json: { queued: true } };
    case 'POST /fulfilment/shipments':
      return { status: 201, json: { shipmentId: 'S-77', accepted: req.body } };
    default:
      return { status: 404, json: { error: `no route ${req.method} ${req.path}` } };
  }
}

let gw: TestGateway;
let api: Loopback;
/** The documentation MCP server answer-from-docs binds (the 2025 generation of the SDK). */
let docs: TestMcpServer;
const DOCS_SECRET = 'docs-secret-0d9e8f7a6b';

const requestsTo = (prefix: string) => api.received.filter((r) => r.path.startsWith(prefix));

beforeAll(async () => {
  api = await startLoopback(answer);
  const tool = (name: string, text: (args: Record<string, unknown>) => string) => ({
    name,
    description: name,
    inputSchema: { type: 'object', properties: { query: { type: 'string' }, topic: { type: 'string' } } },
    handler: (args: Record<string, unknown>) => ({
      content: [{ type: 'text', text: text(args) }],
      structuredContent: { pages: [{ id: 'runs', title: 'Runs' }] },
    }),
  });
  docs = await startTestMcpServer({
    generation: '2025',
    tools: [
      tool('search_docs', (a) => `found runs for ${String(a.query)}`),
      tool('read_page', (a) => `page ${String(a.topic)}: runs resume from their journal`),
    ],
  });
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true', FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true' });
  await gw.createWorkspace(WS);
  const bearer = (name: keyof typeof SECRETS, type = 'http-api', extra: Record<string, unknown> = {}) =>
    gw.createConnection(WS, {
      name,
      type,
      baseUrl: `${api.url}/${name}`,
      auth: { type: 'bearer', secret: SECRETS[name] },
      ...extra,
    });
  const sales = await gw.createConnection(WS, {
    name: 'sales',
    type: 'http-api',
    baseUrl: `${api.url}/sales`,
    auth: { type: 'none' },
  });
  const crm = await bearer('crm');
  const llm = await bearer('llm', 'llm-provider', { model: MODEL });
  const helpdesk = await bearer('helpdesk');
  const mailer = await bearer('mailer');
  const fulfilment = await bearer('fulfilment');
  const docsConn = await gw.createConnection(WS, {
    name: 'docs',
    type: 'mcp-server',
    baseUrl: docs.url,
    auth: { type: 'bearer', secret: DOCS_SECRET },
  });
  const bindings: Record<string, Record<string, string>> = {
    'answer-from-docs': { docs: docsConn.connectionId, llm: llm.connectionId },
    'daily-report': { sales: sales.connectionId },
    'enrich-company': { crm: crm.connectionId },
    'summarize-text': { llm: llm.connectionId },
    'triage-ticket': { llm: llm.connectionId, helpdesk: helpdesk.connectionId },
    'trial-follow-up': { mailer: mailer.connectionId },
    'webhook-transform': { fulfilment: fulfilment.connectionId },
  };
  // Every example is covered: a new one fails here until it gets bindings and a test below.
  expect(Object.keys(EXAMPLE_FLOWS).sort()).toEqual(Object.keys(bindings).sort());
  for (const [slug, edn] of Object.entries(EXAMPLE_FLOWS))
    await installFlow(gw, WS, slug, edn, bindings[slug]);
});

afterAll(async () => {
  await gw?.close();
  await api?.close();
  await docs?.close();
});

describe('example flows run end to end through the queue and the in-process worker', () => {
  it('answer-from-docs: searches the MCP server, then the model reads a page through the allowlisted tool', async () => {
    const runId = await startRun(gw, WS, 'answer-from-docs', { question: 'Do runs survive restarts?' });
    const run = await waitForRun(gw, WS, runId);
    expect(run.status).toBe('completed');
    expect(run.result?.value).toEqual({
      answer: SUMMARY,
      pages: [{ id: 'runs', title: 'Runs' }],
      'pages-read': 1,
    });
    const calls = docs.requests.filter((r) => r.method === 'tools/call');
    expect(calls.map((c) => [c.toolName, c.arguments])).toEqual([
      ['search_docs', { query: 'Do runs survive restarts?' }],
      ['read_page', { topic: 'runs' }],
    ]);
    expect(new Set(docs.requests.map((r) => r.headers.authorization))).toEqual(
      new Set([`Bearer ${DOCS_SECRET}`]),
    );
    const lastChat = requestsTo('/llm/').at(-1)?.body as
      | { messages: Array<{ role: string; content: string }> }
      | undefined;
    const toolMessage = lastChat?.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toContain('page runs: runs resume from their journal');
  });

  it('daily-report: fetches the figures and renders them as HTML (a viewer envelope served as text/html)', async () => {
    const runId = await startRun(gw, WS, 'daily-report', { date: '2026-11-23' });
    const run = await waitForRun(gw, WS, runId);
    expect(run).toMatchObject({ status: 'completed', error: null, resultMimeType: 'text/html' });
    expect(run.result).toEqual({
      mimeType: 'text/html',
      value:
        '<html><body><h1>Sales for 2026-11-23</h1><table><tr><th>Region</th><th>Orders</th><th>Revenue</th></tr>' +
        '<tr><td>EMEA</td><td>12</td><td>3400</td></tr><tr><td>APAC</td><td>7</td><td>2100</td></tr>' +
        '</table><p>2 regions</p></body></html>',
    });
    expect(run.steps.map((s) => [s.stepId, s.type, s.status])).toEqual([
      ['figures', 'http', 'completed'],
      ['render', 'function', 'completed'],
    ]);
    expect(requestsTo('/sales/')).toEqual([
      {
        method: 'GET',
        path: '/sales/reports/daily',
        query: { date: '2026-11-23' },
        authorization: null,
        body: null,
      },
    ]);
  });

  it('enrich-company: looks the domain up with the connection credential and keeps the profile fields', async () => {
    const runId = await startRun(gw, WS, 'enrich-company', { domain: 'acme.test' });
    const run = await waitForRun(gw, WS, runId);
    expect(run.status).toBe('completed');
    expect(run.result).toEqual({
      mimeType: 'application/json',
      value: {
        found: true,
        name: 'Acme Corp',
        domain: 'acme.test',
        industry: 'Manufacturing',
        employees: 420,
        country: 'DE',
      },
    });
    const lookups = requestsTo('/crm/');
    expect(lookups.map((r) => [r.method, r.path, r.query, r.authorization])).toEqual([
      ['GET', '/crm/companies', { domain: 'acme.test' }, `Bearer ${SECRETS.crm}`],
    ]);
  });

  it('enrich-company: an unknown domain completes with found=false (a 404 is data, not a failure)', async () => {
    const run = await waitForRun(gw, WS, await startRun(gw, WS, 'enrich-company', { domain: 'nobody.test' }));
    expect(run.status).toBe('completed');
    expect(run.result?.value).toEqual({
      found: false,
      name: null,
      domain: null,
      industry: null,
      employees: null,
      country: null,
    });
  });

  it('summarize-text: asks the bound provider with its default model and returns the summary', async () => {
    const before = requestsTo('/llm/').length;
    const text = 'Flowgate is a gateway. It runs flows. Runs survive restarts.';
    const runId = await startRun(gw, WS, 'summarize-text', { text, style: 'paragraph', 'max-words': 20 });
    const run = await waitForRun(gw, WS, runId);
    expect(run.status).toBe('completed');
    expect(run.result).toEqual({
      mimeType: 'application/json',
      value: { summary: SUMMARY, style: 'paragraph' },
    });
    expect(run.usage).toEqual({ steps: 1, httpCalls: 1, llmTokens: 42 });
    const calls = requestsTo('/llm/').slice(before);
    expect(calls).toEqual([
      {
        method: 'POST',
        path: '/llm/chat/completions',
        query: {},
        authorization: `Bearer ${SECRETS.llm}`,
        body: {
          model: MODEL,
          messages: [
            { role: 'system', content: 'You summarise text as paragraph, in at most 20 words.' },
            { role: 'user', content: text },
          ],
          max_tokens: 800,
          temperature: 0.2,
        },
      },
    ]);
  });

  it('triage-ticket: classifies with a JSON reply, then files the ticket with that category and priority', async () => {
    const before = requestsTo('/llm/').length;
    const runId = await startRun(gw, WS, 'triage-ticket', {
      subject: 'Charged twice',
      body: 'My card was charged two times this month.',
      'customer-email': 'pat@example.com',
    });
    const run = await waitForRun(gw, WS, runId);
    expect(run.status).toBe('completed');
    expect(run.result).toEqual({
      mimeType: 'application/json',
      value: { 'ticket-id': 'T-1001', category: 'billing', priority: 'urgent' },
    });
    const classify = requestsTo('/llm/').slice(before);
    expect(classify).toHaveLength(1);
    expect(classify[0]?.body).toMatchObject({
      model: MODEL,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: expect.stringMatching(/^Classify support tickets\. Answer with JSON/) },
        { role: 'user', content: 'Subject: Charged twice\n\nMy card was charged two times this month.' },
      ],
    });
    expect(requestsTo('/helpdesk/')).toEqual([
      {
        method: 'POST',
        path: '/helpdesk/tickets',
        query: {},
        authorization: `Bearer ${SECRETS.helpdesk}`,
        body: {
          subject: 'Charged twice',
          requester: 'pat@example.com',
          category: 'billing',
          priority: 'urgent',
          summary: 'The customer was charged twice.',
        },
      },
    ]);
  });

  it('trial-follow-up: sends the welcome, sleeps durably, sends the follow-up; a second start sends nothing', async () => {
    const input = { email: 'new.user@example.com', 'first-name': 'Kim', 'delay-hours': 1 };
    const runId = await startRun(gw, WS, 'trial-follow-up', input);
    const parked = await waitForRun(gw, WS, runId, (s) => s === 'waiting' || isFinalRunStatus(s));
    expect(parked.status).toBe('waiting');
    // The follow-up is an hour away: only the welcome went out, and the marker is stored.
    expect(requestsTo('/mailer/').map((r) => r.body)).toEqual([
      { to: 'new.user@example.com', subject: 'Welcome to your trial', text: 'Hi Kim, your trial is ready.' },
    ]);
    const wakeAt = Date.parse(parked.wakeAt as string);
    expect(wakeAt - Date.parse(parked.startedAt as string)).toBeGreaterThanOrEqual(3_600_000 - 5_000);
    // Time travel instead of waiting an hour: the durable timer (run and journal entry) is moved to now.
    await gw.db.db.execute(sql`update runs set wake_at = now() where id = ${runId}`);
    await gw.db.db.execute(
      sql`update run_steps set wake_at = now() where run_id = ${runId} and step_id = 'wait'`,
    );
    gw.running.deps.runWorkers.local?.wake();
    const run = await waitForRun(gw, WS, runId);
    expect(run.status).toBe('completed');
    expect(run.result).toEqual({
      mimeType: 'application/json',
      value: { status: 'sent', email: 'new.user@example.com', 'follow-up-status': 202 },
    });
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['seen', 'completed'],
      ['compose', 'completed'],
      ['send-welcome', 'completed'],
      ['mark', 'completed'],
      ['wait', 'completed'],
      ['send-follow-up', 'completed'],
    ]);
    // Resumed by replay: the welcome was not sent again.
    expect(
      requestsTo('/mailer/').map((r) => [r.authorization, (r.body as { subject: string }).subject]),
    ).toEqual([
      [`Bearer ${SECRETS.mailer}`, 'Welcome to your trial'],
      [`Bearer ${SECRETS.mailer}`, 'How is your trial going?'],
    ]);
    const again = await waitForRun(gw, WS, await startRun(gw, WS, 'trial-follow-up', input));
    expect(again.result?.value).toEqual({ status: 'already-sent', email: 'new.user@example.com' });
    expect(requestsTo('/mailer/')).toHaveLength(2);
  });

  it('webhook-transform: reshapes an order.created event and forwards it to fulfilment', async () => {
    const order = {
      id: 9001,
      customer: { name: 'Ada', email: 'ada@example.com' },
      line_items: [
        { sku: 'MUG-1', qty: 2, digital: false },
        { sku: 'EBOOK-7', qty: 1, digital: true },
        { sku: 'TEE-3', qty: 3 },
      ],
    };
    const shipment = {
      reference: 'order-9001',
      recipient: { name: 'Ada', email: 'ada@example.com' },
      lines: [
        { sku: 'MUG-1', quantity: 2 },
        { sku: 'TEE-3', quantity: 3 },
      ],
      'total-items': 6,
    };
    const run = await waitForRun(
      gw,
      WS,
      await startRun(gw, WS, 'webhook-transform', { event: 'order.created', order }),
    );
    expect(run.status).toBe('completed');
    expect(run.result).toEqual({
      mimeType: 'application/json',
      value: {
        status: 201,
        headers: {
          'content-type': 'application/json',
          connection: 'close',
          'transfer-encoding': 'chunked',
        },
        body: { shipmentId: 'S-77', accepted: shipment },
      },
    });
    expect(requestsTo('/fulfilment/').map((r) => [r.authorization, r.body])).toEqual([
      [`Bearer ${SECRETS.fulfilment}`, shipment],
    ]);

    const skipped = await waitForRun(
      gw,
      WS,
      await startRun(gw, WS, 'webhook-transform', { event: 'order.updated', order }),
    );
    expect(skipped.result?.value).toEqual({ skipped: true, event: 'order.updated' });
    expect(requestsTo('/fulfilment/')).toHaveLength(1);
  });

  it('lists the runs it made, newest first, filterable by flow and status', async () => {
    const res = await gw.admin('GET', `/api/workspaces/${WS}/runs?flow=webhook-transform&status=completed`);
    expect(res.status).toBe(200);
    const items = (
      res.json as { items: Array<{ flowSlug: string; status: string; input: { event: string } }> }
    ).items;
    expect(items.map((r) => [r.flowSlug, r.status, r.input.event])).toEqual([
      ['webhook-transform', 'completed', 'order.updated'],
      ['webhook-transform', 'completed', 'order.created'],
    ]);
    // A run read is complete on its own: the list's newest item reads back the same.
    const first = items[0] as unknown as { runId: string };
    expect((await getRun(gw, WS, first.runId)).flowSlug).toBe('webhook-transform');
  });
});
