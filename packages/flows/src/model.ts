import { CONNECTION_TYPES, FLOW_SLUG_PATTERN, TOOL_NAME_PATTERN } from '@flowgate/core';
import { z } from 'zod';
import { type BodyContext, checkFlowBody, checkFunctionCode } from './body.js';
import type { EdnMap, EdnNode } from './edn/types.js';
import { closest, describeNode, keySegment, type Reporter } from './reporter.js';
import { STEP_TYPES } from './steps.js';

/** Input types of an invocation (docs/flows.md, "Definition"); each maps to a JSON Schema in schema.ts. */
export const INVOCATION_INPUT_TYPES = [
  'string',
  'text',
  'number',
  'integer',
  'boolean',
  'email',
  'url',
  'date',
  'datetime',
  'json',
  'select',
  'secret',
] as const;
export type InvocationInputType = (typeof INVOCATION_INPUT_TYPES)[number];

export const INTERFACE_KINDS = ['manual', 'http', 'webhook', 'mcp'] as const;
export type InterfaceKind = (typeof INTERFACE_KINDS)[number];

/**
 * Names of slots, functions, invocations, inputs, interface ids and steps. Deliberately narrower than EDN keywords:
 * they become JSON property names and URL parts, and `__proto__`-like names can never reach an object key.
 */
export const IDENTIFIER_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
/** A `:select` option: a value, never prose (it reaches the input schema's enum even when text is untrusted). */
export const SELECT_OPTION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,63}$/;

export const MODEL_LIMITS = {
  nameLength: 200,
  descriptionLength: 4000,
  labelLength: 200,
  toolDescriptionLength: 1024,
  tags: 20,
  tagLength: 64,
  requires: 32,
  functions: 128,
  invocations: 32,
  inputs: 64,
  selectOptions: 200,
  interfacesPerKind: 64,
} as const;

// ---- the model, as a zod schema (the edge type for anything that stores or reloads a model) --------------------

const locSchema = z
  .object({ line: z.number().int(), column: z.number().int(), offset: z.number().int() })
  .optional();
const ednStringSchema = z.object({ kind: z.literal('string'), value: z.string(), loc: locSchema });

export const ednNodeSchema: z.ZodType<EdnNode> = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('nil'), loc: locSchema }),
    z.object({ kind: z.literal('boolean'), value: z.boolean(), loc: locSchema }),
    z.object({
      kind: z.literal('int'),
      value: z.number().int().refine(Number.isSafeInteger),
      loc: locSchema,
    }),
    z.object({ kind: z.literal('float'), value: z.number(), loc: locSchema }),
    ednStringSchema,
    z.object({ kind: z.literal('char'), value: z.string(), loc: locSchema }),
    z.object({ kind: z.literal('keyword'), name: z.string(), loc: locSchema }),
    z.object({ kind: z.literal('symbol'), name: z.string(), loc: locSchema }),
    z.object({ kind: z.literal('list'), items: z.array(ednNodeSchema), loc: locSchema }),
    z.object({ kind: z.literal('vector'), items: z.array(ednNodeSchema), loc: locSchema }),
    z.object({ kind: z.literal('set'), items: z.array(ednNodeSchema), loc: locSchema }),
    z.object({
      kind: z.literal('map'),
      entries: z.array(z.object({ key: ednNodeSchema, value: ednNodeSchema })),
      loc: locSchema,
    }),
    z.object({
      kind: z.literal('tagged'),
      tag: z.enum(['inst', 'uuid']),
      value: ednStringSchema,
      loc: locSchema,
    }),
  ]),
);

const identifier = z.string().regex(IDENTIFIER_PATTERN);
const label = z.string().max(MODEL_LIMITS.labelLength);

const inputSchema = z.object({
  name: identifier,
  type: z.enum(INVOCATION_INPUT_TYPES),
  required: z.boolean(),
  label: label.optional(),
  description: z.string().max(MODEL_LIMITS.descriptionLength).optional(),
  options: z.array(z.string().regex(SELECT_OPTION_PATTERN)).min(1).max(MODEL_LIMITS.selectOptions).optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
});

const invocationSchema = z.object({
  name: identifier,
  label: label.optional(),
  description: z.string().max(MODEL_LIMITS.descriptionLength).optional(),
  inputs: z.array(inputSchema).max(MODEL_LIMITS.inputs),
});

const interfaceEntrySchema = z.object({
  id: identifier.optional(),
  invocation: identifier,
  label: label.optional(),
  description: z.string().max(MODEL_LIMITS.toolDescriptionLength).optional(),
});

