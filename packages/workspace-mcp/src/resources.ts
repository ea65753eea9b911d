/**
 * resources/list, resources/templates/list and resources/read. A resource the caller may not see is
 * indistinguishable from one that does not exist: both read as not found (-32602 with `data.uri`, the code
 * SEP-2164 and 2026-07-28 use; clients also accept the older -32002).
 */
import { FLOW_SLUG_PATTERN, isAppError, TOOL_NAME_PATTERN } from '@flowgate/core';
import { FLOW_SOURCES, type FlowSelector, type FlowSource } from '@flowgate/workspace';
import { hiddenCatalogTools, iconsForTools, toolsAllowedByPolicy } from './catalog.js';
import type { ToolContext } from './context.js';
import { type DocRenderOptions, renderDoc } from './docs/index.js';
import { isDocId } from './docs/meta.js';
import { requireDefinition, requireFlow, resolveFlowTool } from './flow-lookup.js';
import { definitionOutput, flowEntry, flowToolDescriptor } from './flow-outputs.js';
import { guideProse, type HiddenTools, NOTHING_HIDDEN } from './guidance.js';
import { type Icon, iconsDefinedAt } from './icons.js';
import { LIMITS } from './limits.js';
import { metadataSafety } from './metadata-safety.js';
import type { PolicyContext } from './policy.js';
import type { ProtocolVersion } from './protocol.js';
import {
  compileUriTemplate,
  DIRECT_RESOURCES,
  type DirectResourceMeta,
  hasCapabilities,
  RESOURCE_TEMPLATES,
  type ResourceTemplateMeta,
  WORKSPACE_RESOURCE_PATTERN,
  workspaceResourceUri,
} from './resource-catalog.js';
import { eventView, resultText, runEventsUri, runView } from './run-outputs.js';
import { flowDefinitionUri, flowVersionUri } from './uris.js';
import { buildWorkspaceContext } from './workspace-context.js';

export interface ResourceAnnotations {
  audience: ('user' | 'assistant')[];
  priority: number;
  lastModified?: string;
}

export interface ResourceDescriptor {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  annotations: ResourceAnnotations;
  /** 2025-11-25 and later: the icon of the tool whose content it is (catalog.ts). */
  icons?: Icon[];
}

export interface ResourceTemplateDescriptor {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  annotations: ResourceAnnotations;
  /** 2025-11-25 and later: the icon of the tool whose content it is (catalog.ts). */
  icons?: Icon[];
}

export interface ResourceContents {
  uri: string;
  mimeType: string;
  text: string;
}

function annotations(
  meta: { audience: readonly ('user' | 'assistant')[]; priority: number },
  lastModified: string | null,
  version: ProtocolVersion,
): ResourceAnnotations {
  const out: ResourceAnnotations = { audience: [...meta.audience], priority: meta.priority };
  // lastModified arrived with 2025-06-18.
  if (lastModified !== null && version !== '2025-03-26') out.lastModified = lastModified;
  return out;
}

function resolveUri(meta: DirectResourceMeta, workspaceId: string): string {
  return meta.uriPattern === WORKSPACE_RESOURCE_PATTERN ? workspaceResourceUri(workspaceId) : meta.uriPattern;
}

export function describeResource(
  meta: DirectResourceMeta,
  uri: string,
  version: ProtocolVersion,
  now: () => string,
  hidden: HiddenTools = NOTHING_HIDDEN,
): ResourceDescriptor {
  const lastModified = meta.lastModified === 'live' ? now() : meta.lastModified;
  return {
    uri,
    name: meta.name,
    title: meta.title,
    description: guideProse(meta.description, hidden),
    mimeType: meta.mimeType,
    annotations: annotations(meta, lastModified, version),
  };
}

export function describeTemplate(
  meta: ResourceTemplateMeta,
  version: ProtocolVersion,
  hidden: HiddenTools = NOTHING_HIDDEN,
): ResourceTemplateDescriptor {
  return {
    uriTemplate: meta.uriTemplate,
    name: meta.name,
    title: meta.title,
    description: guideProse(meta.description, hidden),
    mimeType: meta.mimeType,
    annotations: annotations(meta, null, version),
  };
}

/** Capabilities, then the policy and narrowing of the tools whose content the resource exposes. */
function allowed(meta: DirectResourceMeta | ResourceTemplateMeta, request: PolicyContext): boolean {
  return (
    hasCapabilities(request.capabilities, meta.capabilities) &&
    toolsAllowedByPolicy(meta.exposesTools, request)
  );
}

