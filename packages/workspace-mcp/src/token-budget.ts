/**
 * What the workspace tool list may cost an agent before its first call (issue 11), counted with real BPE tokenizers
 * (cl100k_base and o200k_base; the larger count must fit). Held by token-budget.test.ts, printed per tool by
 * `pnpm bench --only tokens`.
 */
import { CATALOG } from './catalog.js';
import { SERVER_CARD_DEFAULT_BASE_URL } from './server-card.js';
import { WORKSPACE_SURFACE } from './surface.js';
import type { ToolDescriptor } from './tool.js';

/** Name, title, description and inputSchema of all 16 tools: the part a model reads. */
export const MODEL_FACING_TOKEN_BUDGET = 3_500;
/** The whole `{"tools":[…]}` body of tools/list with every tool listed (output schemas and annotations included). */
export const TOOLS_LIST_TOKEN_BUDGET = 7_000;

/** The part of a tool entry a model reads, serialised as tools/list sends it. */
export function modelFacingJson(d: ToolDescriptor): string {
  return JSON.stringify({
    name: d.name,
    title: d.title,
    description: d.description,
    inputSchema: d.inputSchema,
  });
}

/**
 * The tools/list body with every catalog tool listed, exactly as the workspace endpoint serialises it for 2025-11-25
 * and 2026-07-28 (icons included), with the icons under the example public URL (`https://flowgate.example.com`, the
 * one the generated docs and card use). A deployment's own host changes each icon's cost by its own tokens (16 icons).
 */
export function fullToolsListJson(iconBase: string = SERVER_CARD_DEFAULT_BASE_URL): string {
  return WORKSPACE_SURFACE.toolsList('1'.repeat(CATALOG.length), iconBase).json;
}