const mcpInterfaceSchema = interfaceEntrySchema.extend({
  toolName: z.string().regex(TOOL_NAME_PATTERN),
  title: label.optional(),
});

export const flowModelSchema = z.object({
  slug: z.string().regex(FLOW_SLUG_PATTERN),
  name: z.string().max(MODEL_LIMITS.nameLength).optional(),
  description: z.string().max(MODEL_LIMITS.descriptionLength).optional(),
  tags: z.array(z.string().min(1).max(MODEL_LIMITS.tagLength)).max(MODEL_LIMITS.tags),
  concurrency: z
    .object({
      type: z.enum(['singleton', 'keyed']),
      onNewVersion: z.enum(['supersede', 'drain', 'coexist']),
      key: z.array(identifier).min(1).optional(),
    })
    .optional(),
  requires: z
    .array(
      z.object({
        slot: identifier,
        type: z.enum(CONNECTION_TYPES),
        label: label.optional(),
        description: z.string().max(MODEL_LIMITS.descriptionLength).optional(),
        auth: z.object({ type: identifier }).optional(),
      }),
    )
    .max(MODEL_LIMITS.requires),
  functions: z
    .array(
      z.object({
        id: identifier,
        code: ednNodeSchema,
        description: z.string().max(MODEL_LIMITS.descriptionLength).optional(),
      }),
    )
    .max(MODEL_LIMITS.functions),
  invocations: z.array(invocationSchema).max(MODEL_LIMITS.invocations),
  interfaces: z.object({
    manual: z.array(interfaceEntrySchema).max(MODEL_LIMITS.interfacesPerKind),
    http: z.array(interfaceEntrySchema).max(MODEL_LIMITS.interfacesPerKind),
    webhook: z.array(interfaceEntrySchema).max(MODEL_LIMITS.interfacesPerKind),
    mcp: z.array(mcpInterfaceSchema).max(MODEL_LIMITS.interfacesPerKind),
  }),
  discover: z.object({ public: z.boolean() }),
  flow: ednNodeSchema,
  /** Every `(flow/step …)` written in the body, in source order. */
  steps: z.array(
    z.object({
      id: identifier,
      type: z.enum(STEP_TYPES),
      connection: identifier.optional(),
      functionRef: identifier.optional(),
      /** Remote MCP tools the step may call, by slot (readiness checks them against the bound server). */
      mcpTools: z.array(z.object({ slot: identifier, names: z.array(z.string()) })).optional(),
    }),
  ),
});

export type FlowModel = z.infer<typeof flowModelSchema>;
export type InvocationInput = FlowModel['invocations'][number]['inputs'][number];
export type Invocation = FlowModel['invocations'][number];
export type McpInterface = FlowModel['interfaces']['mcp'][number];
export type InterfaceEntry = FlowModel['interfaces']['manual'][number];
export type RequiresSlot = FlowModel['requires'][number];
export type FlowStepSummary = FlowModel['steps'][number];

export function findInvocation(model: FlowModel, name: string): Invocation | undefined {
  return model.invocations.find((i) => i.name === name);
}

// ---- building the model from the tree, with positioned diagnostics -----------------------------------------------

const TOP_LEVEL_KEYS = [
  'slug',
  'name',
  'description',
  'tags',
  'concurrency',
  'requires',
  'functions',
  'invocations',
  'interfaces',
  'discover',
  'flow',
] as const;

type Path = readonly string[];
type Fields = Map<string, { key: EdnNode; value: EdnNode }>;

const kw = (names: readonly string[]) => names.map((n) => `:${n}`).join(' ');

class Builder {
  constructor(private readonly r: Reporter) {}

  /** Known keyword keys of a map; anything else is an `unknown_key` warning (never dropped silently). */
  fields(map: EdnMap, path: Path, allowed: readonly string[], where: string): Fields {
    const out: Fields = new Map();
    for (const entry of map.entries) {
      const { key } = entry;
      if (key.kind === 'keyword' && allowed.includes(key.name)) {
        out.set(key.name, entry);
        continue;
      }
      const near = key.kind === 'keyword' ? closest(key.name, allowed) : undefined;
      this.r.warn(
        'unknown_key',
        key,
        [...path, keySegment(key)],
        `unknown key ${keySegment(key)} in ${where} (ignored)`,
        near ? `did you mean :${near}?` : `known keys: ${kw(allowed)}`,
      );
    }
    return out;
  }

  missing(map: EdnNode, path: Path, name: string, where: string, hint: string): void {
    this.r.error(
      'missing_required_field',
      map,
      [...path, `:${name}`],
      `missing required field :${name} in ${where}`,
      hint,
    );
  }

