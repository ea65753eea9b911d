import { createHash } from 'node:crypto';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO, type ToolResult } from './support/clients.js';
import {
  ADMIN_TOKEN,
  type AuditItem,
  type ServiceAccountKey,
  startTestGateway,
  type TestGateway,
} from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';

/**
 * Approval by elicitation (2026-07-28 multi round-trip requests): a client that declared form elicitation is asked by
 * release_flow itself — one form showing the flow, the version it becomes, the definition's sha256 and the readiness —
 * and only an accepted, confirmed answer to a state bound to that exact text releases it. Every other client (2025-era,
 * or 2026 without elicitation) releases as before, and the audit row names who approved.
 */

const WS = 'ws-approval';
const V = '2026-07-28';

const flowText = (slug: string, note = 'first') => `{:slug :${slug}
 :description "Greets someone (${note})"
 :invocations {:default {:inputs [{:name :name :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "${slug.replaceAll('-', '_')}_tool" :invocation :default}]}
 :flow (flow/step :function :greet {:code (fn [x] {:greeting (str "hello " (:name x))}) :input (flow/input)})}`;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

let gw: TestGateway;
let key: ServiceAccountKey;
const closers: Array<() => Promise<void>> = [];

async function pushDraft(slug: string, text: string): Promise<void> {
  const res = await fetch(`${gw.url}/api/workspaces/${WS}/flows/${slug}/draft`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/edn' },
    body: text,
  });
  if (res.status !== 200) throw new Error(`push ${slug}: ${res.status} ${await res.text()}`);
}

async function flowState(
  slug: string,
): Promise<{ liveVersion: number | null; latestVersion: number | null }> {
  const res = await gw.admin('GET', `/api/workspaces/${WS}/flows/${slug}`);
  const json = res.json as Record<string, unknown>;
  const flow = (json.flow ?? json) as { liveVersion: number | null; latestVersion: number | null };
  return { liveVersion: flow.liveVersion, latestVersion: flow.latestVersion };
}

interface ElicitParams {
  mode?: string;
  message: string;
  requestedSchema: Record<string, unknown>;
}

type Answer = {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean>;
};

/** A 2026-07-28 SDK client that can show forms: each form is recorded and answered by `answer`. */
async function elicitingClient(
  answer: (params: ElicitParams) => Promise<Answer>,
  era: 'modern' | 'legacy' = 'modern',
): Promise<{ client: V2Client; forms: ElicitParams[] }> {
  const forms: ElicitParams[] = [];
  const client = new V2Client(CLIENT_INFO, {
    capabilities: { elicitation: { form: {} } },
    // Without versionNegotiation the SDK speaks 2025-11-25 through initialize.
    ...(era === 'modern' ? { versionNegotiation: { mode: { pin: V } } } : {}),
  });
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as unknown as ElicitParams;
    forms.push(params);
    return await answer(params);
  });
  await client.connect(
    new V2Transport(new URL(gw.mcpUrl(WS)), {
      requestInit: { headers: { Authorization: `Bearer ${key.apiKey}` } },
    }),
  );
  closers.push(() => client.close());
  return { client, forms };
}

async function release(client: V2Client | V1Client, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name: 'release_flow', arguments: args })) as ToolResult;
}

function releaseRows(items: AuditItem[], slug: string): AuditItem[] {
  return items.filter(
    (i) =>
      i.kind === 'tools/call' &&
      i.action === 'release_flow' &&
      (i.arguments as { flow_slug?: string } | null)?.flow_slug === slug,
  );
}

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS);
  key = await gw.mintKey(WS, ['flows.read', 'flows.manage'], 'releaser');
}, 120_000);

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  await gw?.close();
});

