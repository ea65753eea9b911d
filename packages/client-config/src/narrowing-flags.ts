import { parseNarrowingHeaders } from '@flowgate/workspace-mcp';

/**
 * The four narrowing flags shared by `mcp stdio`, `mcp config` and `mcp doctor`. They are validated with the
 * gateway's own header parser, so a name the CLI accepts is exactly a name the server accepts.
 */
export interface NarrowingFlags {
  readOnly: boolean;
  toolsets: string[];
  tools: string[];
  excludeTools: string[];
}

export const NO_FLAGS: NarrowingFlags = Object.freeze({
  readOnly: false,
  toolsets: [],
  tools: [],
  excludeTools: [],
}) as NarrowingFlags;

/** Commander's raw option values for the narrowing flags (repeatable comma lists). */
export interface RawNarrowingOptions {
  readOnly?: boolean;
  toolsets?: string[];
  tools?: string[];
  excludeTools?: string[];
}

export type NarrowingCheck = { ok: true; flags: NarrowingFlags } | { ok: false; message: string };

/** Validates the flags against the catalog; the error names the unknown entries and lists the valid ones. */
export function checkNarrowing(raw: RawNarrowingOptions): NarrowingCheck {
  const flags: NarrowingFlags = {
    readOnly: raw.readOnly === true,
    toolsets: raw.toolsets ?? [],
    tools: raw.tools ?? [],
    excludeTools: raw.excludeTools ?? [],
  };
  const parsed = parseNarrowingHeaders(headerValues(flags));
  if (parsed.ok) return { ok: true, flags };
  const flagOf: Record<string, string> = {
    'X-MCP-Toolsets': '--toolsets',
    'X-MCP-Tools': '--tools',
    'X-MCP-Exclude-Tools': '--exclude-tools',
    'X-MCP-Readonly': '--read-only',
  };
  const message = parsed.error.problems
    .map(
      (p) =>
        `${flagOf[p.source] ?? p.source}: unknown ${p.unknown.map((u) => JSON.stringify(u)).join(', ')}; valid: ${p.valid.join(', ')}`,
    )
    .join('\n');
  return { ok: false, message };
}

function headerValues(flags: NarrowingFlags) {
  return {
    toolsets: flags.toolsets.length ? flags.toolsets.join(',') : null,
    tools: flags.tools.length ? flags.tools.join(',') : null,
    excludeTools: flags.excludeTools.length ? flags.excludeTools.join(',') : null,
    readOnly: flags.readOnly ? 'true' : null,
  };
}

/** The X-MCP-* headers for these flags, in a stable order; only the ones that narrow something. */
export function narrowingHeaders(flags: NarrowingFlags): Record<string, string> {
  const headers: Record<string, string> = {};
  if (flags.readOnly) headers['X-MCP-Readonly'] = 'true';
  if (flags.toolsets.length) headers['X-MCP-Toolsets'] = flags.toolsets.join(',');
  if (flags.tools.length) headers['X-MCP-Tools'] = flags.tools.join(',');
  if (flags.excludeTools.length) headers['X-MCP-Exclude-Tools'] = flags.excludeTools.join(',');
  return headers;
}

/** The same narrowing as `flowgate mcp stdio` arguments. */
export function narrowingArgs(flags: NarrowingFlags): string[] {
  const args: string[] = [];
  if (flags.readOnly) args.push('--read-only');
  if (flags.toolsets.length) args.push('--toolsets', flags.toolsets.join(','));
  if (flags.tools.length) args.push('--tools', flags.tools.join(','));
  if (flags.excludeTools.length) args.push('--exclude-tools', flags.excludeTools.join(','));
  return args;
}

/** One-line human summary, e.g. `read-only; toolsets read,feedback`; `none` when nothing narrows. */
export function describeFlags(flags: NarrowingFlags): string {
  const parts: string[] = [];
  if (flags.readOnly) parts.push('read-only');
  if (flags.toolsets.length) parts.push(`toolsets ${flags.toolsets.join(',')}`);
  if (flags.tools.length) parts.push(`tools ${flags.tools.join(',')}`);
  if (flags.excludeTools.length) parts.push(`excluding ${flags.excludeTools.join(',')}`);
  return parts.length ? parts.join('; ') : 'none (every tool the key allows)';
}