  invalidOption(node: EdnNode, path: Path, message: string, hint: string): void {
    this.r.error('invalid_select_option', node, path, message, hint);
  }

  invalid(node: EdnNode, path: Path, message: string, hint: string): void {
    this.r.error('invalid_field_value', node, path, message, hint);
  }

  map(node: EdnNode, path: Path, what: string, hint: string): EdnMap | undefined {
    if (node.kind === 'map') return node;
    this.invalid(node, path, `${what} must be a map, found ${describeNode(node)}`, hint);
    return undefined;
  }

  vector(node: EdnNode, path: Path, what: string, max: number, hint: string): EdnNode[] | undefined {
    if (node.kind !== 'vector') {
      this.invalid(node, path, `${what} must be a vector, found ${describeNode(node)}`, hint);
      return undefined;
    }
    if (node.items.length > max) {
      this.invalid(
        node,
        path,
        `${what} has ${node.items.length} entries; the limit is ${max}`,
        'remove entries',
      );
      return node.items.slice(0, max);
    }
    return node.items;
  }

  text(node: EdnNode, path: Path, what: string, max: number): string | undefined {
    if (node.kind !== 'string') {
      this.invalid(
        node,
        path,
        `${what} must be a string, found ${describeNode(node)}`,
        `write it in double quotes: "…"`,
      );
      return undefined;
    }
    if ([...node.value].length > max) {
      this.invalid(node, path, `${what} is longer than ${max} characters`, 'shorten it');
      return undefined;
    }
    return node.value;
  }

  identifier(node: EdnNode, path: Path, what: string): string | undefined {
    if (node.kind === 'keyword' && IDENTIFIER_PATTERN.test(node.name)) return node.name;
    this.invalid(
      node,
      path,
      node.kind === 'keyword'
        ? `${what} :${node.name} is not a valid name`
        : `${what} must be a keyword, found ${describeNode(node)}`,
      'names are keywords of letters, digits, - and _, starting with a letter, at most 64 characters, e.g. :my-name',
    );
    return undefined;
  }

  choice<T extends string>(node: EdnNode, path: Path, what: string, values: readonly T[]): T | undefined {
    if (node.kind === 'keyword' && (values as readonly string[]).includes(node.name)) return node.name as T;
    this.invalid(
      node,
      path,
      `${what} must be one of ${kw(values)}, found ${describeNode(node)}`,
      `use one of ${kw(values)}`,
    );
    return undefined;
  }

  boolean(node: EdnNode, path: Path, what: string): boolean | undefined {
    if (node.kind === 'boolean') return node.value;
    this.invalid(
      node,
      path,
      `${what} must be true or false, found ${describeNode(node)}`,
      'write true or false',
    );
    return undefined;
  }
}

/**
 * Builds the model from a read tree, reporting every problem it finds (it does not stop at the first). The returned
 * model is complete only when no error was reported; callers must check the diagnostics.
 */
