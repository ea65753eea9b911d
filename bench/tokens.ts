/**
 * What the workspace tools/list costs an agent in tokens (issue 11): per tool the model-facing part (name, title,
 * description, inputSchema), the output schema and the whole entry, in cl100k_base and o200k_base, then the totals
 * against the budgets in packages/workspace-mcp/src/token-budget.ts (the larger of the two counts must fit).
 * Counting only: no server, no load.
 */
import {
  CATALOG,
  fullToolsListJson,
  MODEL_FACING_TOKEN_BUDGET,
  modelFacingJson,
  SERVER_CARD_DEFAULT_BASE_URL,
  TOOLS_LIST_TOKEN_BUDGET,
  toolIconUrls,
} from '@flowgate/workspace-mcp';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import type { Benchmark } from './lib/bench.js';
import { type Check, fmt, heading, log } from './lib/report.js';

const both = (text: string): [number, number] => [cl100k(text), o200k(text)];

export const tokensBench: Benchmark = {
  name: 'tokens',
  description: 'tools/list token counts per tool (cl100k, o200k) against the token budget',
  async run(): Promise<Check[]> {
    heading('tokens: tools/list, all 16 tools (cl100k / o200k)');
    const rows = [['tool', 'model-facing', 'output schema', 'whole entry']];
    const model: [number, number] = [0, 0];
    for (const t of CATALOG) {
      const m = both(modelFacingJson(t.descriptor));
      const out = both(JSON.stringify(t.descriptor.outputSchema));
      // As listed to 2025-11-25 and later clients: with the tool's icon URL under the example public URL.
      const whole = both(
        JSON.stringify({ ...t.descriptor, icons: toolIconUrls(t, SERVER_CARD_DEFAULT_BASE_URL) }),
      );
      model[0] += m[0];
      model[1] += m[1];
      rows.push([t.name, pair(m), pair(out), pair(whole)]);
    }
    const list = both(fullToolsListJson());
    rows.push(['total', pair(model), '', `${pair(list)} (whole {"tools":[…]})`]);
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows)
      log(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`);
    return [
      check('model-facing tokens (max of encodings)', Math.max(...model), MODEL_FACING_TOKEN_BUDGET),
      check('whole tools/list tokens (max of encodings)', Math.max(...list), TOOLS_LIST_TOKEN_BUDGET),
    ];
  },
};

function pair([a, b]: [number, number]): string {
  return `${fmt(a)} / ${fmt(b)}`;
}

function check(name: string, value: number, budget: number): Check {
  return { benchmark: 'tokens', name, value: fmt(value), target: `≤ ${fmt(budget)}`, pass: value <= budget };
}
