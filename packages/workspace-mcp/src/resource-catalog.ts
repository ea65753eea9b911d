/**
 * Which resources and resource templates exist, with their capability gates (spec 6). Readers live in
 * resources.ts; this module has metadata only so the docs and the server card can list it without cycles.
 *
 * Templates are added one entry each when their data is served: flows (`flowgate://flows/{slug}`,
 * `.../definition/{source}`, `.../versions/{version}/definition`, `.../mcp-tools/{tool_name}`, gate
 * flows.read) and runs (`flowgate://runs/{run_id}`, `.../result`, `.../events`, gate runs.read).
 */
import type { Capability } from '@flowgate/auth';
import { type Audience, DOCS_LAST_MODIFIED, DOCS_META, type DocMeta } from './docs/meta.js';

export interface DirectResourceMeta {
  /** May contain `{workspace_id}`, filled in per request. */
  uriPattern: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  capabilities: readonly Capability[];
  audience: readonly Audience[];
  priority: number;
  /** Fixed revision date, or `'live'` for content computed on read. */
  lastModified: string | 'live';
  /** Set for the curated docs. */
  doc?: DocMeta;
}

export interface ResourceTemplateMeta {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  capabilities: readonly Capability[];
  audience: readonly Audience[];
  priority: number;
}

export const WORKSPACE_RESOURCE_PATTERN = 'flowgate://workspaces/{workspace_id}/mcp';

export function workspaceResourceUri(workspaceId: string): string {
  return `flowgate://workspaces/${workspaceId}/mcp`;
}

export const DIRECT_RESOURCES: readonly DirectResourceMeta[] = Object.freeze([
  {
    uriPattern: WORKSPACE_RESOURCE_PATTERN,
    name: 'workspace-mcp-context',
    title: 'Workspace MCP context',
    description:
      'This connection as JSON: workspace, principal, capabilities, toolsets, narrowing, hidden tools with blockers, limits and docs (same as get_workspace_context).',
    mimeType: 'application/json',
    capabilities: [],
    audience: ['assistant'],
    priority: 0.9,
    lastModified: 'live',
  },
  ...DOCS_META.map(
    (doc): DirectResourceMeta => ({
      uriPattern: doc.uri,
      name: doc.name,
      title: doc.title,
      description: doc.description,
      mimeType: 'text/markdown',
      capabilities: [],
      audience: doc.audience,
      priority: doc.priority,
      lastModified: DOCS_LAST_MODIFIED,
      doc,
    }),
  ),
]);

export const RESOURCE_TEMPLATES: readonly ResourceTemplateMeta[] = Object.freeze([
  {
    uriTemplate: 'flowgate://mcp-docs/{doc_id}',
    name: 'mcp-doc',
    title: 'Flowgate MCP doc',
    description: `One curated MCP doc by id: ${DOCS_META.map((d) => d.id).join(', ')}.`,
    mimeType: 'text/markdown',
    capabilities: [],
    audience: ['assistant', 'user'],
    priority: 0.6,
  },
]);

export function hasCapabilities(granted: ReadonlySet<Capability>, required: readonly Capability[]): boolean {
  for (const c of required) if (!granted.has(c)) return false;
  return true;
}

/** Compiles `a/{x}/b` into a matcher returning the decoded variables (a variable never spans a `/`). */
export function compileUriTemplate(template: string): (uri: string) => Record<string, string> | null {
  const names: string[] = [];
  const source = template
    .split(/(\{[a-z_]+\})/)
    .map((part) => {
      const m = /^\{([a-z_]+)\}$/.exec(part);
      if (m) {
        names.push(m[1] as string);
        return '([^/?#]+)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  const re = new RegExp(`^${source}$`);
  return (uri) => {
    const m = re.exec(uri);
    if (!m) return null;
    const out: Record<string, string> = {};
    try {
      names.forEach((n, i) => {
        out[n] = decodeURIComponent(m[i + 1] as string);
      });
    } catch {
      return null;
    }
    return out;
  };
}
