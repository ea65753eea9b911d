/**
 * Guidance (initialize instructions, tool, resource and prompt descriptions, prompt texts, the MCP docs) rendered for
 * one visible tool set: a caller is never sent to a tool it cannot see. Texts are written for the full catalog;
 * rendering drops the smallest piece that names a hidden tool — a parenthetical, a `;` clause, a sentence; in markdown
 * also a table row or a code block. Callers cache the rendered text per visible set (surface.ts, docs/index.ts).
 */

export interface HiddenTools {
  readonly names: ReadonlySet<string>;
  /** Stable key of the set (sorted names), for caches. */
  readonly key: string;
  readonly pattern: RegExp | null;
}

const NAME_CHAR = 'A-Za-z0-9_';

function escapeRegExp(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

// A handful of distinct sets are in use at a time (one per narrowing a client is configured with).
const memo = new Map<string, HiddenTools>();
const MEMO_MAX = 256;

export function hiddenTools(names: Iterable<string>): HiddenTools {
  const sorted = [...new Set(names)].sort();
  const key = sorted.join(',');
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const made: HiddenTools = Object.freeze({
    names: new Set(sorted),
    key,
    pattern: sorted.length
      ? new RegExp(`(?<![${NAME_CHAR}])(?:${sorted.map(escapeRegExp).join('|')})(?![${NAME_CHAR}])`)
      : null,
  });
  if (memo.size >= MEMO_MAX) memo.delete(memo.keys().next().value as string);
  memo.set(key, made);
  return made;
}

export const NOTHING_HIDDEN: HiddenTools = hiddenTools([]);

/** The names of `known` that are not in `visible`. */
export function hiddenAmong(known: Iterable<string>, visible: Iterable<string>): HiddenTools {
  const seen = new Set(visible);
  return hiddenTools([...known].filter((n) => !seen.has(n)));
}

export function mentionsHidden(text: string, hidden: HiddenTools): boolean {
  return hidden.pattern?.test(text) ?? false;
}

function tidy(text: string): string {
  return text
    .replace(/ {2,}/g, ' ')
    .replace(/ ([,.;:])/g, '$1')
    .trim();
}

/** One sentence without its clauses (`; …`) that name a hidden tool; '' when none is left. */
function guideSentence(sentence: string, hidden: HiddenTools): string {
  if (!mentionsHidden(sentence, hidden)) return sentence;
  const end = /[.!?:]$/.exec(sentence)?.[0] ?? '';
  const body = end ? sentence.slice(0, -1) : sentence;
  const clauses = body.split(/;\s+/);
  // Later clauses lean on the first one ("…; the same JSON is …"): without it the sentence goes.
  if (mentionsHidden(clauses[0] ?? '', hidden)) return '';
  const kept = clauses.filter((c) => !mentionsHidden(c, hidden));
  const joined = kept.join('; ');
  return `${joined.charAt(0).toUpperCase()}${joined.slice(1)}${end}`;
}

/** Plain text (a description, instructions): parentheticals, clauses and sentences naming hidden tools are dropped. */
export function guideProse(text: string, hidden: HiddenTools): string {
  if (!mentionsHidden(text, hidden)) return text;
  const withoutAsides = text.replace(/\s*\([^()]*\)/g, (aside) =>
    mentionsHidden(aside, hidden) ? '' : aside,
  );
  if (!mentionsHidden(withoutAsides, hidden)) return tidy(withoutAsides);
  const sentences = withoutAsides.split(/(?<=[.!?])\s+/);
  return tidy(
    sentences
      .map((s) => guideSentence(s, hidden))
      .filter(Boolean)
      .join(' '),
  );
}

const ITEM = /^(\s*)([-*]|\d+\.)\s+/;

/**
 * Markdown: a code block or table row naming a hidden tool is dropped; a list item or paragraph loses the sentences
 * that do (and goes when nothing is left). Ordered lists are renumbered so no gap shows where an item went.
 */
export function guideMarkdown(text: string, hidden: HiddenTools): string {
  if (!mentionsHidden(text, hidden)) return text;
  const lines = text.split('\n');
  const out: string[] = [];
  let i = 0;
  // The number the next ordered item gets: a list that starts at 1 starts afresh, a later one ("5.", after a
  // heading) continues the steps before it.
  let numbering: { indent: string; next: number } | null = null;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.trimStart().startsWith('```')) {
      let j = i + 1;
      while (j < lines.length && !(lines[j] as string).trimStart().startsWith('```')) j++;
      const block = lines.slice(i, j + 1);
      if (!mentionsHidden(block.join('\n'), hidden)) out.push(...block);
      i = j + 1;
      continue;
    }
    if (line.trim() === '' || line.startsWith('#') || line.startsWith('|')) {
      if (!(line.startsWith('|') && mentionsHidden(line, hidden))) out.push(line);
      i++;
      continue;
    }
    const item = ITEM.exec(line);
    let j = i + 1;
    // A block runs to the next blank line, heading, table row, fence or list item.
    while (j < lines.length) {
      const next = lines[j] as string;
      if (
        next.trim() === '' ||
        next.startsWith('#') ||
        next.startsWith('|') ||
        next.trimStart().startsWith('```')
      )
        break;
      if (ITEM.test(next)) break;
      j++;
    }
    const block = lines.slice(i, j);
    i = j;
    if (item) {
      const indent = item[1] ?? '';
      const marker = item[2] ?? '-';
      const ordered = /^\d+\.$/.test(marker);
      let kept = block;
      if (mentionsHidden(block.join('\n'), hidden)) {
        const body = guideProse(block.join(' ').slice(item[0].length).replace(/\s+/g, ' '), hidden);
        kept = body ? [`${item[0]}${body}`] : [];
      }
      if (kept.length === 0) continue;
      if (ordered) {
        const own = Number.parseInt(marker, 10);
        const number: number = own !== 1 && numbering?.indent === indent ? numbering.next : own;
        kept = [kept[0]?.replace(ITEM, `${indent}${number}. `) ?? '', ...kept.slice(1)];
        numbering = { indent, next: number + 1 };
      }
      out.push(...kept);
      continue;
    }
    if (!mentionsHidden(block.join('\n'), hidden)) {
      out.push(...block);
      continue;
    }
    const body = guideProse(block.join(' ').replace(/\s+/g, ' '), hidden);
    if (body) out.push(body);
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}

/** A copy of `value` whose every `description` string is rendered with guideProse (tool descriptors, schemas). */
export function guideDescriptions<T>(value: T, hidden: HiddenTools): T {
  if (hidden.pattern === null) return value;
  return walk(value, hidden) as T;
}

function walk(value: unknown, hidden: HiddenTools): unknown {
  if (Array.isArray(value)) return value.map((v) => walk(v, hidden));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === 'description' && typeof v === 'string' ? guideProse(v, hidden) : walk(v, hidden);
  }
  return out;
}
