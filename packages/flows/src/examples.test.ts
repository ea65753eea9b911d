import { describe, expect, it } from 'vitest';
import { readEdn } from './edn/reader.js';
import { stripLoc } from './edn/types.js';
import { writeEdn } from './edn/writer.js';
import { readExampleFiles, renderExamplesModule } from './examples/generate.js';
import { EXAMPLE_FLOWS } from './index.js';
import { invocationInputSchema } from './schema.js';
import { validateFlow } from './validate.js';

const EXPECTED = [
  'answer-from-docs',
  'daily-report',
  'enrich-company',
  'summarize-text',
  'triage-ticket',
  'trial-follow-up',
  'webhook-transform',
];

describe('example flows', () => {
  it('are the seven realistic flows, embedded exactly as the .edn files say', () => {
    expect(Object.keys(EXAMPLE_FLOWS)).toEqual(EXPECTED);
    // The module embeds the files (the package reads no files at runtime); regenerate it with gen:examples.
    expect(EXAMPLE_FLOWS, 'run pnpm --filter @flowgate/flows gen:examples').toEqual(readExampleFiles());
    // Quotes, backticks, template openers and backslashes in a definition survive embedding.
    const tricky = ['x"', '`', '$', '{y}', '\\'].join('');
    const rendered = renderExamplesModule({ 'a-b': tricky });
    expect(rendered).toContain(`"a-b":\n    ${JSON.stringify(tricky)},`);
  });

  it.each(EXPECTED)('%s validates with no diagnostics at all, and its slug is its name', (name) => {
    const result = validateFlow(EXAMPLE_FLOWS[name] as string);
    expect(result.diagnostics).toEqual([]);
    expect(result.valid).toBe(true);
    const model = result.model;
    if (!model) throw new Error('model expected');
    expect(model.slug).toBe(name);
    for (const mcp of model.interfaces.mcp) {
      expect(invocationInputSchema(model, mcp.invocation)?.type).toBe('object');
    }
  });

  it.each(EXPECTED)('%s round-trips read → write → read, compact and pretty', (name) => {
    const first = readEdn(EXAMPLE_FLOWS[name] as string);
    if (!first.ok) throw new Error('example did not read');
    const tree = stripLoc(first.value);
    for (const text of [writeEdn(first.value), writeEdn(first.value, { pretty: true })]) {
      const again = readEdn(text);
      expect(again.ok && stripLoc(again.value)).toEqual(tree);
      expect(validateFlow(text).diagnostics).toEqual([]);
    }
  });

  it('cover what the product needs to show', () => {
    const models = EXPECTED.flatMap((name) => validateFlow(EXAMPLE_FLOWS[name] as string).model ?? []);
    expect(models).toHaveLength(EXPECTED.length);
    const stepTypes = new Set(models.flatMap((m) => m.steps.map((s) => s.type)));
    expect([...stepTypes].sort()).toEqual(['function', 'http', 'kv', 'llm', 'mcp', 'sleep']);
    expect(EXAMPLE_FLOWS['daily-report']).toContain(':flowgate.viewer/kind :html');
    expect(models.some((m) => m.interfaces.webhook.length > 0)).toBe(true);
    expect(models.every((m) => m.interfaces.mcp.length > 0)).toBe(true);
    const multi = models.find((m) => m.slug === 'trial-follow-up');
    expect(multi?.steps.map((s) => s.type)).toEqual(['kv', 'function', 'http', 'kv', 'sleep', 'http']);
  });
});
