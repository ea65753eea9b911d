import { describe, expect, it } from 'vitest';
import { invocationInputSchema } from './schema.js';
import { validateFlow } from './validate.js';

const FLOW = `{:slug :schema-test
 :invocations {:default {:inputs [{:name :s :type :string :required true :label "S" :description "A string" :default "d"}
                                  {:name :t :type :text}
                                  {:name :n :type :number :default 1.5}
                                  {:name :i :type :integer}
                                  {:name :b :type :boolean :default false}
                                  {:name :e :type :email :required true}
                                  {:name :u :type :url}
                                  {:name :d :type :date}
                                  {:name :dt :type :datetime}
                                  {:name :j :type :json :label "Payload"}
                                  {:name :sel :type :select :options [:low "high"] :label "Level" :default :low}
                                  {:name :key :type :secret :required true :label "API key"}
                                  {:name :constructor :type :string}]}
               :empty {}}
 :flow (flow/input)}`;

function model() {
  const result = validateFlow(FLOW);
  if (!result.model) throw new Error(JSON.stringify(result.diagnostics));
  return result.model;
}

describe('invocationInputSchema', () => {
  it('omits flow-authored text unless trusted', () => {
    expect(invocationInputSchema(model(), 'default')).toEqual({
      type: 'object',
      properties: {
        s: { type: 'string', maxLength: 4096 },
        t: { type: 'string', maxLength: 65536 },
        n: { type: 'number' },
        i: { type: 'integer' },
        b: { type: 'boolean' },
        e: { type: 'string', format: 'email', maxLength: 254 },
        u: { type: 'string', format: 'uri', maxLength: 2048 },
        d: { type: 'string', format: 'date' },
        dt: { type: 'string', format: 'date-time' },
        j: {},
        sel: { type: 'string', enum: ['low', 'high'] },
        key: { type: 'string', writeOnly: true, maxLength: 8192 },
        constructor: { type: 'string', maxLength: 4096 },
      },
      required: ['s', 'e', 'key'],
      additionalProperties: false,
    });
  });

  it('adds labels, descriptions and defaults when trusted', () => {
    const schema = invocationInputSchema(model(), 'default', { trusted: true });
    expect(schema?.properties.s).toEqual({
      type: 'string',
      maxLength: 4096,
      title: 'S',
      description: 'A string',
      default: 'd',
    });
    expect(schema?.properties.n).toEqual({ type: 'number', default: 1.5 });
    expect(schema?.properties.b).toEqual({ type: 'boolean', default: false });
    expect(schema?.properties.j).toEqual({ title: 'Payload' });
    expect(schema?.properties.sel).toEqual({
      type: 'string',
      enum: ['low', 'high'],
      title: 'Level',
      default: 'low',
    });
    expect(schema?.properties.key).toEqual({
      type: 'string',
      writeOnly: true,
      maxLength: 8192,
      title: 'API key',
    });
  });

  it('keeps names like constructor as own properties and is plain JSON', () => {
    const schema = invocationInputSchema(model(), 'default');
    expect(Object.hasOwn(schema?.properties ?? {}, 'constructor')).toBe(true);
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });

  it('describes an invocation without inputs and answers undefined for an unknown one', () => {
    expect(invocationInputSchema(model(), 'empty')).toEqual({
      type: 'object',
      properties: {},
      required: [],
      additionalProperties: false,
    });
    expect(invocationInputSchema(model(), 'missing')).toBeUndefined();
    expect(invocationInputSchema(model(), '__proto__')).toBeUndefined();
  });
});