export function buildModel(root: EdnNode, r: Reporter): FlowModel | undefined {
  if (root.kind !== 'map') {
    r.error(
      'definition_not_a_map',
      root,
      [],
      `a flow definition must be a map, found ${describeNode(root)}`,
      'write the definition as one map: {:slug :my-flow :flow (…)}',
    );
    return undefined;
  }
  const b = new Builder(r);
  const top = b.fields(root, [], TOP_LEVEL_KEYS, 'the flow definition');
  const model: FlowModel = {
    slug: '',
    tags: [],
    requires: [],
    functions: [],
    invocations: [],
    interfaces: { manual: [], http: [], webhook: [], mcp: [] },
    discover: { public: false },
    flow: { kind: 'nil' },
    steps: [],
  };

  const slug = top.get('slug')?.value;
  if (!slug) b.missing(root, [], 'slug', 'the flow definition', 'add a slug, e.g. :slug :enrich-company');
  else if (slug.kind === 'keyword' && FLOW_SLUG_PATTERN.test(slug.name)) model.slug = slug.name;
  else {
    r.error(
      'invalid_slug',
      slug,
      [':slug'],
      slug.kind === 'keyword'
        ? `slug :${slug.name} is not valid`
        : `slug must be a keyword, found ${describeNode(slug)}`,
      'a slug is a keyword of letters, digits, - and _, starting with a letter, at most 128 characters, e.g. :enrich-company',
    );
  }

  const name = top.get('name')?.value;
  if (name) model.name = b.text(name, [':name'], ':name', MODEL_LIMITS.nameLength);
  const description = top.get('description')?.value;
  if (description)
    model.description = b.text(description, [':description'], ':description', MODEL_LIMITS.descriptionLength);

  const tags = top.get('tags')?.value;
  if (tags) model.tags = readTags(b, tags);

  const concurrency = top.get('concurrency')?.value;
  if (concurrency) model.concurrency = readConcurrency(b, concurrency);

  const requires = top.get('requires')?.value;
  if (requires) model.requires = readRequires(b, r, requires);

  const functions = top.get('functions')?.value;
  const functionCodes: { code: EdnNode; path: Path }[] = [];
  if (functions) model.functions = readFunctions(b, r, functions, functionCodes);

  const invocations = top.get('invocations')?.value;
  if (invocations) model.invocations = readInvocations(b, r, invocations);

  const interfaces = top.get('interfaces')?.value;
  if (interfaces) model.interfaces = readInterfaces(b, r, interfaces, model.invocations);

  const discover = top.get('discover')?.value;
  if (discover) {
    const map = b.map(discover, [':discover'], ':discover', 'write {:public true} or {:public false}');
    if (map) {
      const f = b.fields(map, [':discover'], ['public'], ':discover');
      const isPublic = f.get('public')?.value;
      if (isPublic) model.discover.public = b.boolean(isPublic, [':discover', ':public'], ':public') ?? false;
    }
  }

  const context: BodyContext = {
    slots: new Map(model.requires.map((s) => [s.slot, s.type])),
    functionIds: new Set(model.functions.map((f) => f.id)),
  };
  for (const { code, path } of functionCodes)
    checkFunctionCode(code, path, r, { maxParams: 1, code: 'invalid_field_value' });

  const flow = top.get('flow')?.value;
  if (!flow) {
    b.missing(
      root,
      [],
      'flow',
      'the flow definition',
      'add the orchestration body, e.g. :flow (flow/step :http :call {:url "https://…"})',
    );
  } else {
    model.flow = flow;
    model.steps = checkFlowBody(flow, [':flow'], context, r);
  }
  return model;
}

function readTags(b: Builder, node: EdnNode): string[] {
  const items = b.vector(
    node,
    [':tags'],
    ':tags',
    MODEL_LIMITS.tags,
    'write tags as a vector: ["sales" "crm"]',
  );
  const tags: string[] = [];
  items?.forEach((item, i) => {
    const path = [':tags', String(i)];
    const value = item.kind === 'keyword' ? item.name : item.kind === 'string' ? item.value : undefined;
    if (value === undefined || value.length === 0 || value.length > MODEL_LIMITS.tagLength) {
      b.invalid(
        item,
        path,
        `a tag must be a non-empty string or keyword of at most ${MODEL_LIMITS.tagLength} characters`,
        'e.g. "sales"',
      );
    } else tags.push(value);
  });
  return tags;
}

function readConcurrency(b: Builder, node: EdnNode): FlowModel['concurrency'] {
  const path = [':concurrency'];
  const map = b.map(node, path, ':concurrency', 'e.g. {:type :singleton :on-new-version :coexist}');
  if (!map) return undefined;
  const f = b.fields(map, path, ['type', 'on-new-version', 'key'], ':concurrency');
  const typeNode = f.get('type')?.value;
  if (!typeNode) {
    b.missing(map, path, 'type', ':concurrency', 'add :type :singleton or :type :keyed');
    return undefined;
  }
  const type = b.choice(typeNode, [...path, ':type'], ':type', ['singleton', 'keyed'] as const);
  const onNode = f.get('on-new-version')?.value;
  const onNewVersion = onNode
    ? b.choice(onNode, [...path, ':on-new-version'], ':on-new-version', [
        'supersede',
        'drain',
        'coexist',
      ] as const)
    : 'coexist';
  const keyNode = f.get('key')?.value;
  let key: string[] | undefined;
  if (keyNode) {
    const keyPath = [...path, ':key'];
    if (type === 'singleton')
      b.invalid(keyNode, keyPath, ':key only applies to :type :keyed', 'remove :key or use :type :keyed');
    else if (keyNode.kind === 'vector' && keyNode.items.length > 0) {
      key = [];
      keyNode.items.forEach((item, i) => {
        const part = b.identifier(item, [...keyPath, String(i)], 'a :key element');
        if (part) key?.push(part);
      });
    } else {
      const single = b.identifier(keyNode, keyPath, ':key');
      if (single) key = [single];
    }
  } else if (type === 'keyed') {
    b.missing(
      map,
      path,
      'key',
      ':concurrency',
      'name the input (or inputs) that key runs, e.g. :key :customer-id or :key [:account :region]',
    );
  }
  if (!type || !onNewVersion) return undefined;
  return key ? { type, onNewVersion, key } : { type, onNewVersion };
}

