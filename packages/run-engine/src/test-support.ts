/**
 * Helpers for this package's tests (not exported): evaluate an expression the validator accepts and print the
 * value in EDN notation, so tests compare exact results as text.
 */
import { type FlowModel, readEdn, validateFlow } from '@flowgate/flows';
import { type RunErrorJson, toRunError } from './errors.js';
import { BODY_ENV, Evaluator } from './evaluator.js';
import { DEFAULT_RUN_LIMITS, Meter, type RunLimits } from './limits.js';
import { fromJson, printValue, type Value, VMap } from './values.js';

/** A validated model for `{:slug :t <extra> :flow <body>}`; throws with the diagnostics when it does not validate. */
export function modelOf(body: string, extra = ''): FlowModel {
  const result = validateFlow(`{:slug :t ${extra}\n :flow ${body}}`);
  if (!result.valid || !result.model) {
    throw new Error(`invalid flow: ${JSON.stringify(result.diagnostics.filter((d) => d.severity === 'error'))}`);
  }
  return result.model;
}

interface EvalOptions {
  input?: unknown;
  limits?: Partial<RunLimits>;
  deadline?: number;
  /** Skip the validator (for trees it would refuse: the interpreter must still be safe on them). */
  raw?: boolean;
}

function meterFor(options: EvalOptions): Meter {
  return new Meter(
    { ...DEFAULT_RUN_LIMITS, ...options.limits },
    options.deadline ?? Number.POSITIVE_INFINITY,
    undefined,
  );
}

export function evalValue(text: string, options: EvalOptions = {}): Value {
  const meter = meterFor(options);
  let node: FlowModel['flow'];
  if (options.raw) {
    const read = readEdn(text);
    if (!read.ok) throw new Error(`unreadable: ${JSON.stringify(read.diagnostics)}`);
    node = read.value;
  } else node = modelOf(text).flow;
  const input = options.input === undefined ? VMap.EMPTY : fromJson(options.input, meter);
  return new Evaluator(meter, input).eval(node, BODY_ENV);
}

/** The value of an expression, printed as EDN (`{:a 1, :b [2 3]}`). */
export function ev(text: string, options: EvalOptions = {}): string {
  return printValue(evalValue(text, options), meterFor({}));
}

/** The error an expression fails with. */
export function evError(text: string, options: EvalOptions = {}): RunErrorJson {
  try {
    const value = evalValue(text, options);
    throw new Error(`expected an error, got ${printValue(value, meterFor({}))}`);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('expected an error')) throw error;
    return toRunError(error).toJSON();
  }
}
