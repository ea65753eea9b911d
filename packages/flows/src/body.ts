import type { ConnectionType } from '@flowgate/core';
import type { DiagnosticCode } from './diagnostics.js';
import type { EdnList, EdnMap, EdnNode } from './edn/types.js';
import { FUNCTION_SET, SPECIAL_FORM_SET, TRANSFORM_SET } from './language.js';
import { closest, describeNode, keySegment, type Reporter } from './reporter.js';
import {
  type FieldCheck,
  isStepType,
  STEP_REFERENCE,
  STEP_TYPES,
  type StepField,
  type StepReference,
  type StepType,
} from './steps.js';

/**
 * Static checks of the orchestration body (packages/run-engine/README.md) and of function code.
 *
 * Decisions:
 * - `orchestration_transform` is a warning: map/filter/reduce/remove/sort-by/group-by are part of the language, but
 *   data shaping in the body is re-evaluated on every replay and invisible in step results, so it belongs in a
 *   `:function` step. Inside function code they are fine.
 * - Function code (`:code` of a `:function` step or of `:functions`) sees only its parameter and its own bindings:
 *   no `flow/input`, no `flow/step`, no closing over body bindings (pass data through `:input`).
 * - `flow/step` may not appear inside `fn` in the body: a function can be called any number of times, which would
 *   repeat a step id. Steps repeat through `for`, which gives each iteration an index.
 * - Bindings (`let`, `fn`, `for`) are plain symbols; destructuring is not part of the language.
 * - Step type and id are keyword literals and the config is a map literal, so steps are known before a run.
 */
export interface BodyContext {
  /** The `:requires` slots with their declared connection types. */
  slots: ReadonlyMap<string, ConnectionType>;
  functionIds: ReadonlySet<string>;
}

export interface FoundStep {
  id: string;
  type: StepType;
  connection?: string;
  functionRef?: string;
  /** Remote MCP tools the step may call, by slot: an :mcp step's tool, or an :llm step's `:tools` allowlists. */
  mcpTools?: { slot: string; names: string[] }[];
}

type Path = readonly string[];

/** One frame per binding form; a `let` or `for` frame grows as its bindings are read (sequential scope). */
interface Scope {
  names: Set<string>;
  parent: Scope | undefined;
}

interface Env {
  mode: 'body' | 'function';
  scope: Scope | undefined;
  /** Inside a `fn` (in the body or function code). */
  inFn: boolean;
}

const STEP_ID_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const kw = (names: readonly string[]) => names.map((n) => `:${n}`).join(' ');

function isBound(scope: Scope | undefined, name: string): boolean {
  for (let s = scope; s; s = s.parent) if (s.names.has(name)) return true;
  return false;
}

function* boundNames(scope: Scope | undefined): Generator<string> {
  for (let s = scope; s; s = s.parent) yield* s.names;
}

function bind(scope: Scope, names: Iterable<string>): void {
  for (const name of names) scope.names.add(name);
}

function extend(scope: Scope | undefined, names: Iterable<string>): Scope {
  return { names: new Set(names), parent: scope };
}

/** Unqualified symbols inside a (rejected) destructuring form. */
function symbolsIn(node: EdnNode): string[] {
  switch (node.kind) {
    case 'symbol':
      return node.name === '&' || node.name.includes('/') ? [] : [node.name];
    case 'vector':
      return node.items.flatMap(symbolsIn);
    case 'map':
      return node.entries.flatMap((e) => [...symbolsIn(e.key), ...symbolsIn(e.value)]);
    default:
      return [];
  }
}

function isExpression(node: EdnNode): boolean {
  return node.kind === 'list' || node.kind === 'symbol';
}

/** The name of a literal :allow element (a string, or a map's `:name` string). */
function toolNameOf(item: EdnNode): string | undefined {
  if (item.kind === 'string') return item.value || undefined;
  if (item.kind !== 'map') return undefined;
  const name = item.entries.find((e) => e.key.kind === 'keyword' && e.key.name === 'name')?.value;
  return name?.kind === 'string' && name.value ? name.value : undefined;
}

function firstAt(node: EdnNode | undefined): string {
  return node?.loc ? ` (first at line ${node.loc.line}, column ${node.loc.column})` : '';
}

/** Checks the `:flow` body; returns the steps it declares, in source order. */
export function checkFlowBody(body: EdnNode, path: Path, context: BodyContext, r: Reporter): FoundStep[] {
  const checker = new Checker(r, context);
  checker.expr(body, path, { mode: 'body', scope: undefined, inFn: false });
  return checker.steps;
}

