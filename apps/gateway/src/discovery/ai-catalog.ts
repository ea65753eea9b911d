import { FLOW_SERVER_CARD_NAME, SERVER_CARD_MEDIA_TYPE, SERVER_CARD_NAME } from '@flowgate/workspace-mcp';

/**
 * The AI Catalog served at `/.well-known/ai-catalog.json`: built at request time from the public URL, so it lives
 * apart from documents.ts (the build-time generators the app must not bundle).
 */
/** AI Catalog media type and the format version this catalog follows (the AI Catalog specification, "1.0"). */
export const AI_CATALOG_MEDIA_TYPE = 'application/ai-catalog+json';
export const AI_CATALOG_SPEC_VERSION = '1.0';

export interface AiCatalogEntry {
  identifier: string;
  type: typeof SERVER_CARD_MEDIA_TYPE;
  url: string;
}

/**
 * Where the SEP-2127 cards are (`<endpoint>/server-card`), as the AI Catalog names them. The endpoints' `{…}`
 * template is percent-encoded so each `url` stays a valid URL: fetched as written it answers the card (every
 * workspace id and slug does, and `{workspace_id}` matches no real one), and a reader still sees the template.
 */
export function endpointCardUrls(publicUrl: string): { workspace: string; flow: string } {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    workspace: `${base}/api/workspaces/%7Bworkspace_id%7D/mcp/server-card`,
    flow: `${base}/api/workspaces/%7Bworkspace_id%7D/flows/%7Bflow_slug%7D/mcp/server-card`,
  };
}

/**
 * The organisation catalog at `/.well-known/ai-catalog.json` (SEP-2127 discovery, "AI Catalog"): one entry per
 * server card. Identifiers follow the `urn:air:{publisher}:{namespace}:{name}` form with this deployment's host as
 * publisher and the card name's part after `/` as name.
 */
export function buildAiCatalog(publicUrl: string): { specVersion: string; entries: AiCatalogEntry[] } {
  const publisher = new URL(publicUrl).hostname;
  const urls = endpointCardUrls(publicUrl);
  const entry = (cardName: string, url: string): AiCatalogEntry => ({
    identifier: `urn:air:${publisher}:mcp:${cardName.split('/')[1]}`,
    type: SERVER_CARD_MEDIA_TYPE,
    url,
  });
  return {
    specVersion: AI_CATALOG_SPEC_VERSION,
    entries: [entry(SERVER_CARD_NAME, urls.workspace), entry(FLOW_SERVER_CARD_NAME, urls.flow)],
  };
}
