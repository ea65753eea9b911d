import type { EdnList, EdnNode, EdnVector, SPECIAL_FORMS } from '@flowgate/flows';
import { BUILTINS, type BuiltinContext, builtinFn, isBuiltin, lookup } from './builtins.js';
import { RunError } from './errors.js';
import { HARD_MAX_DEPTH, type Meter } from './limits.js';
import {
  Fn,
  isTruthy,
  Keyword,
  List,
  Sym,
  seqItems,
  typeName,
  type Value,
  Vec,
  VMap,
  VSet,
} from './values.js';

/**
 * The synchronous core of the interpreter: everything except `flow/step`. Function code and `fn` bodies always run
 * here (the validator keeps steps out of them); interpreter.ts evaluates the forms of the flow body that contain
 * steps asynchronously and hands every step-free subtree to this class.
 *
 * Safety: there is no host access at all. Symbols resolve to local bindings or to the builtin table, nothing else;
 * values are the classes of values.ts, never host objects, so no property lookup or prototype walk can happen.
 * Every form evaluated costs fuel, every collection or string built is checked against the size limits, and
 * nesting (forms and function calls) is bounded by `maxDepth`. Each error carries the position of the innermost
 * form that was being evaluated.
 */
export type SpecialForm = (typeof SPECIAL_FORMS)[number];

interface Binding {
  readonly name: string;
  readonly value: Value;
  readonly next: Binding | null;
}

/** Lexical scope; `inBody` says whether `(flow/input)` is available (never inside function code). */
export interface Env {
  readonly bindings: Binding | null;
  readonly inBody: boolean;
}

export const FUNCTION_ENV: Env = { bindings: null, inBody: false };
export const BODY_ENV: Env = { bindings: null, inBody: true };

export function bind(env: Env, name: string, value: Value): Env {
  return { bindings: { name, value, next: env.bindings }, inBody: env.inBody };
}

function findBinding(env: Env, name: string): Binding | undefined {
  for (let b = env.bindings; b; b = b.next) if (b.name === name) return b;
  return undefined;
}

export function invalidForm(message: string): RunError {
  return new RunError('invalid_form', message);
}

export function symbolName(node: EdnNode | undefined, what: string): string {
  if (node?.kind !== 'symbol' || node.name.includes('/')) throw invalidForm(`${what} must be a plain symbol`);
  return node.name;
}

/** `for` bindings: `x xs` pairs and `:when test` clauses, parsed once per form. */
export type ForClause = { kind: 'bind'; name: string; expr: EdnNode } | { kind: 'when'; expr: EdnNode };

const forCache = new WeakMap<EdnList, ForClause[]>();

export function forClauses(node: EdnList): ForClause[] {
  const cached = forCache.get(node);
  if (cached) return cached;
  const bindings = node.items[1];
  if (bindings?.kind !== 'vector' || bindings.items.length === 0 || bindings.items.length % 2 !== 0) {
    throw invalidForm('for needs a binding vector of pairs: (for [x xs :when test] body)');
  }
  const clauses: ForClause[] = [];
  for (let i = 0; i < bindings.items.length; i += 2) {
    const target = bindings.items[i] as EdnNode;
    const expr = bindings.items[i + 1] as EdnNode;
    if (target.kind === 'keyword') {
      if (target.name !== 'when' || i === 0) throw invalidForm(`:${target.name} is not supported in for`);
      clauses.push({ kind: 'when', expr });
    } else clauses.push({ kind: 'bind', name: symbolName(target, 'a for binding'), expr });
  }
  forCache.set(node, clauses);
  return clauses;
}

interface FnShape {
  selfName: string | undefined;
  params: string[];
  rest: string | undefined;
  body: EdnNode[];
}

const fnCache = new WeakMap<EdnList, FnShape>();

