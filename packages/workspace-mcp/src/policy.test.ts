import type { Capability } from '@flowgate/auth';
import { seedWorkspace } from '@flowgate/workspace/testing';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { CATALOG, type CatalogTool, getTool, TOOL_NAMES, visibleTools } from './catalog.js';
import { handleMcpMessage } from './dispatch.js';
import { type Narrowing, NO_NARROWING, parseNarrowingHeaders } from './narrowing.js';
import {
  describeBlockers,
  evaluateTool,
  OPEN_WORKSPACE_POLICY,
  type PolicyContext,
  visibilityKey,
  type WorkspacePolicy,
} from './policy.js';
import type { Blocker } from './schemas.js';
import { TOOLSETS } from './schemas.js';
import { ALL_CAPABILITIES, useTestDb } from './testing.js';

function narrowing(headers: Parameters<typeof parseNarrowingHeaders>[0]): Narrowing {
  const r = parseNarrowingHeaders(headers);
  if (!r.ok) throw new Error(r.error.message);
  return r.narrowing;
}

function ctx(
  caps: readonly Capability[],
  n: Narrowing = NO_NARROWING,
  policy: WorkspacePolicy = OPEN_WORKSPACE_POLICY,
): PolicyContext {
  return { capabilities: new Set(caps), narrowing: n, workspacePolicy: policy };
}

const tool = (name: string): CatalogTool => {
  const t = getTool(name);
  if (!t) throw new Error(name);
  return t;
};