function readRequires(b: Builder, r: Reporter, node: EdnNode): FlowModel['requires'] {
  const items = b.vector(
    node,
    [':requires'],
    ':requires',
    MODEL_LIMITS.requires,
    'e.g. [{:slot :crm :type :http-api}]',
  );
  const out: FlowModel['requires'] = [];
  const seen = new Map<string, EdnNode>();
  items?.forEach((item, i) => {
    const path = [':requires', String(i)];
    const map = b.map(item, path, 'a :requires entry', 'e.g. {:slot :crm :type :http-api :label "CRM API"}');
    if (!map) return;
    const f = b.fields(map, path, ['slot', 'type', 'label', 'description', 'auth'], 'a :requires entry');
    const slotNode = f.get('slot')?.value;
    const typeNode = f.get('type')?.value;
    if (!slotNode) b.missing(map, path, 'slot', 'a :requires entry', 'name the slot, e.g. :slot :crm');
    if (!typeNode)
      b.missing(map, path, 'type', 'a :requires entry', `add :type, one of ${kw(CONNECTION_TYPES)}`);
    const slot = slotNode ? b.identifier(slotNode, [...path, ':slot'], ':slot') : undefined;
    const type = typeNode ? b.choice(typeNode, [...path, ':type'], ':type', CONNECTION_TYPES) : undefined;
    if (slot && slotNode) {
      const first = seen.get(slot);
      if (first) {
        r.error(
          'duplicate_requires_slot',
          slotNode,
          [...path, ':slot'],
          `slot :${slot} is declared twice${first.loc ? ` (first at line ${first.loc.line}, column ${first.loc.column})` : ''}`,
          'each slot is declared once; steps can share it',
        );
      } else seen.set(slot, slotNode);
    }
    const entry: FlowModel['requires'][number] = { slot: slot ?? '', type: type ?? 'http-api' };
    const labelNode = f.get('label')?.value;
    if (labelNode) entry.label = b.text(labelNode, [...path, ':label'], ':label', MODEL_LIMITS.labelLength);
    const descNode = f.get('description')?.value;
    if (descNode)
      entry.description = b.text(
        descNode,
        [...path, ':description'],
        ':description',
        MODEL_LIMITS.descriptionLength,
      );
    const authNode = f.get('auth')?.value;
    if (authNode) {
      const authPath = [...path, ':auth'];
      const authMap = b.map(authNode, authPath, ':auth', 'e.g. {:type :bearer}');
      if (authMap) {
        const af = b.fields(authMap, authPath, ['type'], ':auth');
        const authType = af.get('type')?.value;
        if (!authType) b.missing(authMap, authPath, 'type', ':auth', 'e.g. :type :bearer');
        else {
          const t = b.identifier(authType, [...authPath, ':type'], 'auth :type');
          if (t) entry.auth = { type: t };
        }
      }
    }
    out.push(entry);
  });
  return out;
}

function readFunctions(
  b: Builder,
  r: Reporter,
  node: EdnNode,
  codes: { code: EdnNode; path: Path }[],
): FlowModel['functions'] {
  const items = b.vector(
    node,
    [':functions'],
    ':functions',
    MODEL_LIMITS.functions,
    'e.g. [{:id :shape :code (fn [x] …)}]',
  );
  const out: FlowModel['functions'] = [];
  const seen = new Map<string, EdnNode>();
  items?.forEach((item, i) => {
    const path = [':functions', String(i)];
    const map = b.map(item, path, 'a :functions entry', 'e.g. {:id :shape :code (fn [x] …)}');
    if (!map) return;
    const f = b.fields(map, path, ['id', 'code', 'description'], 'a :functions entry');
    const idNode = f.get('id')?.value;
    const codeNode = f.get('code')?.value;
    if (!idNode) b.missing(map, path, 'id', 'a :functions entry', 'name the function, e.g. :id :summarize');
    if (!codeNode)
      b.missing(map, path, 'code', 'a :functions entry', 'add the function, e.g. :code (fn [x] x)');
    const id = idNode ? b.identifier(idNode, [...path, ':id'], 'function :id') : undefined;
    if (id && idNode) {
      const first = seen.get(id);
      if (first) {
        r.error(
          'duplicate_function_id',
          idNode,
          [...path, ':id'],
          `function :${id} is declared twice${first.loc ? ` (first at line ${first.loc.line}, column ${first.loc.column})` : ''}`,
          'give each function a unique :id',
        );
      } else seen.set(id, idNode);
    }
    if (codeNode) codes.push({ code: codeNode, path: [...path, ':code'] });
    const entry: FlowModel['functions'][number] = { id: id ?? '', code: codeNode ?? { kind: 'nil' } };
    const descNode = f.get('description')?.value;
    if (descNode)
      entry.description = b.text(
        descNode,
        [...path, ':description'],
        ':description',
        MODEL_LIMITS.descriptionLength,
      );
    out.push(entry);
  });
  return out;
}