describe('release_flow with a client that declared form elicitation (2026-07-28)', () => {
  it('asks once with exactly what goes live, releases on accept and records who approved', async () => {
    const text = flowText('greet-accept');
    await pushDraft('greet-accept', text);
    const { client, forms } = await elicitingClient(async () => ({
      action: 'accept',
      content: { confirm: true },
    }));
    const result = await release(client, { flow_slug: 'greet-accept', release_note: 'ship it' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      flowSlug: 'greet-accept',
      version: 1,
      createdVersion: true,
      previousLiveVersion: null,
      releaseNote: 'ship it',
    });
    expect(forms).toEqual([
      {
        mode: 'form',
        message:
          'Release flow greet-accept: the draft becomes version 1 and goes live for every caller (no version is live yet).\n' +
          `Definition sha256: ${sha256(text)}\n` +
          'Readiness after release: ready, 0 problem(s).\n' +
          'Release note: ship it',
        requestedSchema: {
          type: 'object',
          properties: {
            confirm: { type: 'boolean', title: 'Release greet-accept as version 1', default: false },
          },
          required: ['confirm'],
        },
      },
    ]);
    expect(await flowState('greet-accept')).toEqual({ liveVersion: 1, latestVersion: 1 });

    const rows = releaseRows(
      await gw.waitForAudit(WS, (items) => releaseRows(items, 'greet-accept').length === 2),
      'greet-accept',
    );
    // Newest first: the release itself names who approved; the first round trip only asked.
    expect(rows.map((r) => [r.outcome, r.errorCode, r.arguments])).toEqual([
      [
        'ok',
        null,
        {
          flow_slug: 'greet-accept',
          release_note: 'ship it',
          approval: {
            status: 'approved',
            approvedBy: 'elicitation',
            principal: { kind: 'service_account', id: key.serviceAccountId },
            textSha256: sha256(text),
          },
        },
      ],
      [
        'ok',
        null,
        {
          flow_slug: 'greet-accept',
          release_note: 'ship it',
          approval: { status: 'requested', via: 'elicitation' },
        },
      ],
    ]);
    expect(rows[0]?.resourceUris).toEqual(['flowgate://flows/greet-accept/versions/1/definition']);
    expect(rows[1]?.resourceUris).toEqual([]);
  });

  it('shows a rollback as the existing version going live again', async () => {
    await pushDraft('greet-roll', flowText('greet-roll'));
    const { client, forms } = await elicitingClient(async () => ({
      action: 'accept',
      content: { confirm: true },
    }));
    await release(client, { flow_slug: 'greet-roll' });
    await pushDraft('greet-roll', flowText('greet-roll', 'second'));
    await release(client, { flow_slug: 'greet-roll' });
    const rolled = await release(client, { flow_slug: 'greet-roll', version: 1 });
    expect(rolled.structuredContent).toMatchObject({
      version: 1,
      createdVersion: false,
      previousLiveVersion: 2,
    });
    expect(forms.map((f) => f.message.split('\n')[0])).toEqual([
      'Release flow greet-roll: the draft becomes version 1 and goes live for every caller (no version is live yet).',
      'Release flow greet-roll: the draft becomes version 2 and goes live for every caller (live now: version 1).',
      'Release flow greet-roll: version 1 (an existing version) goes live again for every caller (live now: version 2).',
    ]);
    expect(forms[2]?.message).toContain(`Definition sha256: ${sha256(flowText('greet-roll'))}`);
  });

  it.each([
    ['decline', 'approval_declined', 'The user declined the approval; nothing was done.'],
    ['cancel', 'approval_cancelled', 'The user dismissed the approval; nothing was done.'],
  ] as const)('releases nothing on %s', async (action, code, message) => {
    const slug = `greet-${action}`;
    await pushDraft(slug, flowText(slug));
    const { client, forms } = await elicitingClient(async () => ({ action }));
    const result = await release(client, { flow_slug: slug });
    expect(forms).toHaveLength(1);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ error: { code, message }, details: { action } });
    expect(await flowState(slug)).toEqual({ liveVersion: null, latestVersion: null });
    const rows = releaseRows(
      await gw.waitForAudit(WS, (items) => releaseRows(items, slug).length === 2),
      slug,
    );
    expect(rows.map((r) => [r.outcome, r.errorCode])).toEqual([
      ['error', code],
      ['ok', null],
    ]);
  });

  it('releases nothing when the draft changed between the two round trips', async () => {
    const slug = 'greet-changed';
    const shown = flowText(slug);
    const edited = flowText(slug, 'edited while the form was open');
    await pushDraft(slug, shown);
    const { client } = await elicitingClient(async () => {
      await pushDraft(slug, edited);
      return { action: 'accept', content: { confirm: true } };
    });
    const result = await release(client, { flow_slug: slug });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: {
        code: 'approval_stale',
        message: `The definition changed since it was approved (approved sha256 ${sha256(shown)}, now ${sha256(edited)}); nothing was done. Call release_flow again to be asked anew.`,
      },
      details: { approvedSha256: sha256(shown), currentSha256: sha256(edited) },
    });
    expect(await flowState(slug)).toEqual({ liveVersion: null, latestVersion: null });
  });
});

