/**
 * Every tool's largest answer stays under the result cap: each tool is called with the biggest data it can meet
 * (full pages, a 150 KB definition, a 5 MB run result, event pages of large details, 10,000 steps) and each side of
 * every result (its content blocks, and its structuredContent) is measured: a client hands the model one of the two.
 */

import { STEP_TYPES } from '@flowgate/flows';
import type { RunEventRecord, RunRecord, RunStepRecord, RunUseCases } from '@flowgate/workspace';
import { flowLiteral, seedConnection, seedFlow, seedFlowWorld } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_TOOLS } from './catalog.js';
import { LIMITS } from './limits.js';
import { DEFAULT_MAX_RESULT_BYTES } from './result.js';
import { callTool, type Json, type TestContext, useTestDb } from './testing.js';

const env = useTestDb();
const WS = 'ws-acme';
const BIG = 'big-flow';
const RUN_ID = 'run_BiggestRun0001';
const FIVE_MB = 5 * 1024 * 1024;
const MAX_DEFINITION_BYTES = 150 * 1024;

/**
 * A valid definition of just under 150 KB whose padding is comment lines full of quotes and backslashes: each of
 * those costs two bytes in JSON, the worst case for a literal inside a result.
 */
function biggestLiteral(): string {
  const base = flowLiteral(BIG, { tool: 'big_tool' });
  const line = `;; ${'"\\'.repeat(60)}\n`;
  let padding = '';
  while (Buffer.byteLength(base, 'utf8') + padding.length + line.length < MAX_DEFINITION_BYTES - 16)
    padding += line;
  return `${padding}${base}`;
}

const run: RunRecord = {
  id: RUN_ID,
  flowSlug: BIG,
  installationId: null,
  version: 1,
  target: 'live',
  toolName: 'big_tool',
  invocation: 'default',
  status: 'completed',
  input: { domain: 'example.com' },
  error: null,
  resultMimeType: 'application/json',
  attempts: 1,
  usage: { steps: 10_000, httpCalls: 0, llmTokens: 0 },
  cancelRequested: false,
  createdAt: '2026-11-20T11:00:00.000Z',
  startedAt: '2026-11-20T11:00:00.000Z',
  finishedAt: '2026-11-20T11:00:01.000Z',
  wakeAt: null,
};

/** Step ids at their longest (300 characters), 10,000 of them. */
const steps: RunStepRecord[] = Array.from({ length: 10_000 }, (_, i) => ({
  stepId: `${String(i).padStart(6, '0')}${'s'.repeat(LIMITS.stepIdMaxChars - 6)}`,
  type: 'function',
  status: 'completed',
  attempts: 1,
  startedAt: run.startedAt,
  finishedAt: run.finishedAt,
  wakeAt: null,
  error: null,
}));

/** Events whose details are 20 KB each: a page of them is far above the cap. */
function events(limit: number, stepId: string | null): RunEventRecord[] {
  return Array.from({ length: limit }, (_, i) => ({
    id: i + 1,
    type: 'step.completed',
    stepId: stepId ?? steps[i]?.stepId ?? null,
    stepType: 'function',
    status: 'completed',
    at: run.finishedAt ?? '',
    detail: { note: `"${'x'.repeat(20_000)}"` },
  }));
}

const fiveMbResult = { mimeType: 'application/json', value: { text: 'y'.repeat(FIVE_MB) } };

/** The real workspace, with a run store holding the longest run there can be. */
function biggestCtx(): TestContext {
  const ctx = env.ctx({ workspaceId: WS });
  const runs: RunUseCases = {
    ...ctx.workspace().runs,
    start: async () => ({ run, created: true }),
    get: async () => run,
    steps: async () => steps,
    step: async (_runId, stepId) => {
      const found = steps.find((s) => s.stepId === stepId);
      return found ? { ...found, result: fiveMbResult.value } : null;
    },
    events: async (_runId, options) => events(options.limit, options.stepId),
    result: async () => fiveMbResult,
    wait: async () => ({ run, result: fiveMbResult }),
  };
  const workspace = { ...ctx.workspace(), runs };
  return { ...ctx, workspace: () => workspace };
}

let literal: string;
const connections: string[] = [];