function readInvocations(b: Builder, r: Reporter, node: EdnNode): FlowModel['invocations'] {
  const map = b.map(
    node,
    [':invocations'],
    ':invocations',
    'e.g. {:default {:inputs [{:name :domain :type :string}]}}',
  );
  if (!map) return [];
  const out: FlowModel['invocations'] = [];
  if (map.entries.length > MODEL_LIMITS.invocations) {
    b.invalid(
      map,
      [':invocations'],
      `:invocations has more than ${MODEL_LIMITS.invocations} entries`,
      'remove invocations',
    );
  }
  for (const entry of map.entries.slice(0, MODEL_LIMITS.invocations)) {
    const path = [':invocations', keySegment(entry.key)];
    const name = b.identifier(entry.key, path, 'an invocation name');
    const body = b.map(
      entry.value,
      path,
      `invocation ${keySegment(entry.key)}`,
      'e.g. {:label "Run" :inputs [...]}',
    );
    if (!body) continue;
    const f = b.fields(body, path, ['label', 'description', 'inputs'], `invocation ${keySegment(entry.key)}`);
    const invocation: FlowModel['invocations'][number] = { name: name ?? '', inputs: [] };
    const labelNode = f.get('label')?.value;
    if (labelNode)
      invocation.label = b.text(labelNode, [...path, ':label'], ':label', MODEL_LIMITS.labelLength);
    const descNode = f.get('description')?.value;
    if (descNode)
      invocation.description = b.text(
        descNode,
        [...path, ':description'],
        ':description',
        MODEL_LIMITS.descriptionLength,
      );
    const inputsNode = f.get('inputs')?.value;
    if (inputsNode) invocation.inputs = readInputs(b, r, inputsNode, [...path, ':inputs']);
    out.push(invocation);
  }
  return out;
}

function readInputs(b: Builder, r: Reporter, node: EdnNode, basePath: Path): InvocationInput[] {
  const items = b.vector(
    node,
    basePath,
    ':inputs',
    MODEL_LIMITS.inputs,
    'e.g. [{:name :domain :type :string :required true}]',
  );
  const out: InvocationInput[] = [];
  const seen = new Map<string, EdnNode>();
  items?.forEach((item, i) => {
    const path = [...basePath, String(i)];
    const map = b.map(
      item,
      path,
      'an input',
      'e.g. {:name :domain :type :string :required true :label "Domain"}',
    );
    if (!map) return;
    const f = b.fields(
      map,
      path,
      ['name', 'type', 'required', 'label', 'description', 'options', 'default'],
      'an input',
    );
    const nameNode = f.get('name')?.value;
    const typeNode = f.get('type')?.value;
    if (!nameNode) b.missing(map, path, 'name', 'an input', 'e.g. :name :domain');
    if (!typeNode)
      b.missing(map, path, 'type', 'an input', `add :type, one of ${kw(INVOCATION_INPUT_TYPES)}`);
    const name = nameNode ? b.identifier(nameNode, [...path, ':name'], 'input :name') : undefined;
    if (name && nameNode) {
      const first = seen.get(name);
      if (first) {
        r.error(
          'duplicate_invocation_input_name',
          nameNode,
          [...path, ':name'],
          `input :${name} is declared twice${first.loc ? ` (first at line ${first.loc.line}, column ${first.loc.column})` : ''}`,
          'give each input of an invocation a unique :name',
        );
      } else seen.set(name, nameNode);
    }
    let type: InvocationInputType | undefined;
    if (typeNode) {
      if (
        typeNode.kind === 'keyword' &&
        (INVOCATION_INPUT_TYPES as readonly string[]).includes(typeNode.name)
      ) {
        type = typeNode.name as InvocationInputType;
      } else {
        const near = typeNode.kind === 'keyword' ? closest(typeNode.name, INVOCATION_INPUT_TYPES) : undefined;
        r.error(
          'invalid_invocation_input_type',
          typeNode,
          [...path, ':type'],
          typeNode.kind === 'keyword'
            ? `unknown input type :${typeNode.name}`
            : `input :type must be a keyword, found ${describeNode(typeNode)}`,
          `${near ? `did you mean :${near}? ` : ''}input types: ${kw(INVOCATION_INPUT_TYPES)}`,
        );
      }
    }
    const input: InvocationInput = { name: name ?? '', type: type ?? 'string', required: false };
    const requiredNode = f.get('required')?.value;
    if (requiredNode) input.required = b.boolean(requiredNode, [...path, ':required'], ':required') ?? false;
    const labelNode = f.get('label')?.value;
    if (labelNode) input.label = b.text(labelNode, [...path, ':label'], ':label', MODEL_LIMITS.labelLength);
    const descNode = f.get('description')?.value;
    if (descNode)
      input.description = b.text(
        descNode,
        [...path, ':description'],
        ':description',
        MODEL_LIMITS.descriptionLength,
      );
    const optionsNode = f.get('options')?.value;
    if (type === 'select') {
      if (!optionsNode)
        b.missing(map, path, 'options', 'a :select input', 'list the choices, e.g. :options ["low" "high"]');
      else input.options = readOptions(b, optionsNode, [...path, ':options']);
    } else if (optionsNode && type) {
      b.invalid(
        optionsNode,
        [...path, ':options'],
        ':options only applies to :type :select',
        'remove :options or use :type :select',
      );
    }
    const defaultNode = f.get('default')?.value;
    if (defaultNode && type)
      input.default = readDefault(b, defaultNode, [...path, ':default'], type, input.options);
    out.push(input);
  });
  return out;
}