describe('evaluateTool: the narrowing header table (docs/mcp-surface.md)', () => {
  it('lists every tool the capabilities allow when nothing narrows', () => {
    expect(visibleTools(ctx(ALL_CAPABILITIES)).map((t) => t.name)).toEqual([...TOOL_NAMES]);
    expect(visibleTools(ctx([])).map((t) => t.name)).toEqual(['get_workspace_context']);
  });

  it('reports missing capabilities', () => {
    expect(evaluateTool(tool('list_connections'), ctx(['feedback.send']))).toEqual({
      visible: false,
      blockers: [
        { reason: 'missing_service_account_capabilities', missingCapabilities: ['connections.read'] },
      ],
    });
  });

  it('X-MCP-Toolsets keeps tools in any listed toolset', () => {
    const c = ctx(ALL_CAPABILITIES, narrowing({ toolsets: 'setup,feedback' }));
    expect(visibleTools(c).map((t) => t.name)).toEqual([
      'list_connections',
      'check_connections',
      'check_flow_readiness',
      'send_feedback',
    ]);
    expect(evaluateTool(tool('get_workspace_context'), c).blockers).toEqual([
      { reason: 'toolset_policy', toolToolsets: ['context', 'read'], activeToolsets: ['setup', 'feedback'] },
    ]);
  });

  it('X-MCP-Tools alone keeps only the named tools', () => {
    const c = ctx(ALL_CAPABILITIES, narrowing({ tools: 'send_feedback' }));
    expect(visibleTools(c).map((t) => t.name)).toEqual(['send_feedback']);
    expect(evaluateTool(tool('list_connections'), c).blockers).toEqual([{ reason: 'include_tools_policy' }]);
  });

  it('X-MCP-Tools with X-MCP-Toolsets adds the named tools to the toolsets', () => {
    const c = ctx(ALL_CAPABILITIES, narrowing({ toolsets: 'feedback', tools: 'list_connections' }));
    expect(visibleTools(c).map((t) => t.name)).toEqual(['list_connections', 'send_feedback']);
    // Neither in the toolsets nor named: both narrowing blockers apply.
    expect(evaluateTool(tool('check_connections'), c).blockers).toEqual([
      { reason: 'toolset_policy', toolToolsets: ['read', 'setup'], activeToolsets: ['feedback'] },
      { reason: 'include_tools_policy' },
    ]);
  });

  it('X-MCP-Exclude-Tools wins over everything', () => {
    const c = ctx(
      ALL_CAPABILITIES,
      narrowing({ toolsets: 'all', tools: 'send_feedback', excludeTools: 'send_feedback' }),
    );
    expect(visibleTools(c).map((t) => t.name)).toEqual(TOOL_NAMES.filter((n) => n !== 'send_feedback'));
    expect(evaluateTool(tool('send_feedback'), c).blockers).toEqual([{ reason: 'exclude_tools_policy' }]);
  });

  it('read-only hides running flows and the draft and release writers, and keeps send_feedback', () => {
    const c = ctx(ALL_CAPABILITIES, narrowing({ readOnly: 'true' }), { readOnly: true, disabledTools: [] });
    expect(visibleTools(c).map((t) => t.name)).toEqual(
      TOOL_NAMES.filter((n) => !['call_flow_tool', 'create_flow_draft', 'release_flow'].includes(n)),
    );
    expect(evaluateTool(tool('release_flow'), c).blockers).toEqual([
      { reason: 'read_only_policy' },
      { reason: 'workspace_read_only_policy' },
    ]);
  });

  it('read-only hides a mutating tool, from the header and from workspace policy separately', () => {
    const writer = { ...tool('send_feedback'), name: 'create_flow_draft', readOnlyExempt: false };
    expect(evaluateTool(writer, ctx(ALL_CAPABILITIES, narrowing({ readOnly: 'yes' }))).blockers).toEqual([
      { reason: 'read_only_policy' },
    ]);
    expect(
      evaluateTool(writer, ctx(ALL_CAPABILITIES, NO_NARROWING, { readOnly: true, disabledTools: [] }))
        .blockers,
    ).toEqual([{ reason: 'workspace_read_only_policy' }]);
  });

  it('workspace disable list hides the tool', () => {
    const c = ctx(ALL_CAPABILITIES, NO_NARROWING, {
      readOnly: false,
      disabledTools: ['check_connections', 'not_a_tool'],
    });
    expect(evaluateTool(tool('check_connections'), c)).toEqual({
      visible: false,
      blockers: [{ reason: 'workspace_disabled_tool' }],
    });
  });

  it('lists every applicable blocker, in a stable order', () => {
    const c = ctx(['feedback.send'], narrowing({ toolsets: 'feedback', excludeTools: 'list_connections' }), {
      readOnly: true,
      disabledTools: ['list_connections'],
    });
    expect(evaluateTool(tool('list_connections'), c).blockers.map((b) => b.reason)).toEqual([
      'missing_service_account_capabilities',
      'toolset_policy',
      'exclude_tools_policy',
      'workspace_disabled_tool',
    ]);
  });

  it('describes blockers for humans without losing any', () => {
    const text = describeBlockers('list_connections', [
      { reason: 'missing_service_account_capabilities', missingCapabilities: ['connections.read'] },
      { reason: 'toolset_policy', toolToolsets: ['read', 'setup'], activeToolsets: ['feedback'] },
    ]);
    expect(text).toBe(
      'list_connections is not available: the token lacks connections.read (grant it to the principal); ' +
        'X-MCP-Toolsets (feedback) includes none of its toolsets (read, setup). ' +
        'See structuredContent.details.blockers; read flowgate://mcp-docs/tool-safety.',
    );
  });
});

// ---- property test ---------------------------------------------------------------------------------------

const TRUE_WORDS = ['true', '1', 'yes', 'on', 'TRUE', ' On '];
const FALSE_WORDS = ['false', '0', 'no', 'off', '', 'OFF'];

/**
 * Mutating tools of the full spec catalog, not served yet, so read-only rules are exercised too. They take part
 * in evaluateTool checks only (narrowing headers cannot name them yet).
 */
const SYNTHETIC: CatalogTool[] = [
  {
    ...tool('send_feedback'),
    name: 'call_flow_tool',
    toolsets: ['run'],
    capabilities: ['flows.read', 'flows.run'],
    readOnlyExempt: false,
  },
  {
    ...tool('send_feedback'),
    name: 'create_flow_draft',
    toolsets: ['authoring'],
    capabilities: ['flows.manage'],
    readOnlyExempt: false,
  },
] as unknown as CatalogTool[];

interface Scenario {
  caps: Capability[];
  toolsets: string[] | null;
  tools: string[] | null;
  exclude: string[] | null;
  readOnly: string | null;
  policy: WorkspacePolicy;
}