function fnShape(node: EdnList): FnShape {
  const cached = fnCache.get(node);
  if (cached) return cached;
  let index = 1;
  let selfName: string | undefined;
  if (node.items[1]?.kind === 'symbol') {
    selfName = symbolName(node.items[1], 'a fn name');
    index = 2;
  }
  const paramsNode = node.items[index];
  if (paramsNode?.kind !== 'vector') throw invalidForm('fn needs a parameter vector: (fn [x] body)');
  const params: string[] = [];
  let rest: string | undefined;
  const items = paramsNode.items;
  for (let i = 0; i < items.length; i++) {
    const p = items[i] as EdnNode;
    if (p.kind === 'symbol' && p.name === '&') {
      if (i !== items.length - 2) throw invalidForm('& must be followed by exactly one rest parameter');
      rest = symbolName(items[i + 1], 'a rest parameter');
      break;
    }
    params.push(symbolName(p, 'a fn parameter'));
  }
  const shape = { selfName, params, rest, body: node.items.slice(index + 1) };
  fnCache.set(node, shape);
  return shape;
}

/** Converts a quoted form to data: symbols stay symbols, lists stay lists. */
export function quoted(node: EdnNode, meter: Meter): Value {
  meter.tick(1);
  switch (node.kind) {
    case 'nil':
      return null;
    case 'boolean':
    case 'int':
    case 'float':
    case 'string':
    case 'char':
      return node.value;
    case 'keyword':
      return new Keyword(node.name);
    case 'symbol':
      return new Sym(node.name);
    case 'tagged':
      return node.value.value;
    case 'list':
      return new List(node.items.map((n) => quoted(n, meter)));
    case 'vector':
      return new Vec(node.items.map((n) => quoted(n, meter)));
    case 'set':
      return VSet.from(
        node.items.map((n) => quoted(n, meter)),
        meter,
      );
    case 'map':
      return VMap.from(
        node.entries.map((e) => [quoted(e.key, meter), quoted(e.value, meter)] as const),
        meter,
      );
  }
}

/**
 * Attaches the form's position to a run error passing through it. Anything else passes untouched (and does no work:
 * near a JS stack overflow, a handler that allocates would only overflow again).
 */
export function located(error: unknown, node: EdnNode): unknown {
  if (error instanceof RunError) return error.at(node.loc);
  return error;
}

export class Evaluator implements BuiltinContext {
  private depth = 0;
  private readonly maxDepth: number;
  private readonly builtinValues = new Map<string, Fn>();

  constructor(
    readonly meter: Meter,
    protected readonly input: Value,
  ) {
    this.maxDepth = Math.min(meter.limits.maxDepth, HARD_MAX_DEPTH);
  }

  // ---- calling ------------------------------------------------------------------------------------------------

  apply(f: Value, args: readonly Value[]): Value {
    // Calls from builtins (map, reduce, sort-by …) cost a step each, like a call written in the body.
    this.meter.tick(1);
    if (f instanceof Fn) return f.call(args);
    if (f instanceof Keyword || f instanceof VMap) {
      if (args.length < 1 || args.length > 2) {
        throw new RunError(
          'arity_error',
          `${typeName(f)} called as a function takes 1 or 2 arguments, got ${args.length}`,
        );
      }
      const found =
        f instanceof Keyword ? lookup(args[0] as Value, f, this.meter) : f.get(args[0] as Value, this.meter);
      return found === undefined ? (args[1] ?? null) : found;
    }
    if (f instanceof VSet) {
      if (args.length !== 1)
        throw new RunError('arity_error', `a set called as a function takes 1 argument, got ${args.length}`);
      return f.has(args[0] as Value, this.meter) ? (f.get(args[0] as Value, this.meter) as Value) : null;
    }
    throw new RunError('not_callable', `${typeName(f)} cannot be called as a function`);
  }

  /** Enters one level of nesting; the caller must call `leave()` in a finally block. */
  protected enter(node: EdnNode): void {
    if (++this.depth > this.maxDepth) {
      this.depth--;
      throw new RunError(
        'recursion_too_deep',
        `evaluation nested deeper than ${this.maxDepth} levels (check for unbounded recursion)`,
      ).at(node.loc);
    }
  }

  protected leave(): void {
    this.depth--;
  }

  // ---- evaluation ---------------------------------------------------------------------------------------------

