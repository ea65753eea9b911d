import { CORE_FUNCTIONS, validateFlow } from '@flowgate/flows';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunErrorCode } from './errors.js';
import { runBody } from './interpreter.js';
import type { JournalEntry, StepRunner } from './ports.js';
import { fromJson } from './values.js';

/**
 * Random bodies in the language. Whatever the validator accepts must evaluate: to a value, or to an evaluation
 * error about the data (a type or arity mismatch, a limit) — never to an internal error, an unknown symbol or a
 * malformed form, which would mean the validator and the interpreter disagree.
 */
const NEVER: readonly RunErrorCode[] = [
  'internal_error',
  'unknown_symbol',
  'invalid_form',
  'duplicate_step_execution',
];

const names = CORE_FUNCTIONS.filter((n) => n !== 'range');

const literal = fc.oneof(
  fc.integer({ min: -5, max: 20 }).map(String),
  fc.constantFrom('nil', 'true', 'false', '1.5', '""', '"ab"', '":x"', ':a', ':b', '"{\\"a\\": 1}"'),
);

function expressions(allowSteps: boolean) {
  return fc.letrec<{ e: string }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      literal,
      fc.constantFrom('x', 'y', 'z'),
      fc.array(tie('e'), { maxLength: 3 }).map((xs) => `[${xs.join(' ')}]`),
      fc.array(fc.tuple(fc.constantFrom(':a', ':b', ':c'), tie('e')), { maxLength: 3 }).map((kvs) => {
        const unique = new Map(kvs);
        return `{${[...unique].map(([k, v]) => `${k} ${v}`).join(' ')}}`;
      }),
      fc
        .tuple(fc.constantFrom(...names), fc.array(tie('e'), { maxLength: 3 }))
        .map(([f, args]) => `(${[f, ...args].join(' ')})`),
      fc.tuple(tie('e'), tie('e'), tie('e')).map(([a, b, c]) => `(if ${a} ${b} ${c})`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(let [x ${a}] ${b})`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(when ${a} ${b})`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(cond ${a} ${b} :else x)`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(and ${a} ${b})`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(or ${a} ${b})`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `((fn [x] ${b}) ${a})`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(map (fn [x] ${b}) (vec ${a}))`),
      fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(for [x (vec ${a}) :when x] ${b})`),
      fc.constantFrom('(quote (s 1))', '(:a z)', '(:a z 0)', '(range 3)'),
      ...(allowSteps
        ? [
            tie('e').map((a) => `(flow/step :http :h {:url "https://api.example.test/" :json ${a}})`),
            tie('e').map((a) => `(flow/step :function :f {:code (fn [v] [v v]) :input ${a}})`),
            fc
              .tuple(tie('e'), tie('e'))
              .map(
                ([a, b]) =>
                  `(for [x [1 2] :when ${b}] (flow/step :kv :k {:operation :get :key (str "k" x ${a})}))`,
              ),
          ]
        : []),
    ),
  })).e;
}

function validated(body: string) {
  const result = validateFlow(`{:slug :p :flow (let [x 1 y [1 2] z {:a 1}] ${body})}`);
  return result.valid ? result.model : undefined;
}

const answering: StepRunner = async (req, ctx) => ({
  kind: 'result',
  value: fromJson({ id: req.stepId, type: req.type, config: req.config }, ctx.meter),
});

describe('validator and interpreter agree', () => {
  it('every body the validator accepts evaluates to a value or an error about the data', async () => {
    await fc.assert(
      fc.asyncProperty(expressions(false), async (body) => {
        const model = validated(body);
        if (!model) return;
        const outcome = await runBody(model, {}, { steps: answering, limits: { fuel: 20_000 } });
        if (outcome.status === 'failed')
          expect(NEVER, `${body}: ${outcome.error.message}`).not.toContain(outcome.error.code);
        else expect(outcome.status).toBe('completed');
      }),
      { numRuns: 400 },
    );
  });

  it('replaying a body with its journal gives the same result without running any step again', async () => {
    await fc.assert(
      fc.asyncProperty(expressions(true), async (body) => {
        const model = validated(body);
        if (!model) return;
        const journal = new Map<string, JournalEntry>();
        const first = await runBody(
          model,
          {},
          {
            steps: answering,
            limits: { fuel: 20_000 },
            record: (id, entry) => {
              journal.set(id, entry);
            },
          },
        );
        if (first.status === 'failed')
          expect(NEVER, `${body}: ${first.error.message}`).not.toContain(first.error.code);
        let calls = 0;
        const counting: StepRunner = async (req, ctx) => {
          calls++;
          return answering(req, ctx);
        };
        const again = await runBody(model, {}, { steps: counting, journal, limits: { fuel: 20_000 } });
        // Usage differs by design: the replay executes nothing.
        const { usage: _first, ...firstRest } = first;
        const { usage: _again, ...againRest } = again;
        expect(againRest).toEqual(firstRest);
        expect(calls).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
