import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CATALOG } from './catalog.js';
import { publishInputSchema, publishOutputSchema } from './published-schema.js';
import type { ToolErrorContent } from './schemas.js';

const ajv = new Ajv({ strict: false });
const jsonSchema = (s: z.ZodType) => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io: 'output' }) as Record<string, unknown>;
  return rest;
};

describe('published output schemas', () => {
  // Successful outputs of every tool are checked by the testing module's rpc on every tools/call the suites make.
  it('accept the tool-error structuredContent of every tool (SDK v1 validates it even with isError)', () => {
    const errors: ToolErrorContent[] = [
      { error: { code: 'invalid_arguments', message: 'flow_slug: required' } },
      { error: { code: 'flow_invalid', message: 'not saved' }, details: { diagnostics: [], valid: false } },
    ];
    for (const tool of CATALOG) {
      const validate = ajv.compile(tool.outputSchema);
      for (const e of errors)
        expect(validate(e), `${tool.name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(tool.outputSchema.type).toBe('object');
      expect(tool.outputSchema.anyOf).toBeUndefined();
    }
  });

  it('still checks types: a wrongly typed success field is refused', () => {
    const published = publishOutputSchema(
      jsonSchema(z.strictObject({ n: z.number().int(), items: z.array(z.strictObject({ s: z.string() })) })),
    );
    const validate = ajv.compile(published);
    expect(validate({ n: 1, items: [{ s: 'a' }] })).toBe(true);
    expect(validate({ n: 'one', items: [] })).toBe(false);
    expect(validate({ n: 1, items: [{ s: 2 }] })).toBe(false);
  });

  it('merges a discriminated union into one object that accepts every member', () => {
    const union = z.discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('a'), x: z.string() }),
      z.strictObject({ kind: z.literal('b'), y: z.number() }),
    ]);
    const published = publishOutputSchema(jsonSchema(z.strictObject({ u: union, v: z.string().nullable() })));
    expect(published).toEqual({
      type: 'object',
      properties: {
        u: {
          properties: {
            // The members' discriminator values are an output enum like any other: left to the answers.
            kind: { type: 'string' },
            x: { type: 'string' },
            y: { type: 'number' },
          },
        },
        v: { type: ['string', 'null'] },
      },
    });
    const validate = ajv.compile(published);
    expect(validate({ u: { kind: 'a', x: 's' }, v: null })).toBe(true);
    expect(validate({ u: { kind: 'b', y: 1 }, v: 's' })).toBe(true);
    expect(validate({ u: { kind: 'c', x: 1 }, v: 's' })).toBe(false);
  });

  it('drops only defaults an agent gains nothing from in input schemas', () => {
    const published = publishInputSchema(
      z.toJSONSchema(
        z.strictObject({
          a: z.boolean().default(false),
          b: z.number().default(0),
          c: z.number().default(10),
        }),
        { io: 'input' },
      ) as Record<string, unknown>,
    );
    const props = published.properties as Record<string, Record<string, unknown>>;
    expect(props.a?.default).toBeUndefined();
    expect(props.b?.default).toBeUndefined();
    expect(props.c?.default).toBe(10);
  });
});
