import { guideMarkdown, NOTHING_HIDDEN } from '../guidance.js';
import { renderClientSetup } from './client-setup.js';
import { renderFlowAuthoring } from './flow-authoring.js';
import { DOCS_META, type DocId } from './meta.js';
import { renderOverview } from './overview.js';
import type { DocRenderOptions } from './render-options.js';
import { renderToolSafety } from './tool-safety.js';

export type { Audience, DocId, DocMeta } from './meta.js';
export { DOC_IDS, DOCS_LAST_MODIFIED, DOCS_META, docUri, isDocId } from './meta.js';
export type { DocRenderOptions } from './render-options.js';

const RENDERERS: Readonly<Record<DocId, (o: DocRenderOptions) => string>> = {
  overview: renderOverview,
  'client-setup': renderClientSetup,
  'flow-authoring': renderFlowAuthoring,
  'tool-safety': renderToolSafety,
};

// Docs depend only on (doc, base URL, workspace, hidden tools); rendering is cheap but reads repeat, so keep a few.
const cache = new Map<string, string>();
const CACHE_MAX = 64;

/** The markdown of one curated doc for a reader (snippets carry the reader's URL and workspace). */
export function renderDoc(id: DocId, options: DocRenderOptions): string {
  const hidden = options.hidden ?? NOTHING_HIDDEN;
  const key = `${id}\u0000${options.publicBaseUrl}\u0000${options.workspaceId ?? ''}\u0000${hidden.key}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const text = guideMarkdown(RENDERERS[id]({ ...options, hidden }), hidden);
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(key, text);
  return text;
}

/** All docs rendered, e.g. to commit them as files or to check them in tests. */
export function renderAllDocs(options: DocRenderOptions): Record<DocId, string> {
  return Object.fromEntries(DOCS_META.map((d) => [d.id, renderDoc(d.id, options)])) as Record<DocId, string>;
}
