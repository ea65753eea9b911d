/** The example flows shipped with the product, offered by flow search as starting points. Their text is ours. */
import { EXAMPLE_FLOWS, type FlowModel, validateFlow } from '@flowgate/flows';

export interface FlowTemplate {
  templateId: string;
  slug: string;
  name: string | null;
  description: string | null;
  tags: string[];
  mcpToolNames: string[];
  stepTypes: string[];
  requires: { slot: string; type: string }[];
  literal: string;
}

interface Indexed {
  template: FlowTemplate;
  haystack: string;
}

let templates: Indexed[] | null = null;

function stepTypesOf(model: FlowModel): string[] {
  return [...new Set(model.steps.map((s) => s.type))];
}

/** Read once; each example validates (their own tests guarantee it). */
function loadTemplates(): Indexed[] {
  if (templates) return templates;
  const out: Indexed[] = [];
  for (const [id, literal] of Object.entries(EXAMPLE_FLOWS)) {
    const model = validateFlow(literal).model;
    if (!model) continue;
    const template: FlowTemplate = {
      templateId: id,
      slug: model.slug,
      name: model.name ?? null,
      description: model.description ?? null,
      tags: [...model.tags],
      mcpToolNames: model.interfaces.mcp.map((m) => m.toolName),
      stepTypes: stepTypesOf(model),
      requires: model.requires.map((r) => ({ slot: r.slot, type: r.type })),
      literal,
    };
    const haystack = [
      id,
      model.slug,
      model.name ?? '',
      model.description ?? '',
      ...model.tags,
      ...model.interfaces.mcp.flatMap((m) => [m.toolName, m.description ?? '', m.title ?? '']),
      ...template.stepTypes,
    ]
      .join(' ')
      .toLowerCase();
    out.push({ template, haystack });
  }
  templates = out;
  return out;
}

/** Query words: lower-cased, split on anything that is not a letter or digit. */
function queryWords(query: string): string[] {
  return query
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** Templates whose text contains every word of the query (all of them when browsing). */
export function matchingTemplates(query: string | null): FlowTemplate[] {
  const words = query === null ? [] : queryWords(query);
  return loadTemplates()
    .filter((t) => words.every((w) => t.haystack.includes(w)))
    .map((t) => t.template);
}