describe('the wire of an approval (raw 2026-07-28 requests)', () => {
  const meta = (capabilities: Record<string, unknown>) => ({
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '0.0.1' },
  });
  const call = (params: Record<string, unknown>) =>
    mcpPost(gw.mcpUrl(WS), {
      token: key.apiKey,
      protocolVersion: V,
      headers: { 'mcp-method': 'tools/call', 'mcp-name': 'release_flow' },
      body: rpc('tools/call', { name: 'release_flow', ...params }),
    });

  it('answers input_required, and refuses a tampered state, another argument set and a forged accept', async () => {
    const slug = 'greet-wire';
    await pushDraft(slug, flowText(slug));
    const args = { flow_slug: slug };
    const first = asRpc(await call({ arguments: args, _meta: meta({ elicitation: {} }) }));
    const result = first.result as Record<string, unknown>;
    expect(Object.keys(result).sort()).toEqual(['_meta', 'inputRequests', 'requestState', 'resultType']);
    expect(result.resultType).toBe('input_required');
    expect(Object.keys(result.inputRequests as object)).toEqual(['approve']);
    expect((result.inputRequests as Record<string, { method: string }>).approve?.method).toBe(
      'elicitation/create',
    );
    const state = result.requestState as string;
    const accept = { approve: { action: 'accept', content: { confirm: true } } };

    const tampered = asRpc(
      await call({
        arguments: args,
        requestState: `${state.slice(0, -1)}${state.endsWith('A') ? 'B' : 'A'}`,
        inputResponses: accept,
        _meta: meta({ elicitation: {} }),
      }),
    );
    expect(tampered.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'approval_invalid' } },
    });

    const otherArgs = asRpc(
      await call({
        arguments: { ...args, release_note: 'not what was shown' },
        requestState: state,
        inputResponses: accept,
        _meta: meta({ elicitation: {} }),
      }),
    );
    expect(otherArgs.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'approval_invalid' } },
    });

    // An accept without the state it answers is not an approval: the client is asked again.
    const forged = asRpc(
      await call({ arguments: args, inputResponses: accept, _meta: meta({ elicitation: {} }) }),
    );
    expect((forged.result as Record<string, unknown>).resultType).toBe('input_required');
    expect(await flowState(slug)).toEqual({ liveVersion: null, latestVersion: null });

    const approved = asRpc(
      await call({
        arguments: args,
        requestState: state,
        inputResponses: accept,
        _meta: meta({ elicitation: {} }),
      }),
    );
    expect(approved.result).toMatchObject({ resultType: 'complete', structuredContent: { version: 1 } });

    // The same accepted retry again is refused: the approval was spent by the release it approved.
    const replayed = asRpc(
      await call({
        arguments: args,
        requestState: state,
        inputResponses: accept,
        _meta: meta({ elicitation: {} }),
      }),
    );
    expect(replayed.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: {
          code: 'approval_used',
          message:
            'This approval was already used: an approval releases once, so this retry did nothing. Call release_flow again to be asked anew.',
        },
      },
    });
    expect(await flowState(slug)).toEqual({ liveVersion: 1, latestVersion: 1 });
  });

  /** Asks for the approval of `args` and returns the state with an accepting answer. */
  async function accepted(args: Record<string, unknown>) {
    const first = asRpc(await call({ arguments: args, _meta: meta({ elicitation: {} }) }));
    const result = first.result as { resultType: string; requestState: string };
    expect(result.resultType).toBe('input_required');
    return {
      arguments: args,
      requestState: result.requestState,
      inputResponses: { approve: { action: 'accept', content: { confirm: true } } },
      _meta: meta({ elicitation: {} }),
    };
  }

  /** Calls recorded (identical consecutive rows are merged, with a count). */
  const calls = (rows: AuditItem[]) =>
    rows.reduce((n, r) => n + ((r as { count?: number | null }).count ?? 1), 0);
  const approvedRows = (items: AuditItem[], slug: string) =>
    releaseRows(items, slug).filter(
      (i) => (i.arguments as { approval?: { status?: string } } | null)?.approval?.status === 'approved',
    );

  it('spends an accepted state once: a replay of a release that changed nothing releases nothing again', async () => {
    const slug = 'greet-once';
    await pushDraft(slug, flowText(slug));
    const first = asRpc(await call(await accepted({ flow_slug: slug })));
    expect(first.result).toMatchObject({ resultType: 'complete', structuredContent: { version: 1 } });
    // Version 1 is live and latest: releasing it again leaves "where things stood" unchanged, which is exactly the
    // replay a binding to the versions alone cannot tell from a first use.
    const retry = await accepted({ flow_slug: slug, version: 1 });
    const again = asRpc(await call(retry));
    expect(again.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { version: 1, createdVersion: false },
    });
    const replayed = asRpc(await call(retry));
    expect(replayed.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'approval_used' } },
    });
    // Two approvals were given, two recorded; the replay's row records none.
    const items = await gw.waitForAudit(WS, (rows) => calls(releaseRows(rows, slug)) === 5);
    expect(calls(approvedRows(items, slug))).toBe(2);
    const last = releaseRows(items, slug).find(
      (i) => (i.arguments as { version?: number } | null)?.version === 1 && i.outcome === 'error',
    );
    expect((last?.arguments as { approval?: unknown } | null)?.approval).toBeUndefined();
  });

  it('of two concurrent retries with one accepted state, exactly one releases', async () => {
    const slug = 'greet-race';
    await pushDraft(slug, flowText(slug));
    const retry = await accepted({ flow_slug: slug });
    const answers = await Promise.all([call(retry), call(retry), call(retry)]);
    const results = answers.map((a) => asRpc(a).result as Record<string, unknown>);
    const released = results.filter((r) => r.resultType === 'complete' && r.isError !== true);
    const refused = results.filter((r) => r.isError === true);
    expect([released.length, refused.length]).toEqual([1, 2]);
    for (const r of refused)
      expect((r.structuredContent as { error: { code: string } }).error.code).toBe('approval_used');
    // One version made, not three; one approval recorded.
    expect(await flowState(slug)).toEqual({ liveVersion: 1, latestVersion: 1 });
    const items = await gw.waitForAudit(WS, (rows) => calls(releaseRows(rows, slug)) === 4);
    expect(calls(approvedRows(items, slug))).toBe(1);
  });

  it('serves a 2026 client without form elicitation exactly as before', async () => {
    const slug = 'greet-noform';
    await pushDraft(slug, flowText(slug));
    for (const capabilities of [{}, { elicitation: { url: {} } }, { sampling: {} }]) {
      const answer = asRpc(await call({ arguments: { flow_slug: slug }, _meta: meta(capabilities) }));
      expect(answer.result).toMatchObject({ resultType: 'complete', structuredContent: { version: 1 } });
      expect(answer.result).not.toHaveProperty('isError');
    }
    const rows = releaseRows(
      await gw.waitForAudit(WS, (items) => releaseRows(items, slug).length === 3),
      slug,
    );
    expect(rows.map((r) => r.arguments)).toEqual([
      { flow_slug: slug },
      { flow_slug: slug },
      { flow_slug: slug },
    ]);
  });
});