/**
 * Checks a function literal `(fn [x] …)` used as step or `:functions` code. Problems with the literal itself are
 * reported with `code` (the field it sits in decides which); problems inside it with the body codes.
 */
export function checkFunctionCode(
  node: EdnNode,
  path: Path,
  r: Reporter,
  options: { maxParams: number; code: DiagnosticCode },
): void {
  if (node.kind !== 'list' || node.items[0]?.kind !== 'symbol' || node.items[0].name !== 'fn') {
    r.error(
      options.code,
      node,
      path,
      `function code must be a function literal (fn [x] …), found ${describeNode(node)}`,
      'write e.g. (fn [input] (get input :name))',
    );
    return;
  }
  new Checker(r, undefined).fn(node, path, { mode: 'function', scope: undefined, inFn: false }, options);
}

class Checker {
  readonly steps: FoundStep[] = [];
  private readonly stepIds = new Map<string, EdnNode>();

  constructor(
    private readonly r: Reporter,
    private readonly context: BodyContext | undefined,
  ) {}

  expr(node: EdnNode, path: Path, env: Env): void {
    switch (node.kind) {
      case 'symbol':
        this.symbol(node.name, node, path, env);
        return;
      case 'list':
        this.list(node, path, env);
        return;
      case 'vector':
      case 'set':
        node.items.forEach((item, i) => {
          this.expr(item, [...path, String(i)], env);
        });
        return;
      case 'map':
        for (const entry of node.entries) {
          this.expr(entry.key, path, env);
          this.expr(entry.value, [...path, keySegment(entry.key)], env);
        }
        return;
      default:
        return;
    }
  }

  private symbol(name: string, node: EdnNode, path: Path, env: Env): void {
    if (isBound(env.scope, name) || FUNCTION_SET.has(name)) return;
    if (SPECIAL_FORM_SET.has(name)) {
      this.r.error(
        'invalid_form',
        node,
        path,
        `${name} is a special form and cannot be used as a value`,
        `call it: (${name} …)`,
      );
      return;
    }
    if (name === 'flow/input' || name === 'flow/step') {
      if (env.mode === 'function') this.flowOpInFunction(name, node, path);
      else
        this.r.error(
          'invalid_form',
          node,
          path,
          `${name} must be called: (${name} …)`,
          name === 'flow/input' ? 'write (flow/input)' : 'write (flow/step :type :id {…})',
        );
      return;
    }
    // Suggestions cost a scan of the names in scope: skip them once no further diagnostic is kept.
    const near = this.r.full ? undefined : closest(name, this.candidates(env));
    this.r.error(
      'unknown_symbol',
      node,
      path,
      `unknown symbol ${name}`,
      near
        ? `did you mean ${near}?`
        : env.mode === 'function'
          ? 'function code sees only its parameter, its own bindings and the core functions; pass data through :input'
          : 'bind it with let, or use a function of the orchestration language (get, get-in, assoc, str, …)',
    );
  }

  private *candidates(env: Env): Generator<string> {
    yield* FUNCTION_SET;
    if (env.mode === 'body') yield* ['flow/input', 'flow/step'];
    yield* boundNames(env.scope);
  }

  private flowOpInFunction(name: string, node: EdnNode, path: Path): void {
    this.r.error(
      'unknown_symbol',
      node,
      path,
      `${name} is not available inside function code`,
      'functions have no I/O: run steps in the flow body and pass their results through :input',
    );
  }

  private list(node: EdnList, path: Path, env: Env): void {
    const [head, ...args] = node.items;
    if (!head) return;
    const argPath = (i: number) => [...path, String(i + 1)];
    const checkArgs = (e: Env = env) =>
      args.forEach((a, i) => {
        this.expr(a, argPath(i), e);
      });
    if (head.kind === 'symbol') {
      const name = head.name;
      if (SPECIAL_FORM_SET.has(name)) {
        this.special(name, node, path, env);
        return;
      }
      if (name === 'flow/input' || name === 'flow/step') {
        if (env.mode === 'function') {
          this.flowOpInFunction(name, head, [...path, '0']);
          checkArgs();
        } else if (name === 'flow/input') {
          if (args.length > 0)
            this.r.error(
              'invalid_form',
              node,
              path,
              '(flow/input) takes no arguments',
              'write (flow/input) and pick keys with (:key input)',
            );
        } else this.step(node, path, env);
        return;
      }
      if (TRANSFORM_SET.has(name) && env.mode === 'body' && !isBound(env.scope, name)) {
        this.r.warn(
          'orchestration_transform',
          node,
          path,
          `${name} in the flow body: data shaping belongs in a :function step`,
          `move it into (flow/step :function :some-id {:code (fn [x] (${name} …)) :input …}) so it runs once and its result is recorded`,
        );
      }
      this.symbol(name, head, [...path, '0'], env);
      checkArgs();
      return;
    }
    if (head.kind === 'keyword') {
      if (args.length < 1 || args.length > 2) {
        this.r.error(
          'invalid_form',
          node,
          path,
          `(:${head.name} …) takes a map and an optional default`,
          `write (:${head.name} m) or (:${head.name} m default)`,
        );
      }
      checkArgs();
      return;
    }
    if (head.kind === 'list') {
      this.expr(head, [...path, '0'], env);
      checkArgs();
      return;
    }
    this.r.error(
      'invalid_form',
      head,
      [...path, '0'],
      `cannot call ${describeNode(head)}`,
      'the first element of a list is the function to call; use a vector [...] for data',
    );
    checkArgs();
  }