/** A doc as this reader gets it: its URL and workspace in the snippets, and only the tools it can see. */
function docOptions(ctx: ToolContext): DocRenderOptions {
  return {
    publicBaseUrl: ctx.publicBaseUrl,
    workspaceId: ctx.request.workspaceId,
    hidden: hiddenCatalogTools(ctx.request),
  };
}

/** Listing order is catalog order (resource-catalog.ts), filtered: the same for every request with the same key. */
export function listResources(ctx: ToolContext): ResourceDescriptor[] {
  const now = new Date().toISOString();
  const hidden = hiddenCatalogTools(ctx.request);
  const icons = iconsDefinedAt(ctx.protocolVersion);
  return DIRECT_RESOURCES.filter((r) => allowed(r, ctx.request)).map((r) => {
    const d = describeResource(
      r,
      resolveUri(r, ctx.request.workspaceId),
      ctx.protocolVersion,
      () => now,
      hidden,
    );
    return icons ? { ...d, icons: iconsForTools(r.exposesTools) } : d;
  });
}

export function listResourceTemplates(ctx: ToolContext): ResourceTemplateDescriptor[] {
  const hidden = hiddenCatalogTools(ctx.request);
  const icons = iconsDefinedAt(ctx.protocolVersion);
  return RESOURCE_TEMPLATES.filter((t) => allowed(t, ctx.request)).map((t) => {
    const d = describeTemplate(t, ctx.protocolVersion, hidden);
    return icons ? { ...d, icons: iconsForTools(t.exposesTools) } : d;
  });
}

type TemplateReader = (
  vars: Record<string, string>,
  uri: string,
  ctx: ToolContext,
) => Promise<ResourceContents | null>;

/** Compact JSON: the reader is a model, and indentation only costs it tokens. */
function json(uri: string, value: unknown): ResourceContents {
  return { uri, mimeType: 'application/json', text: JSON.stringify(value) };
}

const INSTALLATION_ID = /^[A-Za-z0-9_-]{1,128}$/;
const VERSION = /^[1-9][0-9]{0,6}$/;

/** Variables of a flow URI, or null when they cannot name anything (read as not found). */
function flowVars(vars: Record<string, string>): { slug: string; installationId: string | null } | null {
  const slug = vars.slug ?? '';
  const installationId = vars.installation_id ?? null;
  if (!FLOW_SLUG_PATTERN.test(slug)) return null;
  if (installationId !== null && !INSTALLATION_ID.test(installationId)) return null;
  return { slug, installationId };
}

/** A flow resource that does not exist, or that the caller may not see, reads as not found. */
async function orNotFound(read: () => Promise<ResourceContents>): Promise<ResourceContents | null> {
  try {
    return await read();
  } catch (error) {
    if (isAppError(error) && (error.code === 'not_found' || error.code === 'invalid_request')) return null;
    throw error;
  }
}

async function readDefinition(
  uri: string,
  ctx: ToolContext,
  ref: { slug: string; installationId: string | null },
  selector: FlowSelector,
): Promise<ResourceContents | null> {
  return orNotFound(async () => {
    const flow = await requireFlow(ctx, ref.slug, ref.installationId);
    return json(uri, definitionOutput(await requireDefinition(flow, selector), selector));
  });
}

