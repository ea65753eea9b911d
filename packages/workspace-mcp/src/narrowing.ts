/**
 * Narrowing: what the client asked to see, from the X-MCP-* headers (used for both tools/list and tools/call)
 * or from tools/list params (discovery experiments; they only narrow the header-derived list further).
 * Narrowing never grants anything; policy.ts intersects it with capabilities and workspace policy.
 */
import { TOOL_NAMES } from './catalog.js';
import { TOOLSETS, type Toolset } from './schemas.js';

export interface Narrowing {
  /** Toolsets to keep; `null` = no toolset filter. `all` is expanded to every toolset. */
  readonly toolsets: readonly Toolset[] | null;
  /** Tool allowlist; alone it keeps only these, with `toolsets` it adds them. `null` = none given. */
  readonly tools: readonly string[] | null;
  /** Hidden whatever else applies. */
  readonly excludeTools: readonly string[];
  /** Hide mutating tools (send_feedback stays). */
  readonly readOnly: boolean;
}

export const NO_NARROWING: Narrowing = Object.freeze({
  toolsets: null,
  tools: null,
  excludeTools: [],
  readOnly: false,
});

export type NarrowingSource =
  | 'X-MCP-Toolsets'
  | 'X-MCP-Tools'
  | 'X-MCP-Exclude-Tools'
  | 'X-MCP-Readonly'
  | 'toolsets'
  | 'tools'
  | 'excludeTools'
  | 'readOnly';

export interface NarrowingProblem {
  source: NarrowingSource;
  unknown: string[];
  valid: string[];
  /** Set when the value was refused as a whole (too many or too long entries) rather than for unknown names. */
  detail?: string;
}

/** The gateway answers this with HTTP 400 `{code, message, unknown, valid}`. */
export interface NarrowingError {
  code: 'invalid_narrowing';
  message: string;
  unknown: string[];
  valid: string[];
  problems: NarrowingProblem[];
}

export type NarrowingResult = { ok: true; narrowing: Narrowing } | { ok: false; error: NarrowingError };

const NOT_NARROWED: NarrowingResult = Object.freeze({ ok: true, narrowing: NO_NARROWING });

export interface NarrowingHeaders {
  toolsets?: string | null | undefined;
  tools?: string | null | undefined;
  excludeTools?: string | null | undefined;
  readOnly?: string | null | undefined;
}

export const TRUE_VALUES: readonly string[] = ['true', '1', 'yes', 'on'];
export const FALSE_VALUES: readonly string[] = ['false', '0', 'no', 'off', ''];
const TOOLSET_CHOICES: readonly string[] = ['all', ...TOOLSETS];
// A hostile header must not be reflected back in full.
const MAX_ECHOED = 20;
const MAX_ECHOED_CHARS = 64;
/**
 * A list names at most this many entries (there are far fewer toolsets and tools), each at most this long:
 * a megabyte of commas must cost a few entries of work, not a split into thousands of strings.
 */
export const MAX_NARROWING_ENTRIES = 64;
export const MAX_NARROWING_ENTRY_CHARS = 128;

type ListKind = 'toolsets' | 'tools';

function echo(values: string[]): string[] {
  return values
    .slice(0, MAX_ECHOED)
    .map((v) => (v.length > MAX_ECHOED_CHARS ? `${v.slice(0, MAX_ECHOED_CHARS)}…` : v));
}

/** Header lookup that works with `Headers`, a Hono request, or a plain lower-case record. */
export type HeaderGetter = (name: string) => string | null | undefined;

export function narrowingHeadersFrom(get: HeaderGetter): NarrowingHeaders {
  return {
    toolsets: get('x-mcp-toolsets'),
    tools: get('x-mcp-tools'),
    excludeTools: get('x-mcp-exclude-tools'),
    readOnly: get('x-mcp-readonly'),
  };
}

class Collector {
  readonly problems: NarrowingProblem[] = [];

  /** The tool names this endpoint serves (the catalog, or a flow endpoint's own). */
  constructor(private readonly toolNames: readonly string[] = TOOL_NAMES) {}

  /**
   * Comma list → trimmed, non-empty, de-duplicated entries in first-seen order. Walks the value once and stops
   * at the first entry over a cap (reported as a problem; `null` then).
   */
  validNames(kind: ListKind): string[] {
    return kind === 'toolsets' ? [...TOOLSET_CHOICES] : [...this.toolNames];
  }

  split(value: string, source: NarrowingSource, kind: ListKind): string[] | null {
    const seen = new Set<string>();
    let entries = 0;
    let start = 0;
    while (start <= value.length) {
      const comma = value.indexOf(',', start);
      const end = comma === -1 ? value.length : comma;
      const entry = value.slice(start, end).trim();
      start = end + 1;
      if (!entry) continue;
      if (entry.length > MAX_NARROWING_ENTRY_CHARS) {
        this.problems.push({
          source,
          unknown: echo([entry]),
          valid: this.validNames(kind),
          detail: `an entry is longer than ${MAX_NARROWING_ENTRY_CHARS} characters`,
        });
        return null;
      }
      if (++entries > MAX_NARROWING_ENTRIES) return this.tooMany(source, kind);
      seen.add(entry);
    }
    return [...seen];
  }

  tooMany(source: NarrowingSource, kind: ListKind): null {
    this.problems.push({
      source,
      unknown: [`(more than ${MAX_NARROWING_ENTRIES} entries)`],
      valid: this.validNames(kind),
      detail: `at most ${MAX_NARROWING_ENTRIES} entries`,
    });
    return null;
  }