  private arity(node: EdnList, path: Path, name: string, min: number, max: number, usage: string): boolean {
    const n = node.items.length - 1;
    if (n >= min && n <= max) return true;
    this.r.error(
      'invalid_form',
      node,
      path,
      `${name} takes ${min === max ? min : max === Infinity ? `at least ${min}` : `${min} to ${max}`} argument${max === 1 && min === 1 ? '' : 's'}, found ${n}`,
      `write ${usage}`,
    );
    return false;
  }

  private special(name: string, node: EdnList, path: Path, env: Env): void {
    const args = node.items.slice(1);
    const checkFrom = (start: number, e: Env = env) => {
      for (let i = start; i < args.length; i++) this.expr(args[i] as EdnNode, [...path, String(i + 1)], e);
    };
    switch (name) {
      case 'quote':
        this.arity(node, path, 'quote', 1, 1, '(quote form)');
        return;
      case 'do':
      case 'and':
      case 'or':
        checkFrom(0);
        return;
      case 'if':
        this.arity(node, path, 'if', 2, 3, '(if test then else)');
        checkFrom(0);
        return;
      case 'when':
      case 'when-not':
        this.arity(node, path, name, 1, Infinity, `(${name} test body…)`);
        checkFrom(0);
        return;
      case 'cond':
        if (args.length % 2 === 1) {
          this.r.error(
            'invalid_form',
            node,
            path,
            'cond takes test/expression pairs; the last test has no expression',
            'end with :else value',
          );
        }
        checkFrom(0);
        return;
      case 'let':
        this.let(node, path, env);
        return;
      case 'for':
        this.for(node, path, env);
        return;
      case 'fn':
        this.fn(node, path, env, { maxParams: Infinity, code: 'invalid_form' });
        return;
    }
  }

  /**
   * The names a binding form introduces: one unqualified symbol that is not a special form. Destructuring is reported,
   * but the symbols inside it are still bound so that one mistake does not cascade into unknown-symbol errors.
   */
  private bindingNames(node: EdnNode, path: Path): string[] {
    if (
      node.kind === 'symbol' &&
      !node.name.includes('/') &&
      !SPECIAL_FORM_SET.has(node.name) &&
      node.name !== '&'
    ) {
      return [node.name];
    }
    const destructuring = node.kind === 'vector' || node.kind === 'map';
    this.r.error(
      'invalid_binding',
      node,
      path,
      destructuring
        ? 'destructuring is not supported'
        : node.kind === 'symbol'
          ? `${node.name} cannot be bound`
          : `a binding name must be a symbol, found ${describeNode(node)}`,
      destructuring
        ? 'bind one name and pick values with get, get-in or (:key m)'
        : 'use a plain name such as input or resp',
    );
    return destructuring ? symbolsIn(node) : [];
  }

