/**
 * Which resources and resource templates exist, with their capability gates (docs/mcp-surface.md, "Tools, resources and
 * prompts"). Readers live in resources.ts; this module has metadata only so the docs and the server card can list it
 * without cycles.
 *
 * Templates are added one entry each when their data is served; the run templates (`flowgate://runs/{run_id}`,
 * `.../result`, `.../events`, gate runs.read) join with the run engine.
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
  /**
   * Tools whose content this also exposes: hidden and refused whenever the workspace policy (disabledTools,
   * read-only) or narrowing hides any of them, so a resource never leaks what a disabled tool would return.
   */
  exposesTools: readonly string[];
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
  /**
   * Tools whose content this also exposes: hidden and refused whenever the workspace policy (disabledTools,
   * read-only) or narrowing hides any of them, so a resource never leaks what a disabled tool would return.
   */
  exposesTools: readonly string[];
  /**
   * Query parameters a read may add to a URI of this template (not part of the listed template, which stays as
   * published; e.g. `?installation_id=` to address an installed flow whose slug an own flow also uses).
   */
  queryParams?: readonly string[];
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
    exposesTools: ['get_workspace_context'],
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
      exposesTools: [],
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
    exposesTools: [],
  },
  {
    uriTemplate: 'flowgate://flows/{slug}',
    name: 'flow',
    title: 'Flow',
    description:
      'Metadata of a workspace flow or an installed public flow (append ?installation_id=… to pick an installation): versions, MCP tools with their URIs, installation state and metadataSafety; flow-authored text only when trusted.',
    mimeType: 'application/json',
    capabilities: ['flows.read'],
    audience: ['assistant'],
    priority: 0.6,
    exposesTools: ['search_flows'],
    queryParams: ['installation_id'],
  },
  {
    uriTemplate: 'flowgate://flows/{slug}/definition/{source}',
    name: 'flow-definition',
    title: 'Flow definition by source',
    description:
      'Full EDN source as top-level flowLiteral for source draft, latest, live or active (same as get_flow_definition); marked contentTrust "flow_authored_untrusted".',
    mimeType: 'application/json',
    capabilities: ['flows.read'],
    audience: ['assistant'],
    priority: 0.5,
    exposesTools: ['get_flow_definition'],
    queryParams: ['installation_id'],
  },
  {
    uriTemplate: 'flowgate://flows/{slug}/versions/{version}/definition',
    name: 'flow-version-definition',
    title: 'Flow definition of a released version',
    description:
      'Full EDN source of one immutable released version as top-level flowLiteral; marked contentTrust "flow_authored_untrusted".',
    mimeType: 'application/json',
    capabilities: ['flows.read'],
    audience: ['assistant'],
    priority: 0.5,
    exposesTools: ['get_flow_definition'],
    queryParams: ['installation_id'],
  },
  {
    uriTemplate: 'flowgate://flows/{slug}/mcp-tools/{tool_name}',
    name: 'flow-mcp-tool',
    title: 'Flow MCP tool',
    description:
      'One flow MCP interface descriptor (same as inspect_flow_tool): input JSON Schema, target, readiness and metadataSafety.',
    mimeType: 'application/json',
    capabilities: ['flows.read'],
    audience: ['assistant'],
    priority: 0.7,
    exposesTools: ['inspect_flow_tool'],
    queryParams: ['installation_id'],
  },
  {
    uriTemplate: 'flowgate://runs/{run_id}',
    name: 'run',
    title: 'Run',
    description: 'A run: status, timing, error, attempts and the URIs of its result and events.',
    mimeType: 'application/json',
    capabilities: ['runs.read'],
    audience: ['assistant'],
    priority: 0.8,
    exposesTools: ['get_run_status'],
  },
  {
    uriTemplate: 'flowgate://runs/{run_id}/result',
    name: 'run-result',
    title: 'Run result',
    description:
      'The whole result of a completed run, in its own MIME type (text/html, text/markdown, text/csv …; JSON otherwise), redacted.',
    mimeType: 'application/json',
    capabilities: ['runs.read'],
    audience: ['assistant', 'user'],
    priority: 0.8,
    exposesTools: ['get_run_status'],
  },
  {
    uriTemplate: 'flowgate://runs/{run_id}/events',
    name: 'run-events',
    title: 'Run events',
    description:
      'The events of a run, oldest first, one page at a time (append ?after=<last event id> for the next).',
    mimeType: 'application/json',
    capabilities: ['runs.read'],
    audience: ['assistant'],
    priority: 0.5,
    exposesTools: ['get_run_status'],
    queryParams: ['after'],
  },
]);

export function hasCapabilities(granted: ReadonlySet<Capability>, required: readonly Capability[]): boolean {
  for (const c of required) if (!granted.has(c)) return false;
  return true;
}

/**
 * Compiles `a/{x}/b` into a matcher returning the decoded variables (a variable never spans a `/`). A query
 * string is accepted only when `queryParams` names each of its keys (once each); their values join the variables.
 */
export function compileUriTemplate(
  template: string,
  queryParams: readonly string[] = [],
): (uri: string) => Record<string, string> | null {
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
    const q = uri.indexOf('?');
    const path = q === -1 ? uri : uri.slice(0, q);
    const m = re.exec(path);
    if (!m) return null;
    const out: Record<string, string> = {};
    try {
      names.forEach((n, i) => {
        out[n] = decodeURIComponent(m[i + 1] as string);
      });
    } catch {
      return null;
    }
    if (q !== -1) {
      const query = uri.slice(q + 1);
      if (query.includes('#')) return null;
      const params = new URLSearchParams(query);
      for (const key of new Set(params.keys())) {
        const values = params.getAll(key);
        if (!queryParams.includes(key) || names.includes(key) || values.length !== 1) return null;
        out[key] = values[0] as string;
      }
    }
    return out;
  };
}
