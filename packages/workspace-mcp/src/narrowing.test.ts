import { describe, expect, it } from 'vitest';
import { TOOL_NAMES } from './catalog.js';
import {
  MAX_NARROWING_ENTRIES,
  MAX_NARROWING_ENTRY_CHARS,
  NO_NARROWING,
  narrowingHeadersFrom,
  parseNarrowingHeaders,
  parseNarrowingParams,
} from './narrowing.js';
import { TOOLSETS } from './schemas.js';

function ok(headers: Parameters<typeof parseNarrowingHeaders>[0]) {
  const r = parseNarrowingHeaders(headers);
  if (!r.ok) throw new Error(r.error.message);
  return r.narrowing;
}

describe('parseNarrowingHeaders', () => {
  it('means no narrowing when no header is sent', () => {
    // The one object, which the visible-set keys are kept by (policy.ts).
    expect(ok({})).toBe(NO_NARROWING);
    expect(ok({ toolsets: '', tools: '' })).toBe(NO_NARROWING);
    expect(ok({ toolsets: null, tools: undefined, excludeTools: null, readOnly: null })).toEqual(
      NO_NARROWING,
    );
  });

  it('splits on commas, trims, drops empties and duplicates; empty headers are no header', () => {
    expect(ok({ toolsets: ' read , feedback,,read ' }).toolsets).toEqual(['read', 'feedback']);
    expect(ok({ toolsets: ' , ', tools: '' }).toolsets).toBeNull();
    expect(ok({ tools: '' }).tools).toBeNull();
    expect(ok({ tools: 'send_feedback, list_connections' }).tools).toEqual([
      'list_connections',
      'send_feedback',
    ]);
    expect(ok({ excludeTools: 'check_connections,' }).excludeTools).toEqual(['check_connections']);
  });

  it('expands `all` to every toolset and accepts toolset names in any case', () => {
    expect(ok({ toolsets: 'all' }).toolsets).toEqual([...TOOLSETS]);
    expect(ok({ toolsets: 'feedback, ALL' }).toolsets).toEqual([...TOOLSETS]);
    expect(ok({ toolsets: 'Read,SETUP' }).toolsets).toEqual(['read', 'setup']);
  });

  it.each([
    ['true', true],
    ['1', true],
    ['yes', true],
    ['on', true],
    [' TRUE ', true],
    ['On', true],
    ['false', false],
    ['0', false],
    ['no', false],
    ['off', false],
    ['', false],
    ['  ', false],
  ])('reads X-MCP-Readonly %j as %s', (value, expected) => {
    expect(ok({ readOnly: value }).readOnly).toBe(expected);
  });

  it('rejects a read-only value that is not a boolean', () => {
    const r = parseNarrowingHeaders({ readOnly: 'maybe' });
    expect(r).toEqual({
      ok: false,
      error: {
        code: 'invalid_narrowing',
        message: expect.stringContaining('X-MCP-Readonly: unknown "maybe"'),
        unknown: ['maybe'],
        valid: ['true', '1', 'yes', 'on', 'false', '0', 'no', 'off'],
        problems: [
          {
            source: 'X-MCP-Readonly',
            unknown: ['maybe'],
            valid: ['true', '1', 'yes', 'on', 'false', '0', 'no', 'off'],
          },
        ],
      },
    });
  });

  it('names unknown toolsets and lists the valid ones', () => {
    const r = parseNarrowingHeaders({ toolsets: 'read,wrte,admin' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.unknown).toEqual(['wrte', 'admin']);
    expect(r.error.valid).toEqual(['all', ...TOOLSETS]);
    expect(r.error.message).toContain('X-MCP-Toolsets: unknown "wrte", "admin"');
  });

  it('accepts every catalog tool name (seed examples included) and names the unknown ones', () => {
    // The header the product docs use as an example.
    const example = parseNarrowingHeaders({ tools: 'search_flows,get_run_status' });
    expect(example).toMatchObject({ ok: true, narrowing: { tools: ['search_flows', 'get_run_status'] } });
    const r = parseNarrowingHeaders({
      tools: 'list_connections,call_flow_tool,run_flow',
      excludeTools: 'get_run_status,delete_everything',
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.unknown).toEqual(['run_flow', 'delete_everything']);
    expect(r.error.valid).toEqual([...TOOL_NAMES]);
    expect(r.error.problems.map((p) => p.source)).toEqual(['X-MCP-Tools', 'X-MCP-Exclude-Tools']);
  });

  it('checks names against the tools of the endpoint when it has its own (a per-flow endpoint)', () => {
    const names = ['enrich_company', 'get_run_status', 'inspect_run_step'];
    expect(parseNarrowingHeaders({ tools: 'enrich_company' }, names)).toMatchObject({
      ok: true,
      narrowing: { tools: ['enrich_company'] },
    });
    const r = parseNarrowingHeaders({ tools: 'search_flows' }, names);
    expect(r).toMatchObject({ ok: false, error: { unknown: ['search_flows'], valid: names } });
  });

  it('reports problems of several headers at once', () => {
    const r = parseNarrowingHeaders({ toolsets: 'nope', tools: 'List_Connections', readOnly: 'sure' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.unknown).toEqual(['nope', 'List_Connections', 'sure']);
    expect(r.error.problems).toHaveLength(3);
  });

  it('never reflects a hostile header in full', () => {
    const many = Array.from({ length: 60 }, (_, i) => `x${i}${'y'.repeat(120)}`).join(',');
    const r = parseNarrowingHeaders({ tools: many });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.unknown).toHaveLength(20);
    for (const u of r.error.unknown) expect(u.length).toBeLessThanOrEqual(65);
  });

  it(`refuses more than ${MAX_NARROWING_ENTRIES} entries, duplicates and empties included`, () => {
    const ok64 = parseNarrowingHeaders({
      tools: Array(MAX_NARROWING_ENTRIES).fill('send_feedback').join(','),
    });
    expect(ok64).toEqual({ ok: true, narrowing: { ...NO_NARROWING, tools: ['send_feedback'] } });
    const r = parseNarrowingHeaders({
      tools: `,,${Array(MAX_NARROWING_ENTRIES + 1)
        .fill('send_feedback')
        .join(', ,')}`,
    });
    expect(r).toEqual({
      ok: false,
      error: {
        code: 'invalid_narrowing',
        message: `Invalid narrowing. X-MCP-Tools: at most 64 entries; valid: ${TOOL_NAMES.join(', ')}`,
        unknown: ['(more than 64 entries)'],
        valid: [...TOOL_NAMES],
        problems: [
          {
            source: 'X-MCP-Tools',
            unknown: ['(more than 64 entries)'],
            valid: [...TOOL_NAMES],
            detail: 'at most 64 entries',
          },
        ],
      },
    });
  });

  it(`refuses an entry longer than ${MAX_NARROWING_ENTRY_CHARS} characters, echoing it shortened`, () => {
    const long = 'r'.repeat(MAX_NARROWING_ENTRY_CHARS + 1);
    const r = parseNarrowingHeaders({ toolsets: `read, ${long}` });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.message).toBe(
      `Invalid narrowing. X-MCP-Toolsets: an entry is longer than 128 characters; valid: all, ${TOOLSETS.join(', ')}`,
    );
    expect(r.error.unknown).toEqual([`${'r'.repeat(64)}…`]);
    // Exactly at the limit it is an ordinary (unknown) name.
    const atLimit = parseNarrowingHeaders({ toolsets: 'r'.repeat(MAX_NARROWING_ENTRY_CHARS) });
    expect(atLimit.ok === false && atLimit.error.problems[0]?.detail).toBeUndefined();
  });

  it('refuses a megabyte list of distinct entries as too many', () => {
    const huge = Array.from({ length: 20_000 }, (_, i) => `tool_${i}_${'z'.repeat(40)}`).join(',');
    const r = parseNarrowingHeaders({ excludeTools: huge });
    expect(r.ok === false && r.error.problems).toEqual([
      expect.objectContaining({ source: 'X-MCP-Exclude-Tools', detail: 'at most 64 entries' }),
    ]);
  });

  it('reads the headers case-insensitively through a getter', () => {
    const headers = new Headers({
      'X-MCP-Toolsets': 'read',
      'x-mcp-readonly': 'yes',
      'X-Mcp-Exclude-Tools': 'check_connections',
    });
    expect(ok(narrowingHeadersFrom((n) => headers.get(n)))).toEqual({
      toolsets: ['read'],
      tools: null,
      excludeTools: ['check_connections'],
      readOnly: true,
    });
  });
});

describe('parseNarrowingParams (tools/list)', () => {
  it('returns null when no narrowing param is present', () => {
    expect(parseNarrowingParams({})).toBeNull();
    expect(parseNarrowingParams({ cursor: 'x', _meta: {} })).toBeNull();
  });

  it('accepts arrays or comma strings and booleans', () => {
    expect(
      parseNarrowingParams({
        toolsets: ['read'],
        tools: 'send_feedback',
        excludeTools: ['list_connections'],
        readOnly: true,
      }),
    ).toEqual({
      ok: true,
      narrowing: {
        toolsets: ['read'],
        tools: ['send_feedback'],
        excludeTools: ['list_connections'],
        readOnly: true,
      },
    });
    expect(parseNarrowingParams({ readOnly: 'off' })).toEqual({
      ok: true,
      narrowing: { ...NO_NARROWING, readOnly: false },
    });
  });

  it(`refuses arrays of more than ${MAX_NARROWING_ENTRIES} entries before joining them`, () => {
    const r = parseNarrowingParams({ tools: Array(20_000).fill('send_feedback') });
    expect(r).toEqual({
      ok: false,
      error: expect.objectContaining({
        code: 'invalid_narrowing',
        message: `Invalid narrowing. tools: at most 64 entries; valid: ${TOOL_NAMES.join(', ')}`,
        unknown: ['(more than 64 entries)'],
      }),
    });
    const joined = parseNarrowingParams({ toolsets: ['read,search', 'read'] });
    expect(joined).toEqual({ ok: true, narrowing: { ...NO_NARROWING, toolsets: ['read', 'search'] } });
  });

  it('rejects unknown names and wrong types', () => {
    const r = parseNarrowingParams({ tools: ['nope'] });
    expect(r?.ok).toBe(false);
    expect(r && !r.ok && r.error.unknown).toEqual(['nope']);
    const t = parseNarrowingParams({ toolsets: [1, 2], readOnly: 3 });
    expect(t && !t.ok && t.error.problems.map((p) => p.source)).toEqual(['toolsets', 'readOnly']);
  });
});