  private let(node: EdnList, path: Path, env: Env): void {
    const bindings = node.items[1];
    if (bindings?.kind !== 'vector') {
      this.r.error(
        'invalid_form',
        bindings ?? node,
        bindings ? [...path, '1'] : path,
        'let needs a binding vector',
        'write (let [name value …] body)',
      );
      node.items.slice(2).forEach((a, i) => {
        this.expr(a, [...path, String(i + 2)], env);
      });
      return;
    }
    const bPath = [...path, '1'];
    if (bindings.items.length % 2 === 1) {
      this.r.error(
        'invalid_form',
        bindings,
        bPath,
        'let bindings come in name/value pairs; the last name has no value',
        'add the missing value',
      );
    }
    const scope = extend(env.scope, []);
    for (let i = 0; i + 1 < bindings.items.length; i += 2) {
      this.expr(bindings.items[i + 1] as EdnNode, [...bPath, String(i + 1)], { ...env, scope });
      bind(scope, this.bindingNames(bindings.items[i] as EdnNode, [...bPath, String(i)]));
    }
    if (bindings.items.length % 2 === 1) {
      // The dangling name is reported above; binding it avoids a second, misleading error at its uses.
      const last = bindings.items.length - 1;
      bind(scope, this.bindingNames(bindings.items[last] as EdnNode, [...bPath, String(last)]));
    }
    node.items.slice(2).forEach((a, i) => {
      this.expr(a, [...path, String(i + 2)], { ...env, scope });
    });
  }

  private for(node: EdnList, path: Path, env: Env): void {
    const bindings = node.items[1];
    if (bindings?.kind !== 'vector' || bindings.items.length === 0) {
      this.r.error(
        'invalid_form',
        bindings ?? node,
        bindings ? [...path, '1'] : path,
        'for needs a binding vector',
        'write (for [x xs :when test] body)',
      );
      node.items.slice(2).forEach((a, i) => {
        this.expr(a, [...path, String(i + 2)], env);
      });
      return;
    }
    const bPath = [...path, '1'];
    if (bindings.items.length % 2 === 1) {
      this.r.error(
        'invalid_form',
        bindings,
        bPath,
        'for bindings come in pairs; the last one has no value',
        'write (for [x xs :when test] body)',
      );
    }
    const scope = extend(env.scope, []);
    for (let i = 0; i + 1 < bindings.items.length; i += 2) {
      const target = bindings.items[i] as EdnNode;
      const value = bindings.items[i + 1] as EdnNode;
      if (target.kind === 'keyword') {
        if (target.name !== 'when' || i === 0) {
          this.r.error(
            'invalid_form',
            target,
            [...bPath, String(i)],
            i === 0 ? 'for must start with a binding' : `:${target.name} is not supported in for`,
            'for takes bindings (x xs) and :when tests',
          );
          // An unsupported modifier's value (e.g. :let bindings) is not checked: it would only add noise.
          if (target.name !== 'when') continue;
        }
        this.expr(value, [...bPath, String(i + 1)], { ...env, scope });
        continue;
      }
      this.expr(value, [...bPath, String(i + 1)], { ...env, scope });
      bind(scope, this.bindingNames(target, [...bPath, String(i)]));
    }
    this.arity(node, path, 'for', 2, 2, '(for [x xs] body) with exactly one body expression');
    node.items.slice(2).forEach((a, i) => {
      this.expr(a, [...path, String(i + 2)], { ...env, scope });
    });
  }

  fn(node: EdnList, path: Path, env: Env, options: { maxParams: number; code: DiagnosticCode }): void {
    let index = 1;
    const names: string[] = [];
    const maybeName = node.items[1];
    if (maybeName?.kind === 'symbol') {
      names.push(...this.bindingNames(maybeName, [...path, '1']));
      index = 2;
    }
    const params = node.items[index];
    if (params?.kind !== 'vector') {
      this.r.error(
        'invalid_form',
        params ?? node,
        params ? [...path, String(index)] : path,
        params?.kind === 'list' ? 'multi-arity fn is not supported' : 'fn needs a parameter vector',
        'write (fn [x] body)',
      );
      return;
    }
    const pPath = [...path, String(index)];
    let count = 0;
    params.items.forEach((p, i) => {
      if (p.kind === 'symbol' && p.name === '&') {
        if (i !== params.items.length - 2) {
          this.r.error(
            'invalid_binding',
            p,
            [...pPath, String(i)],
            '& must be followed by exactly one rest parameter',
            'write (fn [x & more] …)',
          );
        }
        return;
      }
      count++;
      names.push(...this.bindingNames(p, [...pPath, String(i)]));
    });
    if (count > options.maxParams) {
      this.r.error(
        options.code,
        params,
        pPath,
        `function code takes at most ${options.maxParams} parameter${options.maxParams === 1 ? '' : 's'} (its :input), found ${count}`,
        'take one parameter and pass a map through :input when you need several values',
      );
    }
    const inner: Env = { ...env, inFn: true, scope: extend(env.scope, names) };
    node.items.slice(index + 1).forEach((a, i) => {
      this.expr(a, [...path, String(index + 1 + i)], inner);
    });
  }

  // ---- steps -----------------------------------------------------------------------------------------------------