beforeAll(async () => {
  await seedFlowWorld(env.deps, { workspaceId: WS });
  literal = biggestLiteral();
  await seedFlow(env.db, WS, literal, { release: 'r'.repeat(LIMITS.releaseNoteMaxChars) });
  // A full search page: 50 more flows, each with long names.
  for (let i = 0; i < LIMITS.searchFlowsMaxLimit; i++) {
    const slug = `flow-${String(i).padStart(2, '0')}-${'n'.repeat(40)}`;
    await seedFlow(env.db, WS, flowLiteral(slug, { tool: `tool_${i}_${'t'.repeat(40)}` }), { release: 'r' });
  }
  // A full list_connections page; the checked ones are disabled so no health check leaves the process.
  for (let i = 4; i < 4 + LIMITS.listConnectionsMaxLimit; i++) {
    connections.push(
      await seedConnection(env.deps, WS, i, { disabled: true, name: `c${i}-${'x'.repeat(60)}` }),
    );
  }
});

const longText = (n: number) => 'z'.repeat(n);

/** Every tool with its largest arguments. */
function calls(): [string, Record<string, unknown>][] {
  const maxRun = { run_id: RUN_ID };
  return [
    ['get_workspace_context', {}],
    ['list_connections', { limit: LIMITS.listConnectionsMaxLimit }],
    ['check_connections', { connection_ids: connections.slice(0, LIMITS.checkConnectionsMaxIds) }],
    ...STEP_TYPES.map((t): [string, Record<string, unknown>] => ['get_step_reference', { step_type: t }]),
    ['search_flows', { limit: LIMITS.searchFlowsMaxLimit }],
    ['search_flow_tools', { limit: LIMITS.searchFlowToolsMaxLimit }],
    ['get_flow_definition', { flow_slug: BIG }],
    ['get_flow_definition', { flow_slug: BIG, source: 'live' }],
    ['validate_flow_definition', { flow_literal: literal }],
    ['validate_flow_definition', { flow_slug: BIG }],
    ['create_flow_draft', { flow_literal: literal }],
    ['check_flow_readiness', { flow_slug: BIG, target: 'draft' }],
    ['inspect_flow_tool', { flow_slug: BIG, tool_name: 'big_tool' }],
    ['release_flow', { flow_slug: BIG, release_note: longText(LIMITS.releaseNoteMaxChars) }],
    ['call_flow_tool', { flow_slug: BIG, tool_name: 'big_tool', input: { domain: 'a' }, wait_ms: 1 }],
    ['get_run_status', { ...maxRun, include_events: true, include_result: true }],
    [
      'inspect_run_step',
      { ...maxRun, step_id: steps[0]?.stepId, include_step_results: true, include_events: true },
    ],
    [
      'send_feedback',
      {
        area: 'mcp',
        summary: longText(LIMITS.feedbackSummaryMaxChars),
        details: longText(LIMITS.feedbackDetailsMaxChars),
        context: Object.fromEntries(
          Array.from({ length: LIMITS.feedbackContextMaxKeys }, (_, i) => [
            `k${i}`,
            longText(LIMITS.feedbackContextValueMaxChars),
          ]),
        ),
      },
    ],
  ];
}