  toolsets(values: string[] | null, source: NarrowingSource): Toolset[] | null {
    if (!values || values.length === 0) return null;
    const lowered = values.map((v) => v.toLowerCase());
    const unknown = values.filter((_, i) => !TOOLSET_CHOICES.includes(lowered[i] as string));
    if (unknown.length) {
      this.problems.push({ source, unknown: echo(unknown), valid: [...TOOLSET_CHOICES] });
      return null;
    }
    if (lowered.includes('all')) return [...TOOLSETS];
    // Canonical order keeps equal narrowings equal (cache keys, reports).
    return TOOLSETS.filter((t) => lowered.includes(t));
  }

  tools(values: string[] | null, source: NarrowingSource): string[] | null {
    if (!values || values.length === 0) return null;
    const unknown = values.filter((v) => !this.toolNames.includes(v));
    if (unknown.length) {
      this.problems.push({ source, unknown: echo(unknown), valid: [...this.toolNames] });
      return null;
    }
    return this.toolNames.filter((t) => values.includes(t));
  }

  bool(value: string | boolean | null | undefined, source: NarrowingSource): boolean {
    if (value === null || value === undefined) return false;
    if (typeof value === 'boolean') return value;
    const v = value.trim().toLowerCase();
    if (TRUE_VALUES.includes(v)) return true;
    if (FALSE_VALUES.includes(v)) return false;
    this.problems.push({
      source,
      unknown: echo([value]),
      valid: [...TRUE_VALUES, ...FALSE_VALUES.filter(Boolean)],
    });
    return false;
  }

  result(narrowing: Narrowing): NarrowingResult {
    if (this.problems.length === 0) return { ok: true, narrowing };
    const unknown = [...new Set(this.problems.flatMap((p) => p.unknown))];
    const valid = [...new Set(this.problems.flatMap((p) => p.valid))];
    const message = this.problems
      .map((p) =>
        p.detail
          ? `${p.source}: ${p.detail}; valid: ${p.valid.join(', ')}`
          : `${p.source}: unknown ${p.unknown.map((u) => JSON.stringify(u)).join(', ')}; valid: ${p.valid.join(', ')}`,
      )
      .join('. ');
    return {
      ok: false,
      error: {
        code: 'invalid_narrowing',
        message: `Invalid narrowing. ${message}`,
        unknown,
        valid,
        problems: this.problems,
      },
    };
  }
}

/**
 * Parses the four X-MCP-* headers. Values are split on commas, trimmed, empties dropped; an empty header is
 * the same as no header. Unknown toolsets or tools (including spec tools this server does not serve yet) and
 * non-boolean read-only values are an error naming the unknown entries and the valid ones.
 */
export function parseNarrowingHeaders(
  headers: NarrowingHeaders,
  toolNames: readonly string[] = TOOL_NAMES,
): NarrowingResult {
  // Most requests send none of the four: the same answer every time, and the one NO_NARROWING object (policy.ts
  // keeps the visible set per such object).
  if (!headers.toolsets && !headers.tools && !headers.excludeTools && headers.readOnly === undefined)
    return NOT_NARROWED;
  const c = new Collector(toolNames);
  const toolsets = c.toolsets(
    headers.toolsets ? c.split(headers.toolsets, 'X-MCP-Toolsets', 'toolsets') : null,
    'X-MCP-Toolsets',
  );
  const tools = c.tools(headers.tools ? c.split(headers.tools, 'X-MCP-Tools', 'tools') : null, 'X-MCP-Tools');
  const excludeTools =
    c.tools(
      headers.excludeTools ? c.split(headers.excludeTools, 'X-MCP-Exclude-Tools', 'tools') : null,
      'X-MCP-Exclude-Tools',
    ) ?? [];
  const readOnly = c.bool(headers.readOnly, 'X-MCP-Readonly');
  return c.result(Object.freeze({ toolsets, tools, excludeTools, readOnly }));
}

function listParam(value: unknown, source: NarrowingSource, kind: ListKind, c: Collector): string[] | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return c.split(value, source, kind);
  if (Array.isArray(value)) {
    // Checked before joining, so a 20k-entry array is refused without building a 20k-entry string.
    if (value.length > MAX_NARROWING_ENTRIES) return c.tooMany(source, kind);
    if (value.every((v) => typeof v === 'string')) return c.split(value.join(','), source, kind);
  }
  c.problems.push({ source, unknown: ['(not a list of strings)'], valid: [] });
  return null;
}

/**
 * tools/list params `toolsets`, `tools`, `excludeTools`, `readOnly` (arrays of strings or comma strings; a
 * boolean or boolean string). Returns `null` when none is given, so the cached list can be used.
 */
export function parseNarrowingParams(
  params: Record<string, unknown>,
  toolNames: readonly string[] = TOOL_NAMES,
): NarrowingResult | null {
  const { toolsets, tools, excludeTools, readOnly } = params;
  if (toolsets === undefined && tools === undefined && excludeTools === undefined && readOnly === undefined)
    return null;
  const c = new Collector(toolNames);
  const ts = c.toolsets(listParam(toolsets, 'toolsets', 'toolsets', c), 'toolsets');
  const tl = c.tools(listParam(tools, 'tools', 'tools', c), 'tools');
  const ex = c.tools(listParam(excludeTools, 'excludeTools', 'tools', c), 'excludeTools') ?? [];
  let ro = false;
  if (typeof readOnly === 'boolean' || typeof readOnly === 'string') ro = c.bool(readOnly, 'readOnly');
  else if (readOnly !== undefined && readOnly !== null)
    c.problems.push({ source: 'readOnly', unknown: ['(not a boolean)'], valid: ['true', 'false'] });
  return c.result(Object.freeze({ toolsets: ts, tools: tl, excludeTools: ex, readOnly: ro }));
}

/** Plain JSON view for reports (get_workspace_context, the workspace resource). */