  eval(node: EdnNode, env: Env): Value {
    if (node.kind !== 'list') this.meter.tick(1);
    switch (node.kind) {
      case 'nil':
        return null;
      case 'boolean':
      case 'int':
      case 'float':
      case 'string':
      case 'char':
        return node.value;
      case 'keyword':
        return new Keyword(node.name);
      case 'tagged':
        return node.value.value;
      case 'symbol':
        return this.resolve(node.name, env);
      case 'vector':
        return this.vector(
          node.items.map((n) => this.eval(n, env)),
          node,
        );
      case 'set':
        return this.set(
          node.items.map((n) => this.eval(n, env)),
          node,
        );
      case 'map':
        return this.map(
          node.entries.map((e) => [this.eval(e.key, env), this.eval(e.value, env)] as const),
          node,
        );
      case 'list':
        this.enter(node);
        try {
          // Ticked inside, so running out of fuel here is reported at this form.
          this.meter.tick(1);
          return this.list(node, env);
        } catch (error) {
          throw located(error, node);
        } finally {
          this.leave();
        }
    }
  }

  // Literals: a size or nesting error is reported at the literal itself.
  vector(items: Value[], node: EdnNode): Value {
    try {
      this.meter.collection(items.length);
      return new Vec(items);
    } catch (error) {
      throw located(error, node);
    }
  }

  set(items: Value[], node: EdnNode): Value {
    try {
      this.meter.collection(items.length);
      return VSet.from(items, this.meter);
    } catch (error) {
      throw located(error, node);
    }
  }

  map(entries: (readonly [Value, Value])[], node: EdnNode): Value {
    try {
      this.meter.collection(entries.length);
      return VMap.from(entries, this.meter);
    } catch (error) {
      throw located(error, node);
    }
  }

  protected resolve(name: string, env: Env): Value {
    const binding = findBinding(env, name);
    if (binding) return binding.value;
    if (isBuiltin(name)) {
      let fn = this.builtinValues.get(name);
      if (!fn) {
        fn = builtinFn(name, this);
        this.builtinValues.set(name, fn);
      }
      return fn;
    }
    if (name === 'flow/input' || name === 'flow/step') {
      throw invalidForm(`${name} must be called: (${name} …)`);
    }
    throw new RunError('unknown_symbol', `unknown symbol ${name}`);
  }

  protected flowInput(node: EdnList, env: Env): Value {
    if (!env.inBody) throw new RunError('unknown_symbol', 'flow/input is not available inside function code');
    if (node.items.length !== 1) throw invalidForm('(flow/input) takes no arguments');
    return this.input;
  }

  private list(node: EdnList, env: Env): Value {
    const head = node.items[0];
    if (!head) return new List([]);
    if (head.kind === 'symbol') {
      const name = head.name;
      if (isSpecialForm(name)) return SPECIAL[name].call(this, node, env);
      if (name === 'flow/input') return this.flowInput(node, env);
      if (name === 'flow/step') {
        throw invalidForm(
          env.inBody ? 'flow/step cannot run inside fn' : 'flow/step is not available inside function code',
        );
      }
      return this.callSymbol(name, this.args(node, env), env, head);
    }
    const f = this.eval(head, env);
    return this.apply(f, this.args(node, env));
  }

  /** Calls the function a symbol names: a local binding first (it may shadow a builtin), then the builtins. */
  callSymbol(name: string, args: Value[], env: Env, head: EdnNode): Value {
    const binding = findBinding(env, name);
    if (binding) return this.apply(binding.value, args);
    if (isBuiltin(name)) return BUILTINS[name](args, this);
    throw new RunError('unknown_symbol', `unknown symbol ${name}`).at(head.loc);
  }

  private args(node: EdnList, env: Env): Value[] {
    const out: Value[] = new Array(node.items.length - 1);
    for (let i = 1; i < node.items.length; i++) out[i - 1] = this.eval(node.items[i] as EdnNode, env);
    return out;
  }

  doBody(nodes: readonly EdnNode[], env: Env): Value {
    let result: Value = null;
    for (const n of nodes) result = this.eval(n, env);
    return result;
  }

  /** A closure over `env`; in function code `env` is empty, so the function sees only its parameters. */
  makeFn(node: EdnList, env: Env): Fn {
    const shape = fnShape(node);
    const fn: Fn = new Fn(
      shape.selfName ?? 'fn',
      (args) => {
        const n = shape.params.length;
        if (args.length < n || (shape.rest === undefined && args.length > n)) {
          throw new RunError(
            'arity_error',
            `${shape.selfName ?? 'fn'} takes ${shape.rest === undefined ? n : `at least ${n}`} argument${n === 1 ? '' : 's'}, got ${args.length}`,
          );
        }
        let scope = shape.selfName === undefined ? env : bind(env, shape.selfName, fn);
        for (let i = 0; i < n; i++) scope = bind(scope, shape.params[i] as string, args[i] as Value);
        if (shape.rest !== undefined) {
          scope = bind(scope, shape.rest, args.length > n ? new List(args.slice(n)) : null);
        }
        return this.doBody(shape.body, scope);
      },
      shape.rest === undefined ? shape.params.length : undefined,
    );
    return fn;
  }

