/** Markdown tables generated from the catalog, so the docs never disagree with what the server lists. */
import { CAPABILITY_GROUPS } from '../capability-groups.js';
import { CATALOG, TOOLS_BY_TOOLSET } from '../catalog.js';
import { guideProse, type HiddenTools, NOTHING_HIDDEN } from '../guidance.js';
import { AVAILABLE_PROMPTS } from '../prompts.js';
import { DIRECT_RESOURCES, RESOURCE_TEMPLATES } from '../resource-catalog.js';
import { TOOLSET_DESCRIPTIONS, TOOLSETS } from '../schemas.js';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function firstSentence(text: string): string {
  const end = text.indexOf('. ');
  return end === -1 ? text : text.slice(0, end + 1);
}

/** The tools the reader can see, each described without naming the ones it cannot. */
export function toolTable(hidden: HiddenTools = NOTHING_HIDDEN): string {
  const rows = CATALOG.filter((t) => !hidden.names.has(t.name)).map((t) => {
    const changes = t.mutating ? (t.readOnlyExempt ? 'writes feedback only' : 'yes') : 'no';
    const caps = t.capabilities.length ? t.capabilities.join(', ') : 'none';
    return `| \`${t.name}\` | ${t.toolsets.join(', ')} | ${caps} | ${changes} | ${cell(guideProse(firstSentence(t.description), hidden))} |`;
  });
  return ['| tool | toolsets | capabilities | changes state | use |', '|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}

/** Each toolset with the tools in it the reader can see (hidden ones are not named). */
export function toolsetTable(hidden: HiddenTools = NOTHING_HIDDEN): string {
  const rows = TOOLSETS.map((ts) => {
    const all = TOOLS_BY_TOOLSET[ts];
    const tools = all.filter((t) => !hidden.names.has(t));
    const none = all.length ? '(none visible to you)' : '(none served yet)';
    return `| \`${ts}\` | ${cell(TOOLSET_DESCRIPTIONS[ts])} | ${tools.length ? tools.map((t) => `\`${t}\``).join(', ') : none} |`;
  });
  return ['| toolset | for | tools on this server |', '|---|---|---|', ...rows].join('\n');
}

export function capabilityGroupTable(): string {
  const rows = CAPABILITY_GROUPS.map((g) => `| ${g.title} | ${g.capabilities.join(', ')} | ${cell(g.use)} |`);
  return ['| bundle | capabilities | use |', '|---|---|---|', ...rows].join('\n');
}

export function resourceTable(): string {
  const rows = [
    ...DIRECT_RESOURCES.map(
      (r) =>
        `| \`${r.uriPattern}\` | resource | ${r.capabilities.join(', ') || 'none'} | ${cell(r.description)} |`,
    ),
    ...RESOURCE_TEMPLATES.map(
      (t) =>
        `| \`${t.uriTemplate}\` | template | ${t.capabilities.join(', ') || 'none'} | ${cell(t.description)} |`,
    ),
  ];
  return ['| URI | kind | capabilities | content |', '|---|---|---|---|', ...rows].join('\n');
}

export function promptList(): string {
  if (AVAILABLE_PROMPTS.length === 0) {
    return 'No prompts are listed yet: each workflow prompt appears once every tool it relies on is served here.';
  }
  return AVAILABLE_PROMPTS.map(
    (p) => `- \`${p.name}\` (${p.capabilities.join(', ') || 'no capability'}): ${p.description}`,
  ).join('\n');
}

export function toolsIn(
  toolsets: readonly (typeof TOOLSETS)[number][],
  hidden: HiddenTools = NOTHING_HIDDEN,
): string[] {
  return CATALOG.filter(
    (t) => t.toolsets.some((ts) => toolsets.includes(ts)) && !hidden.names.has(t.name),
  ).map((t) => t.name);
}