const listHeader = (values: string[] | null): string | null =>
  values === null ? null : values.map((v) => ` ${v} `).join(',');

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  caps: fc.subarray([...ALL_CAPABILITIES]),
  toolsets: fc.option(fc.subarray(['all', ...TOOLSETS]), { nil: null }),
  tools: fc.option(fc.subarray([...TOOL_NAMES]), { nil: null }),
  exclude: fc.option(fc.subarray([...TOOL_NAMES]), { nil: null }),
  readOnly: fc.option(fc.constantFrom(...TRUE_WORDS, ...FALSE_WORDS), { nil: null }),
  policy: fc.record({
    readOnly: fc.boolean(),
    disabledTools: fc.subarray([...TOOL_NAMES, 'call_flow_tool', 'retired_tool']),
  }),
});

function headerNarrowing(s: Scenario): Narrowing {
  return narrowing({
    toolsets: listHeader(s.toolsets),
    tools: listHeader(s.tools),
    excludeTools: listHeader(s.exclude),
    readOnly: s.readOnly,
  });
}

/**
 * Independent statement of the narrowing rules (docs/mcp-surface.md), written from the raw header values, reason by
 * reason.
 */
function oracle(t: CatalogTool, s: Scenario): Blocker[] {
  const out: Blocker[] = [];
  const missing = t.capabilities.filter((c) => !s.caps.includes(c));
  if (missing.length > 0)
    out.push({ reason: 'missing_service_account_capabilities', missingCapabilities: missing });
  const readOnlyHeader = s.readOnly !== null && TRUE_WORDS.includes(s.readOnly);
  const hidesWrites = t.mutating && t.name !== 'send_feedback';
  if (readOnlyHeader && hidesWrites) out.push({ reason: 'read_only_policy' });
  const toolsetsGiven = s.toolsets !== null && s.toolsets.length > 0;
  const active = !toolsetsGiven
    ? []
    : s.toolsets?.includes('all')
      ? [...TOOLSETS]
      : TOOLSETS.filter((ts) => s.toolsets?.includes(ts));
  const inActive = t.toolsets.some((ts) => active.includes(ts));
  const toolsGiven = s.tools !== null && s.tools.length > 0;
  const named = toolsGiven && (s.tools as string[]).includes(t.name);
  if (toolsetsGiven && !inActive && !named)
    out.push({ reason: 'toolset_policy', toolToolsets: [...t.toolsets], activeToolsets: active });
  if (toolsGiven && !named && !(toolsetsGiven && inActive)) out.push({ reason: 'include_tools_policy' });
  if (s.exclude?.includes(t.name)) out.push({ reason: 'exclude_tools_policy' });
  if (s.policy.readOnly && hidesWrites) out.push({ reason: 'workspace_read_only_policy' });
  if (s.policy.disabledTools.includes(t.name)) out.push({ reason: 'workspace_disabled_tool' });
  return out;
}

