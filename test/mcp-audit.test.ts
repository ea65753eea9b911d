import { schema } from '@flowgate/db';
import { LATEST_PROTOCOL_VERSION } from '@flowgate/workspace-mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuditItem,
  type ServiceAccountKey,
  startTestGateway,
  type TestGateway,
} from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';

/**
 * Spec 9's audit log seen from the outside: MCP calls through the real gateway, entries read back with the
 * admin API once the background queue has written them, and the queue flushed by a graceful shutdown.
 */

const WS = 'ws-audit';
const USER_AGENT = 'e2e-audit-agent/3.1.4';

let gw: TestGateway;
let full: ServiceAccountKey;
let feedbackOnly: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS);
  full = await gw.mintKey(WS, ['workspace.full'], 'auditor');
  feedbackOnly = await gw.mintKey(WS, ['feedback.send'], 'feedback-only');
});

afterAll(async () => {
  await gw?.close();
});

async function call(
  token: string,
  name: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
) {
  const a = await mcpPost(gw.mcpUrl(WS), {
    token,
    protocolVersion: LATEST_PROTOCOL_VERSION,
    headers: { 'user-agent': USER_AGENT },
    body: rpc('tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}) }),
  });
  expect(a.status).toBe(200);
  return asRpc(a);
}

/** Waits until an entry for `action` matching `extra` is written, and returns it. */
async function entryFor(action: string, extra: (e: AuditItem) => boolean = () => true): Promise<AuditItem> {
  const items = await gw.waitForAudit(WS, (all) => all.some((e) => e.action === action && extra(e)));
  return items.find((e) => e.action === action && extra(e)) as AuditItem;
}

describe('the client named at initialize, on a stateless connection', () => {
  const initialize = (token: string, clientInfo?: Record<string, unknown>) =>
    mcpPost(gw.mcpUrl(WS), {
      token,
      headers: { 'user-agent': USER_AGENT },
      body: rpc('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        ...(clientInfo ? { clientInfo } : {}),
      }),
    });
  const callWith = (token: string, session: string, reason: string) =>
    mcpPost(gw.mcpUrl(WS), {
      token,
      headers: { 'user-agent': USER_AGENT, 'mcp-session-id': session },
      body: rpc('tools/call', { name: 'get_workspace_context', arguments: {}, _meta: { reason } }),
    });

  it('is echoed back in Mcp-Session-Id and named in the audit rows of later requests', async () => {
    const init = await initialize(full.apiKey, { name: 'agent-from-initialize', version: '9.8.7' });
    const session = init.headers.get('mcp-session-id') ?? '';
    expect(session).toMatch(/^fgc1\./);
    const reason = 'client token audit check';
    const answer = await callWith(full.apiKey, session, reason);
    expect(answer.status).toBe(200);
    const e = await entryFor('get_workspace_context', (x) => x.reason === reason);
    expect([e.clientName, e.clientVersion]).toEqual(['agent-from-initialize', '9.8.7']);
    // The version negotiated at initialize, though this request sent no MCP-Protocol-Version header.
    expect(e.protocolVersion).toBe('2025-06-18');
  });

  it('a forged token, or one issued to another key, is "session not found" (404) and runs nothing', async () => {
    const init = await initialize(full.apiKey, { name: 'real-agent', version: '1' });
    const session = init.headers.get('mcp-session-id') ?? '';
    const [prefix, body, mac] = session.split('.');
    const forgedBody = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body ?? '', 'base64url').toString()), n: 'someone-else' }),
    ).toString('base64url');
    for (const [key, token] of [
      [full.apiKey, `${prefix}.${forgedBody}.${mac}`],
      [full.apiKey, 'not-a-token'],
      [feedbackOnly.apiKey, session],
    ] as const) {
      const answer = await callWith(key, token, 'forged');
      expect(answer.status).toBe(404);
      expect(answer.json).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Session not found: send initialize again' },
      });
    }
  });

  it('without clientInfo at initialize there is no token: the User-Agent names the client as before', async () => {
    const init = await initialize(full.apiKey);
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
  });
});

