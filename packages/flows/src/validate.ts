import { type Diagnostic, diagnostic } from './diagnostics.js';
import { readEdn } from './edn/reader.js';
import { buildModel, type FlowModel, flowModelSchema } from './model.js';
import { Reporter } from './reporter.js';

export interface ValidationResult {
  /** False when any diagnostic is an error. */
  valid: boolean;
  /** Present only when valid. */
  model?: FlowModel;
  /** Ordered by position; reader problems stop validation, model and body problems are all reported. */
  diagnostics: Diagnostic[];
}

/** Upper bound on diagnostics returned, so a hostile definition cannot produce an unbounded answer. */
export const MAX_VALIDATION_DIAGNOSTICS = 100;

function byPosition(a: Diagnostic, b: Diagnostic): number {
  return (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? Infinity) - (b.column ?? Infinity);
}

function internalProblem(): Diagnostic {
  return diagnostic(
    'error',
    'edn_syntax_invalid',
    'the definition could not be validated',
    '',
    null,
    'simplify the definition; if it is valid EDN, report it with send_feedback',
  );
}

/**
 * Reads and validates one flow definition. Never throws: every problem, including an unexpected failure inside the
 * validator, comes back as a diagnostic.
 */
export function validateFlow(text: string): ValidationResult {
  try {
    if (typeof text !== 'string') {
      return {
        valid: false,
        diagnostics: [
          diagnostic(
            'error',
            'edn_syntax_invalid',
            'the definition must be EDN text',
            '',
            null,
            'send the definition as a string',
          ),
        ],
      };
    }
    const read = readEdn(text);
    if (!read.ok) return { valid: false, diagnostics: read.diagnostics.slice(0, MAX_VALIDATION_DIAGNOSTICS) };
    const reporter = new Reporter();
    const model = buildModel(read.value, reporter);
    const diagnostics = [...reporter.diagnostics].sort(byPosition).slice(0, MAX_VALIDATION_DIAGNOSTICS);
    if (!model || reporter.errors > 0) return { valid: false, diagnostics };
    const parsed = flowModelSchema.safeParse(model);
    if (!parsed.success) return { valid: false, diagnostics: [...diagnostics, internalProblem()] };
    return { valid: true, model: parsed.data, diagnostics };
  } catch {
    return { valid: false, diagnostics: [internalProblem()] };
  }
}