  private step(node: EdnList, path: Path, env: Env): void {
    const args = node.items.slice(1);
    if (env.inFn) {
      this.r.error(
        'invalid_form',
        node,
        path,
        'flow/step cannot run inside fn',
        'call steps directly in the flow body, or inside for (each iteration gets an index)',
      );
    }
    if (args.length !== 3) {
      this.r.error(
        'invalid_form',
        node,
        path,
        `flow/step takes a type, an id and a config map, found ${args.length} argument${args.length === 1 ? '' : 's'}`,
        'write (flow/step :http :lookup {…})',
      );
      args.forEach((a, i) => {
        this.expr(a, [...path, String(i + 1)], env);
      });
      return;
    }
    const [typeNode, idNode, config] = args as [EdnNode, EdnNode, EdnNode];
    let type: StepType | undefined;
    if (typeNode.kind === 'keyword' && isStepType(typeNode.name)) type = typeNode.name;
    else {
      const near = typeNode.kind === 'keyword' ? closest(typeNode.name, STEP_TYPES) : undefined;
      this.r.error(
        'unknown_step_type',
        typeNode,
        [...path, '1'],
        typeNode.kind === 'keyword'
          ? `unknown step type :${typeNode.name}`
          : `the step type must be a keyword, found ${describeNode(typeNode)}`,
        `${near ? `did you mean :${near}? ` : ''}step types: ${kw(STEP_TYPES)}`,
      );
    }
    let id: string | undefined;
    if (idNode.kind === 'keyword' && STEP_ID_PATTERN.test(idNode.name)) {
      id = idNode.name;
      const first = this.stepIds.get(id);
      if (first) {
        this.r.error(
          'duplicate_step_id',
          idNode,
          [...path, '2'],
          `step id :${id} is used twice${firstAt(first)}`,
          'step ids are unique in the flow body; a step inside for gets an index per iteration automatically',
        );
        id = undefined;
      } else this.stepIds.set(id, idNode);
    } else {
      this.r.error(
        'invalid_step_config',
        idNode,
        [...path, '2'],
        idNode.kind === 'keyword'
          ? `step id :${idNode.name} is not a valid name`
          : `the step id must be a keyword, found ${describeNode(idNode)}`,
        'step ids are keywords of letters, digits, - and _, starting with a letter, e.g. :lookup',
      );
    }
    const configPath = [...path, '3'];
    if (config.kind !== 'map') {
      this.r.error(
        'invalid_step_config',
        config,
        configPath,
        `the step config must be a map literal, found ${describeNode(config)}`,
        'write the config in place: {:key value …}; values inside it may be expressions',
      );
      this.expr(config, configPath, env);
      return;
    }
    const found: FoundStep | undefined = type && id ? { id, type } : undefined;
    if (type) this.config(STEP_REFERENCE[type], config, configPath, env, found);
    else this.expr(config, configPath, env);
    if (found && type === 'mcp') {
      const value = (name: string) =>
        config.entries.find((e) => e.key.kind === 'keyword' && e.key.name === name)?.value;
      const slot = value('connection');
      const tool = value('tool');
      if (slot?.kind === 'keyword' && tool?.kind === 'string')
        found.mcpTools = [{ slot: slot.name, names: [tool.value] }];
    }
    if (found) this.steps.push(found);
  }

