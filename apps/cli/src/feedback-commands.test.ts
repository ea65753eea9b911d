import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingFetch, runWith, startTestGateway, type TestGateway } from './testing.js';

// The real gateway; feedback arrives the way agents send it (send_feedback over MCP) and the CLI reads it back.
const WS = 'ws-feedback-cli';
const OTHER = 'ws-feedback-other';
let gateway: TestGateway;
let env: Record<string, string>;
let agentId: string;

async function sendFeedback(ws: string, apiKey: string, args: Record<string, unknown>) {
  const res = await fetch(`${gateway.url}/api/workspaces/${ws}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'send_feedback', arguments: args },
    }),
  });
  const body = (await res.json()) as { result?: { isError?: boolean } };
  expect(body.result?.isError).toBeFalsy();
}

async function agentKey(ws: string) {
  const sa = await gateway.client.createServiceAccount(ws, {
    name: 'agent',
    capabilities: ['feedback.send'],
  });
  const created = await gateway.client.createKey(ws, sa.serviceAccountId, {});
  return { serviceAccountId: sa.serviceAccountId, apiKey: created.key.apiKey };
}

beforeAll(async () => {
  gateway = await startTestGateway();
  env = { FLOWGATE_API_URL: gateway.url, FLOWGATE_ADMIN_TOKEN: gateway.token };
  await gateway.client.createWorkspace({ id: WS, name: 'feedback' });
  await gateway.client.createWorkspace({ id: OTHER, name: 'other' });
  const agent = await agentKey(WS);
  agentId = agent.serviceAccountId;
  await sendFeedback(WS, agent.apiKey, {
    summary: 'docs miss the\nretry rules',
    details: 'd1',
    area: 'docs',
  });
  await sendFeedback(WS, agent.apiKey, {
    summary: 'setup took long',
    details: 'd2',
    area: 'setup',
    flow_slug: 'daily-report',
  });
  const other = await agentKey(OTHER);
  await sendFeedback(OTHER, other.apiKey, { summary: 'other workspace', details: 'd3', area: 'docs' });
});

afterAll(async () => gateway?.close());

describe('flowgate feedback list', () => {
  it('prints a table, newest first, of this workspace only', async () => {
    const r = await runWith(['feedback', 'list', '--workspace', WS], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CREATED\s+AREA\s+FROM\s+FLOW\s+RUN\s+SUMMARY$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+setup\\s+service_account:${agentId}\\s+daily-report\\s+-\\s+setup took long$`,
      ),
    );
    // The line break in the summary does not break the table.
    expect(lines[2]).toMatch(/\sdocs\s.*\s-\s+-\s+docs miss the retry rules$/);
    expect(r.stdout).not.toContain('other workspace');
  });

  it('--json gives the API answer; --area, --since and --limit/--cursor reach the API', async () => {
    const sent = recordingFetch();
    const all = await runWith(['--json', 'feedback', 'list', '--workspace', WS, '--limit', '1'], {
      env,
      fetch: sent.fetch,
    });
    expect(all.code).toBe(0);
    const page = JSON.parse(all.stdout) as {
      items: { summary: string; details: string; area: string }[];
      nextCursor: string;
    };
    expect(page.items.map((i) => [i.area, i.summary, i.details])).toEqual([
      ['setup', 'setup took long', 'd2'],
    ]);
    expect(typeof page.nextCursor).toBe('string');
    const next = await runWith(
      ['--json', 'feedback', 'list', '--workspace', WS, '--limit', '1', '--cursor', page.nextCursor],
      { env },
    );
    expect((JSON.parse(next.stdout) as typeof page).items.map((i) => i.details)).toEqual(['d1']);

    const docs = await runWith(
      ['--json', 'feedback', 'list', '--workspace', WS, '--area', 'docs', '--since', '2000-01-01T00:00:00Z'],
      { env, fetch: sent.fetch },
    );
    expect((JSON.parse(docs.stdout) as typeof page).items.map((i) => i.details)).toEqual(['d1']);
    expect(sent.requests).toEqual([
      `GET ${gateway.url}/api/workspaces/${WS}/feedback?limit=1`,
      `GET ${gateway.url}/api/workspaces/${WS}/feedback?area=docs&since=2000-01-01T00%3A00%3A00Z`,
    ]);
    const future = await runWith(['feedback', 'list', '--workspace', WS, '--since', '2999-01-01T00:00:00Z'], {
      env,
    });
    expect(future.stdout).toBe('(none)\n');
  });

  it('refuses an unknown area and a since without a zone before calling the API', async () => {
    const sent = recordingFetch();
    const area = await runWith(['feedback', 'list', '--workspace', WS, '--area', 'bogus'], {
      env,
      fetch: sent.fetch,
    });
    expect(area.code).toBe(1);
    expect(area.stderr).toContain("argument 'bogus' is invalid. Allowed choices are mcp, docs, runtime");
    const since = await runWith(['feedback', 'list', '--workspace', WS, '--since', '2026-01-01'], {
      env,
      fetch: sent.fetch,
    });
    expect(since.code).toBe(1);
    expect(since.stderr).toContain('expected an ISO 8601 instant with a zone');
    expect(sent.requests).toEqual([]);
  });
});
