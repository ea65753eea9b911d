import { type Diagnostic, diagnostic } from './diagnostics.js';
import { readEdn } from './edn/reader.js';
import { buildModel, type FlowModel, flowModelSchema } from './model.js';
import { Reporter } from './reporter.js';

export interface ValidationResult {
  /** False when any diagnostic is an error. */
  valid: boolean;
  /** Present only when valid. */
  model?: FlowModel;
  /**
   * Errors first, each group ordered by position; at most `MAX_VALIDATION_DIAGNOSTICS`. Reader problems stop
   * validation, model and body problems are all reported.
   */
  diagnostics: Diagnostic[];
  /** Counted over the whole validation, including diagnostics past the returned ones. */
  summary: ValidationSummary;
}

export interface ValidationSummary {
  errors: number;
  warnings: number;
}

function summarize(diagnostics: readonly Diagnostic[]): ValidationSummary {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  return { errors, warnings: diagnostics.length - errors };
}

/** Errors ahead of warnings, so truncation drops warnings first; by position within each. */
function errorsFirst(a: Diagnostic, b: Diagnostic): number {
  const rank = (d: Diagnostic) => (d.severity === 'error' ? 0 : 1);
  return rank(a) - rank(b) || byPosition(a, b);
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
        summary: { errors: 1, warnings: 0 },
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
    if (!read.ok) {
      return {
        valid: false,
        diagnostics: [...read.diagnostics].sort(errorsFirst).slice(0, MAX_VALIDATION_DIAGNOSTICS),
        summary: summarize(read.diagnostics),
      };
    }
    const reporter = new Reporter();
    const model = buildModel(read.value, reporter);
    const diagnostics = reporter.diagnostics.sort(errorsFirst).slice(0, MAX_VALIDATION_DIAGNOSTICS);
    const summary = { errors: reporter.errors, warnings: reporter.warnings };
    if (!model || reporter.errors > 0) return { valid: false, diagnostics, summary };
    const parsed = flowModelSchema.safeParse(model);
    if (!parsed.success) {
      return {
        valid: false,
        diagnostics: [internalProblem(), ...diagnostics],
        summary: { ...summary, errors: summary.errors + 1 },
      };
    }
    return { valid: true, model: parsed.data, diagnostics, summary };
  } catch {
    return { valid: false, diagnostics: [internalProblem()], summary: { errors: 1, warnings: 0 } };
  }
}