function readOptions(b: Builder, node: EdnNode, path: Path): string[] | undefined {
  const items = b.vector(
    node,
    path,
    ':options',
    MODEL_LIMITS.selectOptions,
    'e.g. ["low" "high"] or [:low :high]',
  );
  if (!items) return undefined;
  if (items.length === 0) {
    b.invalid(node, path, ':options must list at least one choice', 'e.g. ["low" "high"]');
    return undefined;
  }
  const options: string[] = [];
  items.forEach((item, i) => {
    const value = item.kind === 'string' ? item.value : item.kind === 'keyword' ? item.name : undefined;
    if (value === undefined) {
      b.invalid(
        item,
        [...path, String(i)],
        `an option must be a string or keyword of at most ${MODEL_LIMITS.labelLength} characters`,
        'e.g. "high"',
      );
    } else if (!SELECT_OPTION_PATTERN.test(value)) {
      // Options become the input schema's enum, which models always see, even when the flow's text is untrusted:
      // they must be values, never sentences.
      b.invalidOption(
        item,
        [...path, String(i)],
        `option ${i} is not a token: options are values, not text (letters, digits and _ . : / @ + -, at most 64 characters, no spaces)`,
        `use a short value such as "say-yes"; explain the choices in the input's :description`,
      );
    } else if (options.includes(value)) {
      b.invalid(item, [...path, String(i)], `option "${value}" is listed twice`, 'list each option once');
    } else options.push(value);
  });
  return options;
}

function readDefault(
  b: Builder,
  node: EdnNode,
  path: Path,
  type: InvocationInputType,
  options: string[] | undefined,
): string | number | boolean | undefined {
  const wrong = (expected: string) => {
    b.invalid(
      node,
      path,
      `:default for a :${type} input must be ${expected}, found ${describeNode(node)}`,
      'fix or remove :default',
    );
    return undefined;
  };
  switch (type) {
    case 'secret':
      return wrong('absent (secrets have no default)');
    case 'json':
      return wrong('absent (json inputs have no default)');
    case 'boolean':
      return node.kind === 'boolean' ? node.value : wrong('true or false');
    case 'number':
      return node.kind === 'int' || node.kind === 'float' ? node.value : wrong('a number');
    case 'integer':
      return node.kind === 'int' ? node.value : wrong('an integer');
    case 'select': {
      const value = node.kind === 'string' ? node.value : node.kind === 'keyword' ? node.name : undefined;
      if (value === undefined || (options && !options.includes(value))) return wrong('one of the :options');
      return value;
    }
    default:
      return node.kind === 'string' ? node.value : wrong('a string');
  }
}

