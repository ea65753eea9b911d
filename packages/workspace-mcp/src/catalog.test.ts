import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CATALOG, getTool, TOOL_NAMES, TOOLS_BY_TOOLSET } from './catalog.js';
import { publishOutputSchema } from './published-schema.js';
import { TOOLSETS } from './schemas.js';
import { publishAnnotations, UNSTORABLE_TEXT_MESSAGE } from './tool.js';

/** The tools the product spec names, in the order they are listed. */
const SPEC_TOOL_NAMES = [
  'get_workspace_context',
  'search_flows',
  'search_flow_tools',
  'list_connections',
  'check_connections',
  'inspect_flow_tool',
  'call_flow_tool',
  'get_run_status',
  'inspect_run_step',
  'check_flow_readiness',
  'get_step_reference',
  'send_feedback',
  'validate_flow_definition',
  'get_flow_definition',
  'create_flow_draft',
  'release_flow',
];

describe('catalog', () => {
  it('serves exactly the tools whose behaviour exists, in a fixed order', () => {
    expect(TOOL_NAMES).toEqual(SPEC_TOOL_NAMES);
  });

  it.each(CATALOG.map((t) => [t.name, t] as const))('%s is complete and well-formed', (_name, tool) => {
    expect(tool.name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
    expect(tool.title.length).toBeGreaterThan(3);
    expect(tool.description.length).toBeGreaterThan(120);
    expect(tool.toolsets.length).toBeGreaterThan(0);
    for (const ts of tool.toolsets) expect(TOOLSETS).toContain(ts);
    expect(tool.annotations).toEqual({
      title: tool.title,
      readOnlyHint: expect.any(Boolean),
      destructiveHint: expect.any(Boolean),
      idempotentHint: expect.any(Boolean),
      openWorldHint: expect.any(Boolean),
    });
    // Read-only tools must not claim to be destructive; mutating tools must not claim to be read-only.
    expect(tool.annotations.readOnlyHint).toBe(!tool.mutating);
    if (tool.annotations.readOnlyHint) expect(tool.annotations.destructiveHint).toBe(false);
    expect(tool.inputSchema.type).toBe('object');
    expect(tool.inputSchema.additionalProperties).toBe(false);
    expect(tool.inputSchema.$schema).toBeUndefined();
    expect(tool.outputSchema.type).toBe('object');
    expect(JSON.stringify(tool.inputSchema)).not.toContain('$ref');
    expect(JSON.stringify(tool.outputSchema)).not.toContain('$ref');
    expect(tool.descriptor).toEqual({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: publishAnnotations(tool.annotations),
      ...(tool.task ? { execution: { taskSupport: 'optional' } } : {}),
    });
    // Published hints are the ones that differ from the protocol's defaults; a client reads the rest as defaults.
    const defaults = {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    };
    const seen = { ...defaults, ...tool.descriptor.annotations };
    expect(seen.readOnlyHint).toBe(tool.annotations.readOnlyHint);
    expect(seen.openWorldHint).toBe(tool.annotations.openWorldHint);
    if (!tool.annotations.readOnlyHint) {
      expect(seen.destructiveHint).toBe(tool.annotations.destructiveHint);
      expect(seen.idempotentHint).toBe(tool.annotations.idempotentHint);
    }
  });

  it('uses snake_case argument names and bounds every string and array argument the server accepts', () => {
    const unbounded: string[] = [];
    const visit = (schema: unknown, path: string): void => {
      if (!schema || typeof schema !== 'object') return;
      const s = schema as Record<string, unknown>;
      if (s.type === 'string' && s.maxLength === undefined && s.enum === undefined && s.pattern === undefined)
        unbounded.push(path);
      if (s.type === 'array' && s.maxItems === undefined) unbounded.push(path);
      if (s.type === 'object' && s.additionalProperties !== false && s.maxProperties === undefined)
        unbounded.push(path);
      for (const [k, v] of Object.entries(s)) {
        if (k === 'properties' && v && typeof v === 'object') {
          for (const [prop, sub] of Object.entries(v)) visit(sub, `${path}.${prop}`);
        } else if (typeof v === 'object') visit(v, `${path}.${k}`);
      }
    };
    visit(
      {
        type: 'object',
        additionalProperties: false,
        properties: { a: { type: 'string' }, b: { type: 'array', items: {} } },
      },
      'probe',
    );
    expect(unbounded).toEqual(['probe.a', 'probe.b']);
    unbounded.length = 0;
    for (const tool of CATALOG) {
      for (const key of Object.keys((tool.inputSchema.properties ?? {}) as object))
        expect(key).toMatch(/^[a-z][a-z0-9_]*$/);
      // What zod enforces: the published schema leaves the bounds of opaque arguments out (next test).
      visit(z.toJSONSchema(tool.input, { io: 'input' }), tool.name);
    }
    expect(unbounded).toEqual([]);
  });

  it('publishes every bound except on the arguments an agent only copies (ids, cursors, URIs)', () => {
    const unpublished: string[] = [];
    for (const tool of CATALOG) {
      const published = tool.inputSchema.properties as Record<string, Record<string, unknown>>;
      for (const [name, full] of Object.entries(
        (
          z.toJSONSchema(tool.input, { io: 'input' }) as {
            properties: Record<string, Record<string, unknown>>;
          }
        ).properties,
      )) {
        const item = (s: Record<string, unknown>) =>
          s.type === 'array' ? (s.items as Record<string, unknown>) : s;
        const bounded = ['minLength', 'maxLength', 'pattern'].some((k) => k in item(full));
        const kept = ['minLength', 'maxLength', 'pattern'].some((k) => k in item(published[name] ?? {}));
        if (bounded && !kept) unpublished.push(`${tool.name}.${name}`);
        expect(JSON.stringify(published[name])).not.toContain('x-flowgate-opaque');
      }
    }
    expect(unpublished.sort()).toEqual(
      [
        'call_flow_tool.installation_id',
        'check_connections.connection_ids',
        'check_connections.cursor',
        'check_flow_readiness.installation_id',
        'get_flow_definition.installation_id',
        'get_run_status.run_id',
        'inspect_flow_tool.installation_id',
        'inspect_run_step.run_id',
        'inspect_run_step.step_id',
        'list_connections.cursor',
        'search_flow_tools.cursor',
        'search_flows.cursor',
        'send_feedback.resource_uri',
        'send_feedback.run_id',
        'validate_flow_definition.installation_id',
      ].sort(),
    );
  });

  it('builds every string argument of every tool with the shared text helper (no NUL, no lone surrogate)', () => {
    // Walks the zod definitions, so a field added with a bare z.string() fails here.
    const strings: string[] = [];
    const visit = (schema: z.ZodType, path: string): void => {
      const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
      switch (def.type) {
        case 'string': {
          strings.push(path);
          const probe = (schema as z.ZodString).safeParse('slug\u0000');
          expect(probe.success, path).toBe(false);
          expect(
            probe.error?.issues.map((i) => i.message),
            path,
          ).toContain(UNSTORABLE_TEXT_MESSAGE);
          const surrogate = (schema as z.ZodString).safeParse('slug\uD800');
          expect(
            surrogate.error?.issues.map((i) => i.message),
            path,
          ).toContain(UNSTORABLE_TEXT_MESSAGE);
          return;
        }
        case 'object':
          for (const [k, v] of Object.entries(def.shape as Record<string, z.ZodType>))
            visit(v, `${path}.${k}`);
          return;
        case 'optional':
        case 'default':
        case 'nullable':
          visit(def.innerType as z.ZodType, path);
          return;
        case 'array':
          visit(def.element as z.ZodType, `${path}[]`);
          return;
        case 'record':
          visit(def.keyType as z.ZodType, `${path}{key}`);
          visit(def.valueType as z.ZodType, `${path}{value}`);
          return;
        case 'union':
          for (const o of def.options as z.ZodType[]) visit(o, path);
          return;
        case 'enum':
        case 'number':
        case 'boolean':
        case 'null':
          return;
        // A flow input value: checked against the invocation's schema, and for storable text, when a run starts.
        case 'unknown':
          return;
        default:
          throw new Error(`${path}: unexpected schema type ${def.type}; teach this test about it`);
      }
    };
    for (const tool of CATALOG) visit(tool.input, tool.name);
    expect(strings).toEqual(
      expect.arrayContaining([
        'send_feedback.summary',
        'send_feedback.context{key}',
        'send_feedback.context{value}',
        'create_flow_draft.flow_literal',
        'release_flow.release_note',
        'check_connections.connection_ids[]',
        'call_flow_tool.input{key}',
        'call_flow_tool.idempotency_key',
        'get_run_status.run_id',
        'inspect_run_step.step_id',
      ]),
    );
  });

  it('publishes every output schema from its zod success shape, with no error branch', () => {
    for (const tool of CATALOG) {
      const { $schema: _drop, ...success } = z.toJSONSchema(tool.output) as Record<string, unknown>;
      expect(tool.outputSchema).toEqual(publishOutputSchema(success));
      expect(tool.outputSchema.anyOf).toBeUndefined();
    }
  });

  it('computes JSON Schemas once: the same objects on every access', () => {
    const before = CATALOG.map((t) => [t.inputSchema, t.outputSchema, t.descriptor]);
    const again = CATALOG.map((t) => getTool(t.name));
    again.forEach((t, i) => {
      expect(t?.inputSchema).toBe(before[i]?.[0]);
      expect(t?.outputSchema).toBe(before[i]?.[1]);
      expect(t?.descriptor).toBe(before[i]?.[2]);
    });
    expect(Object.isFrozen(CATALOG)).toBe(true);
    expect(Object.isFrozen(CATALOG[0])).toBe(true);
  });

  it('matches the documented table of toolsets, gates and mutation', () => {
    const table = Object.fromEntries(
      CATALOG.map((t) => [t.name, { toolsets: t.toolsets, caps: t.capabilities, mutating: t.mutating }]),
    );
    expect(table).toEqual({
      get_workspace_context: { toolsets: ['context', 'read'], caps: [], mutating: false },
      list_connections: { toolsets: ['read', 'setup'], caps: ['connections.read'], mutating: false },
      check_connections: { toolsets: ['read', 'setup'], caps: ['connections.read'], mutating: false },
      send_feedback: { toolsets: ['feedback'], caps: ['feedback.send'], mutating: true },
      search_flows: { toolsets: ['read', 'search'], caps: ['flows.read'], mutating: false },
      search_flow_tools: { toolsets: ['read', 'search', 'run'], caps: ['flows.read'], mutating: false },
      inspect_flow_tool: {
        toolsets: ['read', 'search', 'run', 'authoring'],
        caps: ['flows.read'],
        mutating: false,
      },
      call_flow_tool: { toolsets: ['run'], caps: ['flows.read', 'flows.run'], mutating: true },
      get_run_status: { toolsets: ['read', 'run', 'debug'], caps: ['runs.read'], mutating: false },
      inspect_run_step: { toolsets: ['read', 'run', 'debug'], caps: ['runs.read'], mutating: false },
      check_flow_readiness: {
        toolsets: ['read', 'setup', 'authoring'],
        caps: ['flows.read'],
        mutating: false,
      },
      get_step_reference: { toolsets: ['read', 'authoring'], caps: ['steps.read'], mutating: false },
      validate_flow_definition: { toolsets: ['read', 'authoring'], caps: ['flows.read'], mutating: false },
      get_flow_definition: {
        toolsets: ['read', 'authoring', 'debug'],
        caps: ['flows.read'],
        mutating: false,
      },
      create_flow_draft: { toolsets: ['authoring'], caps: ['flows.manage'], mutating: true },
      release_flow: { toolsets: ['release'], caps: ['flows.manage'], mutating: true },
    });
    expect(CATALOG.filter((t) => t.readOnlyExempt).map((t) => t.name)).toEqual(['send_feedback']);
  });

  it('knows every toolset, and every toolset has tools', () => {
    expect(TOOLSETS).toEqual([
      'context',
      'read',
      'search',
      'run',
      'setup',
      'authoring',
      'release',
      'debug',
      'feedback',
    ]);
    expect(TOOLS_BY_TOOLSET.read).toEqual([
      'get_workspace_context',
      'search_flows',
      'search_flow_tools',
      'list_connections',
      'check_connections',
      'inspect_flow_tool',
      'get_run_status',
      'inspect_run_step',
      'check_flow_readiness',
      'get_step_reference',
      'validate_flow_definition',
      'get_flow_definition',
    ]);
    expect(TOOLS_BY_TOOLSET.run).toEqual([
      'search_flow_tools',
      'inspect_flow_tool',
      'call_flow_tool',
      'get_run_status',
      'inspect_run_step',
    ]);
    for (const ts of TOOLSETS) expect(TOOLS_BY_TOOLSET[ts].length, ts).toBeGreaterThan(0);
    expect(TOOLS_BY_TOOLSET.release).toEqual(['release_flow']);
  });

  it('marks the writers for hosts to confirm: mutating, destructive (they replace a draft, what runs live, or run a flow)', () => {
    const writers = CATALOG.filter((t) => t.mutating && !t.readOnlyExempt).map((t) => [
      t.name,
      t.annotations.destructiveHint,
      t.annotations.idempotentHint,
    ]);
    expect(writers).toEqual([
      ['call_flow_tool', true, false],
      ['create_flow_draft', true, true],
      ['release_flow', true, false],
    ]);
  });

  it('finds tools by name, and only tools of the catalog', () => {
    for (const name of SPEC_TOOL_NAMES) expect(getTool(name)?.name).toBe(name);
    expect(getTool('constructor')).toBeUndefined();
    expect(getTool('run_flow')).toBeUndefined();
  });
});
