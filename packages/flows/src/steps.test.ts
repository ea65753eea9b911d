import { describe, expect, it } from 'vitest';
import { STEP_LIMITS, STEP_REFERENCE, STEP_TYPES, type StepField, stepReference } from './steps.js';
import { validateFlow } from './validate.js';

describe('step reference', () => {
  it('documents exactly the six documented step types', () => {
    expect([...STEP_TYPES]).toEqual(['http', 'function', 'llm', 'sleep', 'kv', 'mcp']);
    expect(Object.keys(STEP_REFERENCE)).toEqual([...STEP_TYPES]);
    for (const type of STEP_TYPES) expect(STEP_REFERENCE[type].type).toBe(type);
  });

  it('looks a step type up with or without the colon', () => {
    expect(stepReference('http')).toBe(STEP_REFERENCE.http);
    expect(stepReference(':kv')).toBe(STEP_REFERENCE.kv);
    expect(stepReference('email')).toBeUndefined();
    expect(stepReference('__proto__')).toBeUndefined();
    expect(stepReference('constructor')).toBeUndefined();
  });

  it('is plain JSON, so get_step_reference can serve it as is', () => {
    expect(JSON.parse(JSON.stringify(STEP_REFERENCE))).toEqual(STEP_REFERENCE);
  });

  it('has unique fields, rules that name real fields, and a description for everything', () => {
    for (const ref of Object.values(STEP_REFERENCE)) {
      const names = ref.fields.map((f) => f.name);
      expect(new Set(names).size, ref.type).toBe(names.length);
      for (const field of ref.fields) {
        expect(field.description.length, `${ref.type} ${field.name}`).toBeGreaterThan(0);
        expect(field.type.length).toBeGreaterThan(0);
      }
      for (const rule of ref.rules) {
        const mentioned = 'fields' in rule ? rule.fields : [rule.field, rule.when.field];
        for (const name of mentioned) expect(names, `${ref.type} rule`).toContain(name);
      }
      expect(ref.summary.length).toBeGreaterThan(0);
      expect(ref.result.length).toBeGreaterThan(0);
      expect(ref.examples.length).toBeGreaterThan(0);
      expect(ref.limits.length).toBeGreaterThan(0);
    }
  });

  it('has examples that validate cleanly and use their own step type', () => {
    for (const ref of Object.values(STEP_REFERENCE)) {
      for (const example of ref.examples) {
        const result = validateFlow(example.flow);
        expect(result.diagnostics, `${ref.type}: ${example.title}`).toEqual([]);
        expect(result.model?.steps.some((s) => s.type === ref.type)).toBe(true);
      }
    }
  });

  it('states the same limits the validator enforces', () => {
    const field = (type: keyof typeof STEP_REFERENCE, name: string): StepField | undefined =>
      STEP_REFERENCE[type].fields.find((f) => f.name === name);
    expect(field('http', 'timeout-ms')?.check).toEqual({
      kind: 'integer',
      min: 1,
      max: STEP_LIMITS.http.timeoutMsMax,
    });
    expect(field('sleep', 'duration-ms')?.check).toEqual({
      kind: 'integer',
      min: 0,
      max: STEP_LIMITS.sleep.durationMsMax,
    });
    expect(field('kv', 'ttl-s')?.check).toEqual({
      kind: 'integer',
      min: 1,
      max: STEP_LIMITS.kv.ttlSecondsMax,
    });
    expect(STEP_REFERENCE.http.limits.find((l) => l.name === 'response-bytes')?.value).toBe(
      STEP_LIMITS.http.responseBytesMax,
    );
    const over = `{:slug :x :flow (flow/step :sleep :s {:duration-ms ${STEP_LIMITS.sleep.durationMsMax + 1}})}`;
    expect(validateFlow(over).diagnostics.map((d) => d.code)).toEqual(['invalid_step_config']);
  });
});