function readInterfaces(
  b: Builder,
  r: Reporter,
  node: EdnNode,
  invocations: FlowModel['invocations'],
): FlowModel['interfaces'] {
  const out: FlowModel['interfaces'] = { manual: [], http: [], webhook: [], mcp: [] };
  const map = b.map(
    node,
    [':interfaces'],
    ':interfaces',
    'e.g. {:mcp [{:tool-name "my_tool" :invocation :default}]}',
  );
  if (!map) return out;
  const f = b.fields(map, [':interfaces'], INTERFACE_KINDS, ':interfaces');
  const ids = new Map<string, EdnNode>();
  const toolNames = new Map<string, EdnNode>();
  const invocationNames = invocations.map((i) => i.name);
  for (const kind of INTERFACE_KINDS) {
    const value = f.get(kind)?.value;
    if (!value) continue;
    const kindPath = [':interfaces', `:${kind}`];
    const items = b.vector(
      value,
      kindPath,
      `:interfaces :${kind}`,
      MODEL_LIMITS.interfacesPerKind,
      `e.g. [{:invocation :default}]`,
    );
    items?.forEach((item, i) => {
      const path = [...kindPath, String(i)];
      const entryMap = b.map(item, path, `an :${kind} interface`, 'e.g. {:id :main :invocation :default}');
      if (!entryMap) return;
      const allowed =
        kind === 'mcp'
          ? ['id', 'invocation', 'label', 'description', 'tool-name', 'title']
          : ['id', 'invocation', 'label', 'description'];
      const ef = b.fields(entryMap, path, allowed, `an :${kind} interface`);
      const entry: InterfaceEntry = { invocation: '' };
      const idNode = ef.get('id')?.value;
      if (idNode) {
        const id = b.identifier(idNode, [...path, ':id'], 'interface :id');
        if (id) {
          const first = ids.get(id);
          if (first) {
            r.error(
              'duplicate_interface_id',
              idNode,
              [...path, ':id'],
              `interface id :${id} is used twice${first.loc ? ` (first at line ${first.loc.line}, column ${first.loc.column})` : ''}`,
              'interface ids are unique across :manual, :http, :webhook and :mcp',
            );
          } else ids.set(id, idNode);
          entry.id = id;
        }
      }
      const invocationNode = ef.get('invocation')?.value;
      if (!invocationNode) {
        b.missing(
          entryMap,
          path,
          'invocation',
          `an :${kind} interface`,
          `name the invocation it runs, e.g. :invocation :${invocationNames[0] ?? 'default'}`,
        );
      } else {
        const invocation = b.identifier(invocationNode, [...path, ':invocation'], ':invocation');
        if (invocation && !invocationNames.includes(invocation)) {
          const near = closest(invocation, invocationNames);
          r.error(
            'unknown_interface_invocation',
            invocationNode,
            [...path, ':invocation'],
            `interface names invocation :${invocation}, which is not in :invocations`,
            near
              ? `did you mean :${near}?`
              : invocationNames.length > 0
                ? `declared invocations: ${kw(invocationNames)}`
                : 'declare it under :invocations, e.g. {:default {:inputs []}}',
          );
        }
        if (invocation) entry.invocation = invocation;
      }
      const labelNode = ef.get('label')?.value;
      if (labelNode) entry.label = b.text(labelNode, [...path, ':label'], ':label', MODEL_LIMITS.labelLength);
      const descNode = ef.get('description')?.value;
      if (descNode)
        entry.description = b.text(
          descNode,
          [...path, ':description'],
          ':description',
          MODEL_LIMITS.toolDescriptionLength,
        );
      if (kind !== 'mcp') {
        out[kind].push(entry);
        return;
      }
      const mcp: McpInterface = { ...entry, toolName: '' };
      const titleNode = ef.get('title')?.value;
      if (titleNode) mcp.title = b.text(titleNode, [...path, ':title'], ':title', MODEL_LIMITS.labelLength);
      const toolNode = ef.get('tool-name')?.value;
      if (!toolNode)
        b.missing(entryMap, path, 'tool-name', 'an :mcp interface', 'e.g. :tool-name "enrich_company"');
      else if (toolNode.kind !== 'string' || !TOOL_NAME_PATTERN.test(toolNode.value)) {
        r.error(
          'invalid_tool_name',
          toolNode,
          [...path, ':tool-name'],
          toolNode.kind === 'string'
            ? `tool name ${JSON.stringify(toolNode.value.length > 60 ? `${toolNode.value.slice(0, 59)}…` : toolNode.value)} is not valid`
            : `:tool-name must be a string, found ${describeNode(toolNode)}`,
          'tool names are 1–128 characters of A-Z a-z 0-9 _ . -, e.g. "enrich_company"',
        );
      } else {
        const first = toolNames.get(toolNode.value);
        if (first) {
          r.error(
            'duplicate_tool_name',
            toolNode,
            [...path, ':tool-name'],
            `tool name "${toolNode.value}" is used twice${first.loc ? ` (first at line ${first.loc.line}, column ${first.loc.column})` : ''}`,
            'tool names are unique within a flow',
          );
        } else toolNames.set(toolNode.value, toolNode);
        mcp.toolName = toolNode.value;
      }
      out.mcp.push(mcp);
    });
  }
  return out;
}