describe('2025-era clients', () => {
  it('the SDK v2 client on 2025-11-25 declaring elicitation releases at once', async () => {
    const slug = 'greet-v2-2025';
    await pushDraft(slug, flowText(slug));
    const { client, forms } = await elicitingClient(async () => ({ action: 'decline' }), 'legacy');
    const result = await release(client, { flow_slug: slug });
    expect(forms).toEqual([]);
    expect(result.structuredContent).toMatchObject({ flowSlug: slug, version: 1 });
  });

  it('release at once, even when they declare elicitation: multi round-trip requests are 2026-07-28 only', async () => {
    const slug = 'greet-v1';
    await pushDraft(slug, flowText(slug));
    const client = new V1Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} } } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'decline' };
    });
    await client.connect(
      new V1Transport(new URL(gw.mcpUrl(WS)), {
        requestInit: { headers: { Authorization: `Bearer ${key.apiKey}` } },
      }),
    );
    closers.push(() => client.close());
    const result = await release(client, { flow_slug: slug, release_note: 'v1 client' });
    expect(asked).toBe(0);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ flowSlug: slug, version: 1, releaseNote: 'v1 client' });
    const rows = releaseRows(
      await gw.waitForAudit(WS, (items) => releaseRows(items, slug).length === 1),
      slug,
    );
    expect(rows.map((r) => [r.outcome, r.protocolVersion, r.arguments])).toEqual([
      ['ok', '2025-11-25', { flow_slug: slug, release_note: 'v1 client' }],
    ]);
  });
});