function bytesOf(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

function resultBytes(result: Json): number {
  return bytesOf(result);
}

describe('result cap', () => {
  it('walks every tool of the catalog', () => {
    const walked = new Set(calls().map(([name]) => name));
    expect([...walked].sort()).toEqual(CATALOG_TOOLS.map((t) => t.name).sort());
  });

  it.each(['2025-11-25', '2025-03-26'])(
    'keeps every largest answer under the default cap (%s)',
    async (version) => {
      const ctx = { ...biggestCtx(), protocolVersionHeader: version };
      for (const [name, args] of calls()) {
        const res = await callTool(ctx, name, args);
        const result = res.body.result;
        expect(result, `${name}: ${JSON.stringify(res.body.error)}`).toBeDefined();
        // Every tool answers its largest case with its own (previewed) shape, not with result_too_large.
        expect(result.isError, `${name}: ${JSON.stringify(result.structuredContent.error)}`).toBeFalsy();
        // The cap holds for each side: what a content-reading client and a structuredContent-reading one get.
        const contentBytes = bytesOf(result.content);
        const structuredBytes = bytesOf(result.structuredContent);
        expect(contentBytes, `${name}: content ${contentBytes} bytes`).toBeLessThanOrEqual(
          DEFAULT_MAX_RESULT_BYTES,
        );
        expect(structuredBytes, `${name}: structured ${structuredBytes} bytes`).toBeLessThanOrEqual(
          DEFAULT_MAX_RESULT_BYTES,
        );
        // Both sides carry the same answer (or the same preview), whatever its size.
        expect(result.content[0], name).toEqual({
          type: 'text',
          text: JSON.stringify(result.structuredContent),
        });
      }
      expect(ctx.errors).toEqual([]);
    },
    60_000,
  );

  it('previews the biggest definition, marked truncated, and points at the resource for the whole literal', async () => {
    const res = await callTool(biggestCtx(), 'get_flow_definition', { flow_slug: BIG });
    const out = res.body.result.structuredContent;
    expect(out.truncated).toBe(true);
    expect(literal.startsWith(out.flowLiteral)).toBe(true);
    expect(out.flowLiteral.length).toBeGreaterThan(10_000);
    expect(out.sizeBytes).toBe(Buffer.byteLength(literal, 'utf8'));
    expect(out.resourceUri).toBe(`flowgate://flows/${BIG}/definition/draft`);
    // A client reading only content gets the same preview, notice and link.
    expect(JSON.parse(res.body.result.content[0].text)).toEqual(out);
  });

  it('answers a 5 MB result with a preview and its resource', async () => {
    const res = await callTool(biggestCtx(), 'get_run_status', {
      run_id: RUN_ID,
      include_result: true,
      include_events: true,
    });
    const out = res.body.result.structuredContent;
    expect(out.result).toMatchObject({ truncated: true, resourceUri: `flowgate://runs/${RUN_ID}/result` });
    expect(out.events.more).toBe(true);
    expect(out.events.items.length).toBeLessThan(LIMITS.runEventsPageSize);
    expect(out.events.items.length).toBeGreaterThan(0);
  });

  it('carries the whole answer as compact JSON text, however large, under both protocol generations', async () => {
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      const ctx = { ...biggestCtx(), protocolVersionHeader: version };
      // A definition, once only summarised in the text block, is now there whole.
      const def = (await callTool(ctx, 'get_flow_definition', { flow_slug: 'draft-only' })).body.result;
      expect(def.structuredContent.flowLiteral).toContain(':slug :draft-only');
      expect(def.content[0]).toEqual({ type: 'text', text: JSON.stringify(def.structuredContent) });
      expect(def.content[0].text).not.toContain('\n  ');
      // A page far above 2 KB: the text is the JSON, not a summary pointing at structuredContent.
      const large = (await callTool(ctx, 'list_connections', { limit: 100 })).body.result;
      expect(bytesOf(large.structuredContent)).toBeGreaterThan(20 * 1024);
      expect(large.content[0].text).toBe(JSON.stringify(large.structuredContent));
      expect(large.content[0].text).not.toContain('not repeated here');
      for (const name of ['get_workspace_context', 'search_flows', 'search_flow_tools']) {
        const r = (await callTool(ctx, name, {})).body.result;
        expect(r.content[0].text, `${name} (${version})`).toBe(JSON.stringify(r.structuredContent));
      }
    }
  });

  it('applies the cap to each side: an answer between one and two caps in total is sent whole', async () => {
    const ctx = { ...biggestCtx(), maxResultBytes: 40 * 1024 };
    const result = (await callTool(ctx, 'list_connections', { limit: 100 })).body.result;
    expect(result.isError).toBeUndefined();
    expect(bytesOf(result.structuredContent)).toBeLessThanOrEqual(40 * 1024);
    expect(bytesOf(result.content)).toBeLessThanOrEqual(40 * 1024);
    // Together the two sides are above the cap: measuring them together would have refused this answer.
    expect(resultBytes(result)).toBeGreaterThan(40 * 1024);
    expect(result.structuredContent.connections).toHaveLength(100);
  });

  it('honours a smaller configured cap with a result_too_large error that keeps a preview', async () => {
    const ctx = { ...biggestCtx(), maxResultBytes: 16 * 1024 };
    const res = await callTool(ctx, 'list_connections', { limit: 100 });
    const result = res.body.result;
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error.code).toBe('result_too_large');
    expect(result.structuredContent.details.preview.length).toBeGreaterThan(0);
    expect(bytesOf(result.content)).toBeLessThanOrEqual(16 * 1024);
    expect(bytesOf(result.structuredContent)).toBeLessThanOrEqual(16 * 1024);
    expect(ctx.audits.at(-1)).toMatchObject({ outcome: 'error', errorCode: 'result_too_large' });
    // The search page fits the smaller cap by dropping its templates, not by failing.
    const search = (await callTool(ctx, 'search_flows', { limit: 20 })).body.result;
    expect(search.isError).toBeUndefined();
    expect(bytesOf(search.content)).toBeLessThanOrEqual(16 * 1024);
    expect(bytesOf(search.structuredContent)).toBeLessThanOrEqual(16 * 1024);
    expect(search.content[0].text).toBe(JSON.stringify(search.structuredContent));
  });
});
