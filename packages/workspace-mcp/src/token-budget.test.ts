import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { CATALOG } from './catalog.js';
import {
  fullToolsListJson,
  MODEL_FACING_TOKEN_BUDGET,
  modelFacingJson,
  TOOLS_LIST_TOKEN_BUDGET,
} from './token-budget.js';

// The budget holds for the larger count: models differ in tokenizer and the list must fit every one we measure.
const tokens = (text: string) => Math.max(cl100k(text), o200k(text));

describe('token budget of tools/list', () => {
  it('lists all 16 tools in the measured body', () => {
    expect(JSON.parse(fullToolsListJson()).tools).toHaveLength(16);
  });

  it(`keeps the model-facing part (name, title, description, inputSchema) within ${MODEL_FACING_TOKEN_BUDGET} tokens`, () => {
    const total = CATALOG.reduce((n, t) => n + tokens(modelFacingJson(t.descriptor)), 0);
    expect(total).toBeLessThanOrEqual(MODEL_FACING_TOKEN_BUDGET);
  });

  it(`keeps the whole tools/list body within ${TOOLS_LIST_TOKEN_BUDGET} tokens`, () => {
    expect(tokens(fullToolsListJson())).toBeLessThanOrEqual(TOOLS_LIST_TOKEN_BUDGET);
  });
});