  letBindings(node: EdnList): EdnVector {
    const bindings = node.items[1];
    if (bindings?.kind !== 'vector' || bindings.items.length % 2 !== 0) {
      throw invalidForm('let needs a vector of name/value pairs: (let [name value …] body)');
    }
    return bindings;
  }

  forSync(node: EdnList, env: Env): Value {
    const clauses = forClauses(node);
    const body = node.items[2];
    const out: Value[] = [];
    const loop = (i: number, scope: Env): void => {
      const clause = clauses[i];
      if (!clause) {
        out.push(body ? this.eval(body, scope) : null);
        this.meter.collection(out.length);
        return;
      }
      if (clause.kind === 'when') {
        if (isTruthy(this.eval(clause.expr, scope))) loop(i + 1, scope);
        return;
      }
      for (const item of seqItems(this.eval(clause.expr, scope), 'for'))
        loop(i + 1, bind(scope, clause.name, item));
    };
    loop(0, env);
    return new List(out);
  }
}

type SpecialHandler = (this: Evaluator, node: EdnList, env: Env) => Value;

/** One handler per special form of the language; typed by the validator's list, so none can be missing. */
const SPECIAL: Readonly<Record<SpecialForm, SpecialHandler>> = {
  quote(node) {
    if (node.items.length !== 2) throw invalidForm('quote takes one form');
    return quoted(node.items[1] as EdnNode, this.meter);
  },
  do(node, env) {
    return this.doBody(node.items.slice(1), env);
  },
  if(node, env) {
    if (node.items.length < 3 || node.items.length > 4)
      throw invalidForm('if takes a test, a then and an optional else');
    const test = this.eval(node.items[1] as EdnNode, env);
    const branch = isTruthy(test) ? node.items[2] : node.items[3];
    return branch ? this.eval(branch, env) : null;
  },
  when(node, env) {
    if (node.items.length < 2) throw invalidForm('when takes a test and a body');
    return isTruthy(this.eval(node.items[1] as EdnNode, env)) ? this.doBody(node.items.slice(2), env) : null;
  },
  'when-not'(node, env) {
    if (node.items.length < 2) throw invalidForm('when-not takes a test and a body');
    return isTruthy(this.eval(node.items[1] as EdnNode, env)) ? null : this.doBody(node.items.slice(2), env);
  },
  cond(node, env) {
    if (node.items.length % 2 === 0) throw invalidForm('cond takes test/expression pairs');
    for (let i = 1; i < node.items.length; i += 2) {
      if (isTruthy(this.eval(node.items[i] as EdnNode, env)))
        return this.eval(node.items[i + 1] as EdnNode, env);
    }
    return null;
  },
  and(node, env) {
    let result: Value = true;
    for (let i = 1; i < node.items.length; i++) {
      result = this.eval(node.items[i] as EdnNode, env);
      if (!isTruthy(result)) return result;
    }
    return result;
  },
  or(node, env) {
    let result: Value = null;
    for (let i = 1; i < node.items.length; i++) {
      result = this.eval(node.items[i] as EdnNode, env);
      if (isTruthy(result)) return result;
    }
    return result;
  },
  let(node, env) {
    const bindings = this.letBindings(node);
    let scope = env;
    for (let i = 0; i < bindings.items.length; i += 2) {
      const name = symbolName(bindings.items[i], 'a let binding');
      scope = bind(scope, name, this.eval(bindings.items[i + 1] as EdnNode, scope));
    }
    return this.doBody(node.items.slice(2), scope);
  },
  fn(node, env) {
    return this.makeFn(node, env);
  },
  for(node, env) {
    return this.forSync(node, env);
  },
};

export function isSpecialForm(name: string): name is SpecialForm {
  return Object.hasOwn(SPECIAL, name);
}