describe('visibilityKey', () => {
  const expected = (c: PolicyContext) =>
    CATALOG.map((t) => (evaluateTool(t, c).visible ? '1' : '0')).join('');

  it('is kept for the same capabilities and policy objects when nothing narrows, and follows either changing', () => {
    const caps = new Set<Capability>(ALL_CAPABILITIES);
    const open = visibilityKey(CATALOG, {
      capabilities: caps,
      narrowing: NO_NARROWING,
      workspacePolicy: OPEN_WORKSPACE_POLICY,
    });
    expect(open).toBe(expected(ctx(ALL_CAPABILITIES)));
    expect(open).toMatch(/^1+$/);
    // Another request of the same caller: other context objects, the same parts.
    expect(
      visibilityKey(CATALOG, {
        capabilities: caps,
        narrowing: NO_NARROWING,
        workspacePolicy: OPEN_WORKSPACE_POLICY,
      }),
    ).toBe(open);
    // The workspace cache hands out a new policy object when the policy changes.
    const readOnly: WorkspacePolicy = { readOnly: true, disabledTools: [] };
    const hidden = visibilityKey(CATALOG, {
      capabilities: caps,
      narrowing: NO_NARROWING,
      workspacePolicy: readOnly,
    });
    expect(hidden).toBe(expected(ctx(ALL_CAPABILITIES, NO_NARROWING, readOnly)));
    expect(hidden).not.toBe(open);
    // A key whose capabilities changed is a new set.
    const fewer: Capability[] = ['flows.read'];
    expect(visibilityKey(CATALOG, ctx(fewer))).toBe(expected(ctx(fewer)));
    expect(visibilityKey(CATALOG, ctx(fewer))).not.toBe(open);
  });

  it('is computed for each request that narrows (headers or tools/list params)', () => {
    const caps = new Set<Capability>(ALL_CAPABILITIES);
    const headers = narrowing({ toolsets: 'run' });
    const c = { capabilities: caps, narrowing: headers, workspacePolicy: OPEN_WORKSPACE_POLICY };
    expect(visibilityKey(CATALOG, c)).toBe(expected(c));
    expect(visibilityKey(CATALOG, c)).not.toMatch(/^1+$/);
    const plain = { capabilities: caps, narrowing: NO_NARROWING, workspacePolicy: OPEN_WORKSPACE_POLICY };
    expect(visibilityKey(CATALOG, plain, headers)).toBe(expected(c));
    expect(visibilityKey(CATALOG, plain)).toMatch(/^1+$/);
  });
});

describe('policy properties', () => {
  // The property calls every tool through dispatch: on a real workspace with nothing in it (no outbound checks).
  const env = useTestDb();
  beforeAll(async () => {
    await seedWorkspace(env.db, 'ws-acme', 'Acme');
  });

  it('listing, blockers and narrowing agree with an independent oracle', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const c = ctx(s.caps, headerNarrowing(s), s.policy);
        const listed = visibleTools(c);
        const listedNames = listed.map((t) => t.name);
        // (a) never more than the capabilities allow
        for (const t of listed) for (const cap of t.capabilities) expect(s.caps).toContain(cap);
        for (const t of [...CATALOG, ...SYNTHETIC]) {
          const ev = evaluateTool(t, c);
          const expected = oracle(t, s);
          // (b) listed ⇔ no blocker; blockers are exactly the applicable reasons
          expect(ev.blockers).toEqual(expected);
          expect(ev.visible).toBe(expected.length === 0);
          if (!SYNTHETIC.includes(t)) expect(listedNames.includes(t.name)).toBe(ev.visible);
        }
        // (c) headers never add a tool
        const unnarrowed = visibleTools(ctx(s.caps, NO_NARROWING, s.policy)).map((t) => t.name);
        for (const name of listedNames) expect(unnarrowed).toContain(name);
      }),
      { numRuns: 1500 },
    );
  });

  it('a tool is callable exactly when tools/list lists it, and tools/list params only narrow', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenarioArb,
        fc.option(fc.subarray([...TOOL_NAMES], { minLength: 1 }), { nil: null }),
        async (s, paramTools) => {
          const c = env.ctx({
            capabilities: new Set(s.caps),
            narrowing: headerNarrowing(s),
            workspacePolicy: s.policy,
          });
          const list = await handleMcpMessage({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, c);
          const listed: string[] = JSON.parse(list.body as string).result.tools.map(
            (t: { name: string }) => t.name,
          );
          expect(listed).toEqual(visibleTools(c).map((t) => t.name));
          if (paramTools) {
            const narrowed = await handleMcpMessage(
              { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { tools: paramTools } },
              c,
            );
            const names: string[] = JSON.parse(narrowed.body as string).result.tools.map(
              (t: { name: string }) => t.name,
            );
            expect(names).toEqual(listed.filter((n) => (paramTools as string[]).includes(n)));
          }
          for (const name of TOOL_NAMES) {
            // Arguments that are valid for every tool would differ per tool; an empty object is enough to see
            // whether the call was blocked before validation.
            const res = await handleMcpMessage(
              { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: {} } },
              c,
            );
            const result = JSON.parse(res.body as string).result;
            const blocked = result.isError === true && result.structuredContent.error.code === 'tool_blocked';
            expect(blocked).toBe(!listed.includes(name));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