  private config(ref: StepReference, map: EdnMap, path: Path, env: Env, found: FoundStep | undefined): void {
    const where = `a :${ref.type} step`;
    const present = this.fieldsOf(ref.fields, map, path, env, where, found);
    for (const field of ref.fields) {
      if (field.required && !present.has(field.name)) {
        this.r.error(
          'invalid_step_config',
          map,
          [...path, `:${field.name}`],
          `${where} needs :${field.name}`,
          `${field.description} See get_step_reference for :${ref.type}.`,
        );
      }
    }
    const literalKeyword = (name: string): string | undefined => {
      const value = present.get(name);
      return value?.kind === 'keyword' ? value.name : undefined;
    };
    for (const rule of ref.rules) {
      switch (rule.kind) {
        case 'exactly-one':
        case 'at-most-one': {
          const given = rule.fields.filter((f) => present.has(f));
          const names = rule.fields.map((f) => `:${f}`).join(' or ');
          if (given.length === 0 && rule.kind === 'exactly-one') {
            this.r.error(
              'invalid_step_config',
              map,
              path,
              `${where} needs one of ${names}`,
              `set exactly one of ${names}`,
            );
          } else if (given.length > 1) {
            const second = present.get(given[1] as string);
            const keyNode = map.entries.find((e) => e.value === second)?.key;
            this.r.error(
              'invalid_step_config',
              keyNode ?? map,
              [...path, `:${given[1]}`],
              `${where} takes only one of ${names}`,
              `remove :${given[1]} or :${given[0]}`,
            );
          }
          break;
        }
        case 'required-when': {
          const value = literalKeyword(rule.when.field);
          if (value && rule.when.values.includes(value) && !present.has(rule.field)) {
            this.r.error(
              'invalid_step_config',
              map,
              [...path, `:${rule.field}`],
              `${where} with :${rule.when.field} :${value} needs :${rule.field}`,
              `add :${rule.field}`,
            );
          }
          break;
        }
        case 'only-when': {
          const value = literalKeyword(rule.when.field);
          if (value && !rule.when.values.includes(value) && present.has(rule.field)) {
            const keyNode = map.entries.find(
              (e) => e.key.kind === 'keyword' && e.key.name === rule.field,
            )?.key;
            this.r.error(
              'invalid_step_config',
              keyNode ?? map,
              [...path, `:${rule.field}`],
              `:${rule.field} only applies when :${rule.when.field} is ${kw(rule.when.values)}`,
              `remove :${rule.field}`,
            );
          }
          break;
        }
      }
    }
  }

  /** Checks the keys and values of a config map against fields; returns the fields present. */
  private fieldsOf(
    fields: readonly StepField[],
    map: EdnMap,
    path: Path,
    env: Env,
    where: string,
    found: FoundStep | undefined,
  ): Map<string, EdnNode> {
    const present = new Map<string, EdnNode>();
    const names = fields.map((f) => f.name);
    for (const { key, value } of map.entries) {
      const entryPath = [...path, keySegment(key)];
      const field = key.kind === 'keyword' ? fields.find((f) => f.name === key.name) : undefined;
      if (!field) {
        const near = key.kind === 'keyword' ? closest(key.name, names) : undefined;
        this.r.error(
          'invalid_step_config',
          key,
          entryPath,
          `unknown key ${keySegment(key)} in ${where}`,
          near ? `did you mean :${near}?` : `valid keys: ${kw(names)}`,
        );
        this.expr(value, entryPath, env);
        continue;
      }
      present.set(field.name, value);
      this.field(field, value, entryPath, env, found);
    }
    return present;
  }

  /** A nested config map: its keys and values, and its required keys. */
  private nestedMap(
    fields: readonly StepField[],
    map: EdnMap,
    path: Path,
    env: Env,
    where: string,
    found: FoundStep | undefined,
  ): Map<string, EdnNode> {
    const present = this.fieldsOf(fields, map, path, env, where, found);
    for (const f of fields) {
      if (f.required && !present.has(f.name)) {
        this.r.error(
          'invalid_step_config',
          map,
          [...path, `:${f.name}`],
          `${where} needs :${f.name}`,
          `${f.description} See get_step_reference.`,
        );
      }
    }
    return present;
  }

  /**
   * A vector whose items have their own check (an :llm step's `:tools` and their `:allow` lists). It must be written
   * in place: which remote tools a step may call is decided before the run, never by data.
   */
  private vectorOf(
    field: StepField,
    check: Extract<FieldCheck, { kind: 'vector' }>,
    value: EdnNode,
    path: Path,
    env: Env,
    found: FoundStep | undefined,
  ): void {
    if (value.kind !== 'vector') {
      if (isExpression(value)) {
        this.r.error(
          'invalid_step_config',
          value,
          path,
          `:${field.name} must be a vector written in place, not an expression`,
          'the value must be known before the run: write [ … ]',
        );
        this.expr(value, path, env);
      } else
        this.r.error(
          'invalid_step_config',
          value,
          path,
          `:${field.name} must be a vector, found ${describeNode(value)}`,
          'write [ … ]',
        );
      return;
    }
    const items = check.items as FieldCheck;
    if (value.items.length < (check.minItems ?? 0)) {
      this.r.error(
        'invalid_step_config',
        value,
        path,
        `:${field.name} is empty`,
        field.name === 'allow'
          ? 'name at least one remote tool, e.g. ["search"]; without tools leave the entry out'
          : `add at least ${check.minItems} element${check.minItems === 1 ? '' : 's'}, or leave :${field.name} out`,
      );
    }
    if (check.maxItems !== undefined && value.items.length > check.maxItems) {
      this.r.error(
        'invalid_step_config',
        value,
        path,
        `:${field.name} has ${value.items.length} elements; at most ${check.maxItems} are allowed`,
        'split the work across steps',
      );
    }
    const names = new Map<string, EdnNode>();
    value.items.forEach((item, i) => {
      const itemPath = [...path, String(i)];
      if (items.kind === 'tool') {
        const name = this.toolItem(items, item, itemPath, env);
        if (name === undefined) return;
        const first = names.get(name);
        if (first) {
          this.r.error(
            'invalid_step_config',
            item,
            itemPath,
            `tool "${name}" is allowed twice${firstAt(first)}`,
            'name each tool once',
          );
        } else names.set(name, item);
        return;
      }
      if (items.kind === 'map' && items.fields) {
        if (item.kind !== 'map') {
          this.r.error(
            'invalid_step_config',
            item,
            itemPath,
            `each element of :${field.name} must be a map literal, found ${describeNode(item)}`,
            field.type,
          );
          if (isExpression(item)) this.expr(item, itemPath, env);
          return;
        }
        this.toolsEntry(items.fields, item, itemPath, env, found, field);
        return;
      }
      this.field({ ...field, check: items }, item, itemPath, env, found);
    });
  }