describe('tools/call audit entries', () => {
  it('an allowed call records principal, key, tool, outcome ok, _meta.reason, client and duration', async () => {
    const reason = 'checking setup for ticket 42';
    const answer = await call(full.apiKey, 'get_workspace_context', {}, { reason });
    expect(answer.result?.isError).toBeUndefined();
    const e = await entryFor('get_workspace_context', (x) => x.reason === reason);
    expect(e).toMatchObject({
      workspaceId: WS,
      kind: 'tools/call',
      action: 'get_workspace_context',
      principalType: 'service_account',
      principalId: full.serviceAccountId,
      keyId: full.keyId,
      outcome: 'ok',
      errorCode: null,
      protocolVersion: LATEST_PROTOCOL_VERSION,
      blockers: null,
      reason,
      arguments: {},
    });
    expect(e.clientName).toContain('e2e-audit-agent');
    expect(typeof e.durationMs).toBe('number');
    expect(e.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof e.requestId).toBe('string');
    expect(Number.isNaN(Date.parse(e.at))).toBe(false);
  });

  it('a blocked call records outcome blocked with its blockers', async () => {
    const answer = await call(
      feedbackOnly.apiKey,
      'list_connections',
      { limit: 5 },
      { reason: 'want to see' },
    );
    expect(answer.result?.isError).toBe(true);
    const e = await entryFor('list_connections', (x) => x.keyId === feedbackOnly.keyId);
    expect(e).toMatchObject({
      kind: 'tools/call',
      principalId: feedbackOnly.serviceAccountId,
      keyId: feedbackOnly.keyId,
      outcome: 'blocked',
      errorCode: 'tool_blocked',
      blockers: [
        { reason: 'missing_service_account_capabilities', missingCapabilities: ['connections.read'] },
      ],
      arguments: { limit: 5 },
      reason: 'want to see',
    });
  });

  it('a call blocked by headers records the header blockers', async () => {
    const a = await mcpPost(gw.mcpUrl(WS), {
      token: full.apiKey,
      protocolVersion: LATEST_PROTOCOL_VERSION,
      headers: { 'X-MCP-Toolsets': 'feedback', 'X-MCP-Exclude-Tools': 'check_connections' },
      body: rpc('tools/call', { name: 'check_connections', arguments: {} }),
    });
    expect(asRpc(a).result?.isError).toBe(true);
    const e = await entryFor('check_connections', (x) => x.outcome === 'blocked' && x.keyId === full.keyId);
    expect(e.blockers).toEqual([
      { reason: 'toolset_policy', toolToolsets: ['read', 'setup'], activeToolsets: ['feedback'] },
      { reason: 'exclude_tools_policy' },
    ]);
  });

  it('failed calls (invalid arguments, a bad cursor) record outcome error', async () => {
    const invalid = await call(full.apiKey, 'send_feedback', { summary: 's', details: 'd', area: 'nowhere' });
    expect(invalid.result?.isError).toBe(true);
    const badCursor = await call(full.apiKey, 'list_connections', { cursor: 'not-a-cursor' });
    expect(badCursor.result?.isError).toBe(true);

    const items = await gw.waitForAudit(
      WS,
      (all) =>
        all.some((e) => e.action === 'send_feedback' && e.outcome === 'error') &&
        all.some((e) => e.action === 'list_connections' && e.outcome === 'error'),
    );
    const feedback = items.find((e) => e.action === 'send_feedback' && e.outcome === 'error');
    expect(feedback).toMatchObject({
      keyId: full.keyId,
      errorCode: 'invalid_arguments',
      blockers: null,
      arguments: { summary: 's', details: 'd', area: 'nowhere' },
    });
    const list = items.find((e) => e.action === 'list_connections' && e.outcome === 'error');
    expect(list).toMatchObject({
      keyId: full.keyId,
      errorCode: 'invalid_arguments',
      arguments: { cursor: 'not-a-cursor' },
    });
  });

  it('an unknown tool is answered -32602 and still audited as an error', async () => {
    const answer = await call(full.apiKey, 'drop_all_tables', { really: true });
    expect(answer.error?.code).toBe(-32602);
    const e = await entryFor('drop_all_tables');
    expect(e).toMatchObject({
      outcome: 'error',
      errorCode: 'unknown_tool',
      keyId: full.keyId,
      arguments: { really: true },
    });
  });
});