/** One reader per template in RESOURCE_TEMPLATES (checked at load). */
const TEMPLATE_READERS: Readonly<Record<string, TemplateReader>> = {
  'flowgate://flows/{slug}': async (vars, uri, ctx) => {
    const ref = flowVars(vars);
    if (!ref) return null;
    return orNotFound(async () => {
      const flow = (await requireFlow(ctx, ref.slug, ref.installationId)).record;
      const entry = flowEntry(flow);
      const id = entry.installationId;
      const definitions: string[] = [];
      if (flow.installation) {
        if (flow.installation.activeVersion !== null) {
          definitions.push(flowDefinitionUri(flow.slug, 'active', id));
          definitions.push(flowVersionUri(flow.slug, flow.installation.activeVersion, id));
        }
      } else {
        if (flow.hasDraft) definitions.push(flowDefinitionUri(flow.slug, 'draft'));
        if (flow.latestVersion !== null) definitions.push(flowDefinitionUri(flow.slug, 'latest'));
        if (flow.liveVersion !== null) {
          definitions.push(flowDefinitionUri(flow.slug, 'live'));
          definitions.push(flowDefinitionUri(flow.slug, 'active'));
        }
      }
      // One flow per read: its metadata-safety note in full, where a search gives each note once per answer.
      return json(uri, { ...entry, metadataSafety: metadataSafety(flow.trust), definitionUris: definitions });
    });
  },
  'flowgate://flows/{slug}/definition/{source}': async (vars, uri, ctx) => {
    const ref = flowVars(vars);
    const source = vars.source ?? '';
    if (!ref || !(FLOW_SOURCES as readonly string[]).includes(source)) return null;
    return readDefinition(uri, ctx, ref, { source: source as FlowSource });
  },
  'flowgate://flows/{slug}/versions/{version}/definition': async (vars, uri, ctx) => {
    const ref = flowVars(vars);
    const version = vars.version ?? '';
    if (!ref || !VERSION.test(version)) return null;
    return readDefinition(uri, ctx, ref, { version: Number(version) });
  },
  'flowgate://flows/{slug}/mcp-tools/{tool_name}': async (vars, uri, ctx) => {
    const ref = flowVars(vars);
    const toolName = vars.tool_name ?? '';
    if (!ref || !TOOL_NAME_PATTERN.test(toolName)) return null;
    return orNotFound(async () => {
      const resolved = await resolveFlowTool(ctx, { ...ref, toolName, target: null });
      return json(uri, flowToolDescriptor(resolved, await resolved.open.readiness(resolved.target)));
    });
  },
  'flowgate://runs/{run_id}': async (vars, uri, ctx) => {
    const run = await ctx.workspace.runs.get(vars.run_id ?? '');
    return run ? json(uri, { ...runView(run), eventsUri: runEventsUri(run.id) }) : null;
  },
  'flowgate://runs/{run_id}/result': async (vars, uri, ctx) => {
    const result = await ctx.workspace.runs.result(vars.run_id ?? '');
    if (!result) return null;
    return { uri, mimeType: result.mimeType, text: resultText(result.mimeType, result.value) };
  },
  'flowgate://runs/{run_id}/events': async (vars, uri, ctx) => {
    const after = vars.after ?? null;
    if (after !== null && !/^[0-9]{1,18}$/.test(after)) return null;
    const runId = vars.run_id ?? '';
    const page = await ctx.workspace.runs.events(runId, {
      limit: LIMITS.runEventsPageSize + 1,
      afterId: after === null ? null : Number(after),
      stepId: null,
    });
    if (!page) return null;
    const items = page.slice(0, LIMITS.runEventsPageSize).map(eventView);
    const last = items.at(-1);
    return json(uri, {
      runId,
      events: items,
      next: page.length > LIMITS.runEventsPageSize && last ? `${runEventsUri(runId)}?after=${last.id}` : null,
    });
  },
  'flowgate://mcp-docs/{doc_id}': async (vars, uri, ctx) => {
    const id = vars.doc_id ?? '';
    if (!isDocId(id)) return null;
    return {
      uri,
      mimeType: 'text/markdown',
      text: renderDoc(id, docOptions(ctx)),
    };
  },
};

const TEMPLATES = RESOURCE_TEMPLATES.map((meta) => {
  const read = TEMPLATE_READERS[meta.uriTemplate];
  if (!read) throw new Error(`no reader for resource template ${meta.uriTemplate}`);
  return { meta, match: compileUriTemplate(meta.uriTemplate, meta.queryParams ?? []), read };
});

/** Whether `uri` is a templated resource this caller may read (it may still not exist): what a listen may honour. */
export function templateResourceAllowed(uri: string, request: PolicyContext): boolean {
  const template = TEMPLATES.find((t) => t.match(uri) !== null);
  return template !== undefined && allowed(template.meta, request);
}

/** Contents of a resource, or `null` when it does not exist or the caller may not see it. */
export async function readResource(uri: string, ctx: ToolContext): Promise<ResourceContents | null> {
  for (const r of DIRECT_RESOURCES) {
    if (resolveUri(r, ctx.request.workspaceId) !== uri) continue;
    if (!allowed(r, ctx.request)) return null;
    if (r.doc) {
      return {
        uri,
        mimeType: r.mimeType,
        text: renderDoc(r.doc.id, docOptions(ctx)),
      };
    }
    const report = await buildWorkspaceContext(ctx);
    return { uri, mimeType: r.mimeType, text: JSON.stringify(report) };
  }
  for (const t of TEMPLATES) {
    const vars = t.match(uri);
    if (!vars) continue;
    if (!allowed(t.meta, ctx.request)) return null;
    return t.read(vars, uri, ctx);
  }
  return null;
}