  /** One `:tools` entry of an :llm step; records its slot and allowlist on the step. */
  private toolsEntry(
    fields: readonly StepField[],
    map: EdnMap,
    path: Path,
    env: Env,
    found: FoundStep | undefined,
    field: StepField,
  ): void {
    const entry: FoundStep | undefined = found ? { id: found.id, type: found.type } : undefined;
    const allowed: string[] = [];
    const present = this.nestedMap(fields, map, path, env, `a :${field.name} entry`, entry);
    const slot = present.get('mcp');
    const allow = present.get('allow');
    if (allow?.kind === 'vector') {
      for (const item of allow.items) {
        const name = toolNameOf(item);
        if (name !== undefined) allowed.push(name);
      }
    }
    if (found && slot?.kind === 'keyword') {
      found.mcpTools ??= [];
      found.mcpTools.push({ slot: slot.name, names: allowed });
    }
  }

  /** An :allow element: a tool name string, or `{:name "…" :trusted-metadata true}`. Returns the name. */
  private toolItem(
    check: Extract<FieldCheck, { kind: 'tool' }>,
    item: EdnNode,
    path: Path,
    env: Env,
  ): string | undefined {
    if (item.kind === 'string') {
      if (item.value.length === 0 || [...item.value].length > check.maxLength) {
        this.r.error(
          'invalid_step_config',
          item,
          path,
          item.value.length === 0
            ? 'a tool name must not be empty'
            : `a tool name is longer than ${check.maxLength} characters`,
          'write the remote tool name as the server lists it',
        );
        return undefined;
      }
      return item.value;
    }
    if (item.kind === 'map') {
      const present = this.nestedMap(check.fields, item, path, env, 'an :allow entry', undefined);
      const name = present.get('name');
      if (name?.kind === 'string' && name.value.length === 0) {
        this.r.error(
          'invalid_step_config',
          name,
          [...path, ':name'],
          'a tool name must not be empty',
          'write the remote tool name as the server lists it',
        );
        return undefined;
      }
      return name?.kind === 'string' ? name.value : undefined;
    }
    this.r.error(
      'invalid_step_config',
      item,
      path,
      `a tool in :allow must be a string name or {:name "…" :trusted-metadata true}, found ${describeNode(item)}`,
      'write the tool name in double quotes, e.g. "search"',
    );
    if (isExpression(item)) this.expr(item, path, env);
    return undefined;
  }