describe('redaction', () => {
  it('secrets in send_feedback arguments are redacted in the stored row and in the audit entry', async () => {
    const bearer = 'Bearer abcDEF0123456789ghiJKL';
    const apiKey = feedbackOnly.apiKey; // a real, live key pasted by mistake
    const password = 'hunter2-correct-horse';
    const answer = await call(
      full.apiKey,
      'send_feedback',
      {
        summary: `auth fails with ${bearer}`,
        details: `I called the API with Authorization: ${bearer} and key ${apiKey}; it said 401.`,
        area: 'setup',
        context: { password, note: `key was ${apiKey}`, attempts: 3 },
      },
      { reason: `user pasted ${bearer}` },
    );
    expect(answer.result?.isError).toBeUndefined();
    const out = answer.result?.structuredContent as { feedbackId: string; redacted: boolean };
    expect(out.redacted).toBe(true);

    const rows = await gw.db.db.select().from(schema.feedback);
    const row = rows.find((r) => r.id === out.feedbackId);
    expect(row).toBeDefined();
    expect(row?.summary).toBe('auth fails with [redacted]');
    expect(row?.details).toBe(
      'I called the API with Authorization: [redacted] and key [redacted]; it said 401.',
    );
    expect(row?.context).toEqual({ password: '[redacted]', note: 'key was [redacted]', attempts: 3 });

    const e = await entryFor('send_feedback', (x) => x.outcome === 'ok' && x.keyId === full.keyId);
    expect(e.arguments).toEqual({
      summary: 'auth fails with [redacted]',
      details: 'I called the API with Authorization: [redacted] and key [redacted]; it said 401.',
      area: 'setup',
      context: { password: '[redacted]', note: 'key was [redacted]', attempts: 3 },
    });
    expect(e.reason).toBe('user pasted [redacted]');

    const everything = JSON.stringify(await gw.audit(WS)) + JSON.stringify(rows);
    for (const secret of ['abcDEF0123456789ghiJKL', apiKey, password])
      expect(everything).not.toContain(secret);
  });

  it('the admin action that stores a connection secret is audited without it', async () => {
    const secret = 'conn-secret-value-7f3a9c2e4b1d';
    await gw.createConnection(WS, {
      name: 'audited-crm',
      type: 'http-api',
      baseUrl: 'https://crm.example.test/api',
      auth: { type: 'bearer', secret },
    });
    const e = await entryFor('connections.create');
    expect(e).toMatchObject({ kind: 'admin', outcome: 'ok', principalType: 'operator' });
    // The auth object keeps its shape (the kind of auth is useful in an audit); its secret is replaced.
    expect(e.arguments).toMatchObject({
      name: 'audited-crm',
      auth: { type: 'bearer', secret: '[redacted]' },
    });
    expect(JSON.stringify(await gw.audit(WS))).not.toContain(secret);
  });
});

describe('resources/read audit entries', () => {
  it('a read records the resource URI; a missing resource records an error', async () => {
    const uri = 'flowgate://mcp-docs/overview';
    const ok = await mcpPost(gw.mcpUrl(WS), {
      token: feedbackOnly.apiKey,
      protocolVersion: LATEST_PROTOCOL_VERSION,
      headers: { 'user-agent': USER_AGENT },
      body: rpc('resources/read', { uri }),
    });
    expect(asRpc(ok).result?.contents).toHaveLength(1);
    const missing = await mcpPost(gw.mcpUrl(WS), {
      token: feedbackOnly.apiKey,
      protocolVersion: LATEST_PROTOCOL_VERSION,
      body: rpc('resources/read', { uri: 'flowgate://mcp-docs/missing' }),
    });
    expect(asRpc(missing).error?.code).toBe(-32602);

    const items = await gw.waitForAudit(WS, (all) =>
      ['flowgate://mcp-docs/overview', 'flowgate://mcp-docs/missing'].every((a) =>
        all.some((e) => e.action === a),
      ),
    );
    expect(items.find((e) => e.action === uri)).toMatchObject({
      kind: 'resources/read',
      outcome: 'ok',
      resourceUris: [uri],
      principalId: feedbackOnly.serviceAccountId,
      keyId: feedbackOnly.keyId,
    });
    expect(items.find((e) => e.action === 'flowgate://mcp-docs/missing')).toMatchObject({
      kind: 'resources/read',
      outcome: 'error',
      resourceUris: ['flowgate://mcp-docs/missing'],
    });
  });
});

// Last in this file on purpose: it shuts the gateway down (the database stays open until afterAll).
describe('graceful shutdown', () => {
  it('close() right after calls still writes their audit entries', async () => {
    const reasons = ['last words 1', 'last words 2', 'last words 3'];
    for (const reason of reasons) {
      const answer = await call(full.apiKey, 'get_workspace_context', {}, { reason });
      expect(answer.result?.isError).toBeUndefined();
    }
    // No waiting: the queue flushes on a 250 ms timer, and shutdown must flush what is left.
    await gw.running.close();
    const rows = await gw.db.db.select().from(schema.auditEntries);
    const lastWords = rows.filter((r) => r.kind === 'tools/call' && r.reason?.startsWith('last words'));
    expect(lastWords.map((r) => r.reason).sort()).toEqual(reasons);
    expect(lastWords.every((r) => r.keyId === full.keyId && r.outcome === 'ok')).toBe(true);
  });
});
