import { type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { type EdnNode, type FlowModel, readEdn, validateFlow } from '@flowgate/flows';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkspaceDeps } from '../scope.js';
import {
  type ConnectionSpec,
  seedConnection,
  seedWorkspace,
  TEST_NOW,
  testWorkspaceDeps,
} from '../testing.js';
import { openWorkspace } from '../workspace.js';
import { mcpToolNeeds } from './mcp-needs.js';

function body(text: string): EdnNode {
  const read = readEdn(text);
  if (!read.ok) throw new Error(`not EDN: ${text}`);
  return read.value;
}

const needsOf = (text: string) =>
  Object.fromEntries([...mcpToolNeeds(body(text))].map(([slot, names]) => [slot, [...names].sort()]));

describe('mcpToolNeeds', () => {
  it('collects :tool of :mcp steps and :allow of :llm :tools, wherever the steps are', () => {
    expect(
      needsOf(`(let [input (flow/input)
                     found (flow/step :mcp :find {:connection :tools :tool "search" :arguments {:q (:q input)}})]
                 (if (:deep input)
                   (for [x (:items input)]
                     (flow/step :llm :ask {:connection :llm
                                           :prompt "p"
                                           :tools [{:mcp :tools :allow ["fetch" {:name "open" :trusted-metadata true}]}
                                                   {:mcp :docs :allow ["read"] :trusted-metadata false}]}))
                   found))`),
    ).toEqual({ tools: ['fetch', 'open', 'search'], docs: ['read'] });
  });

  it('keeps a slot whose tool names are computed, and ignores what it does not understand', () => {
    expect(
      needsOf(`[(flow/step :mcp :a {:connection :tools :tool (str "se" "arch")})
                (flow/step :mcp :b {:connection "not-a-keyword" :tool "x"})
                (flow/step :mcp :c)
                (flow/step :llm :d {:connection :llm :tools {:mcp :weird}})
                (flow/step :llm :e {:connection :llm :tools [{:function :f} {:mcp :other :allow "all"} 42
                                                            {:mcp :more :allow [7 {:name :kw} {:name "ok"}]}]})
                (flow/step :http :f {:connection :api :tool "not-mcp"})
                (flow/step :mcp :g {:connection :tools :tool "search"})
                #{(flow/step :mcp :h {:connection :set-slot :tool "in-set"})}
                {:k (flow/step :mcp :i {:connection :map-slot :tool "in-map"})}]`),
    ).toEqual({
      tools: ['search'],
      other: [],
      more: ['ok'],
      'set-slot': ['in-set'],
      'map-slot': ['in-map'],
    });
    expect(needsOf('(flow/step :http :call {:connection :api :path "/"})')).toEqual({});
  });
});

describe('readiness: mcp_tools_available', () => {
  let h: DbHandle;
  let deps: WorkspaceDeps;
  beforeAll(async () => {
    h = await createTestDb();
    deps = testWorkspaceDeps(h.db);
  });
  afterAll(async () => h?.close());

  const BODY = `(let [found (flow/step :mcp :find {:connection :tools :tool "search" :arguments {}})]
   (flow/step :llm :ask {:connection :llm :prompt "p"
                         :tools [{:mcp :tools :allow ["fetch" {:name "open"}]}]}))`;
  const REQUIRES = '[{:slot :tools :type :mcp-server} {:slot :llm :type :llm-provider}]';
  const LITERAL = `{:slug :uses-mcp :requires ${REQUIRES}
 :invocations {:default {:inputs []}}
 :interfaces {:mcp [{:tool-name "uses_mcp" :invocation :default}]}
 :flow ${BODY}}`;

  /**
   * The model of LITERAL. It is built from a body the validator of this package version knows and then given the
   * MCP body, so the check is tested whether or not the validator accepts `:mcp` steps yet.
   */
  function model(): FlowModel {
    const base = validateFlow(LITERAL.replace(BODY, '(flow/input)'));
    if (!base.model) throw new Error(JSON.stringify(base.diagnostics));
    return { ...base.model, flow: body(BODY) };
  }

  let n = 0;
  async function readinessWith(health: ConnectionSpec['health'] | null) {
    const ws = await seedWorkspace(h.db, `ws-mcp-ready-${++n}`, 'MCP readiness');
    const tools = await seedConnection(deps, ws, 1, {
      name: 'remote',
      type: 'mcp-server',
      ...(health ? { health } : {}),
    });
    const llm = await seedConnection(deps, ws, 2, {
      type: 'llm-provider',
      health: { ok: true, checkedAt: TEST_NOW },
    });
    await repos.saveDraft(h.db, ws, { literal: LITERAL, model: model() });
    await repos.setFlowBindings(h.db, ws, 'uses-mcp', 'draft', { tools, llm });
    const flow = await openWorkspace(deps, {
      workspaceId: ws,
      actor: { kind: 'user', id: 'usr_1' },
    }).flows.open({
      slug: 'uses-mcp',
      installationId: null,
      includeInstalled: false,
    });
    if (!flow) throw new Error('no flow');
    const readiness = await flow.readiness('draft');
    return {
      check: readiness.checks.find((c) => c.check === 'mcp_tools_available'),
      nextSteps: readiness.nextSteps.filter((s) => s !== 'fix_validation_errors'),
    };
  }

  const listed = (tools: string[], toolCount = tools.length) => ({
    ok: true,
    checkedAt: TEST_NOW,
    mcp: { protocolVersion: '2025-06-18', serverName: 'r', toolCount, tools },
  });

  it('passes when the last check listed every tool the flow names', async () => {
    expect(await readinessWith(listed(['open', 'search', 'fetch', 'other']))).toEqual({
      check: {
        check: 'mcp_tools_available',
        status: 'pass',
        message: 'the bound MCP server(s) listed every tool the flow names',
      },
      nextSteps: [],
    });
  });

  it('fails naming the slot, the connection and each missing tool', async () => {
    expect(await readinessWith(listed(['search']))).toEqual({
      check: {
        check: 'mcp_tools_available',
        status: 'fail',
        message: 'missing MCP tools: tools (remote) lacks fetch, open',
      },
      nextSteps: ['check_mcp_tools'],
    });
  });

  it('warns when the connection was never checked, asking for one check', async () => {
    expect(await readinessWith(null)).toEqual({
      check: {
        check: 'mcp_tools_available',
        status: 'warn',
        message: 'tools never listed (check the connection): tools',
      },
      nextSteps: ['check_unchecked_connections'],
    });
  });

  it('only warns about a name past the stored part of a long tool list', async () => {
    const check = (await readinessWith(listed(['search', 'fetch'], 350))).check;
    expect(check).toEqual({
      check: 'mcp_tools_available',
      status: 'warn',
      message: 'not among the stored tool names: tools (remote): open',
    });
  });

  it('leaves an unhealthy connection to connections_healthy', async () => {
    const { check, nextSteps } = await readinessWith({ ok: false, checkedAt: TEST_NOW, message: 'down' });
    expect(check?.status).toBe('skip');
    expect(nextSteps).toEqual(['fix_unhealthy_connections']);
  });
});