  private field(field: StepField, value: EdnNode, path: Path, env: Env, found: FoundStep | undefined): void {
    const check = field.check;
    const bad = (message: string, hint: string) =>
      this.r.error('invalid_step_config', value, path, message, hint);
    const literalOnly = (what: string) =>
      bad(
        `:${field.name} must be ${what} written in place, not an expression`,
        `the value must be known before the run: write ${what}`,
      );
    switch (check.kind) {
      case 'slot': {
        if (value.kind !== 'keyword') {
          literalOnly('a keyword naming a :requires slot');
          return;
        }
        if (found && field.name === 'connection') found.connection = value.name;
        const slots = this.context?.slots ?? new Map<string, ConnectionType>();
        const declared = slots.get(value.name);
        if (declared === undefined) {
          const candidates = [...slots].filter(([, t]) => !check.types || check.types.includes(t));
          const near = closest(
            value.name,
            candidates.map(([name]) => name),
          );
          this.r.error(
            'unbound_connection_slot',
            value,
            path,
            `connection slot :${value.name} is not declared in :requires`,
            near
              ? `did you mean :${near}?`
              : `add {:slot :${value.name} :type :${check.types?.[0] ?? 'http-api'}} to :requires`,
          );
        } else if (check.types && !check.types.includes(declared)) {
          bad(
            `:${field.name} names slot :${value.name} of type :${declared}; it must be a slot of type ${kw(check.types)}`,
            `bind a slot declared with :type ${kw(check.types)}, e.g. {:slot :${check.types[0]} :type :${check.types[0]}}`,
          );
        }
        return;
      }
      case 'function-ref': {
        if (value.kind !== 'keyword') {
          literalOnly('a keyword naming a :functions id');
          return;
        }
        if (found) found.functionRef = value.name;
        const ids = this.context?.functionIds ?? new Set<string>();
        if (!ids.has(value.name)) {
          const near = closest(value.name, ids);
          this.r.error(
            'unknown_function_ref',
            value,
            path,
            `:ref :${value.name} names no function in :functions`,
            near
              ? `did you mean :${near}?`
              : `declare it: :functions [{:id :${value.name} :code (fn [x] …)}]`,
          );
        }
        return;
      }
      case 'fn':
        checkFunctionCode(value, path, this.r, { maxParams: check.maxParams, code: 'invalid_step_config' });
        return;
      case 'enum':
        if (isExpression(value)) {
          if (check.literal) literalOnly(`one of ${kw(check.values)}`);
          else this.expr(value, path, env);
          return;
        }
        if (value.kind !== 'keyword' || !check.values.includes(value.name)) {
          bad(
            `:${field.name} must be one of ${kw(check.values)}, found ${describeNode(value)}`,
            `use one of ${kw(check.values)}`,
          );
        }
        return;
      case 'string':
        if (isExpression(value)) {
          if (check.literal) literalOnly('a string');
          else this.expr(value, path, env);
          return;
        }
        if (value.kind !== 'string') {
          bad(
            `:${field.name} must be a string, found ${describeNode(value)}`,
            'write it in double quotes, or compute it with (str …)',
          );
          return;
        }
        if (check.maxLength !== undefined && [...value.value].length > check.maxLength) {
          bad(`:${field.name} is longer than ${check.maxLength} characters`, 'shorten it');
        } else if (check.pattern !== undefined && !new RegExp(check.pattern).test(value.value)) {
          bad(
            `:${field.name} must be ${check.patternHint ?? `a string matching ${check.pattern}`}`,
            `fix the value of :${field.name}`,
          );
        }
        return;
      case 'integer':
      case 'number': {
        if (isExpression(value)) {
          this.expr(value, path, env);
          return;
        }
        const ok = value.kind === 'int' || (check.kind === 'number' && value.kind === 'float');
        const what = check.kind === 'integer' ? 'an integer' : 'a number';
        if (!ok)
          bad(
            `:${field.name} must be ${what}, found ${describeNode(value)}`,
            `write ${what} between ${check.min} and ${check.max}`,
          );
        else if (value.value < check.min || value.value > check.max) {
          bad(
            `:${field.name} must be between ${check.min} and ${check.max}, found ${value.value}`,
            `write ${what} between ${check.min} and ${check.max}`,
          );
        }
        return;
      }
      case 'boolean':
        if (isExpression(value)) {
          if (check.literal) literalOnly('true or false');
          else this.expr(value, path, env);
          return;
        }
        if (value.kind !== 'boolean')
          bad(`:${field.name} must be true or false, found ${describeNode(value)}`, 'write true or false');
        return;
      case 'map':
        if (isExpression(value)) {
          this.expr(value, path, env);
          return;
        }
        if (value.kind !== 'map') {
          bad(`:${field.name} must be a map, found ${describeNode(value)}`, 'write {:key value …}');
          return;
        }
        if (check.fields) this.nestedMap(check.fields, value, path, env, `:${field.name}`, found);
        else this.expr(value, path, env);
        return;
      case 'vector':
        if (check.items) {
          this.vectorOf(field, check, value, path, env, found);
          return;
        }
        if (!isExpression(value) && value.kind !== 'vector') {
          bad(`:${field.name} must be a vector, found ${describeNode(value)}`, 'write [ … ]');
          return;
        }
        this.expr(value, path, env);
        return;
      case 'tool':
        // Checked where it sits, inside the :allow vector (see vectorOf).
        this.expr(value, path, env);
        return;
      case 'any':
        this.expr(value, path, env);
        return;
    }
  }
}
