import {
  buildServerCard,
  FLOW_SERVER_CARD_NAME,
  SERVER_CARD_DEFAULT_BASE_URL,
  SERVER_CARD_DESCRIPTION,
  SERVER_CARD_MEDIA_TYPE,
  SERVER_CARD_NAME,
  SERVER_TITLE,
  serializeServerCard,
} from '@flowgate/workspace-mcp';
import { VERSION } from '../version.js';

export const REGISTRY_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** The static server card, as the build step writes it (deployment-neutral base URL). */
export function renderServerCard(): string {
  return serializeServerCard(buildServerCard({ version: VERSION }));
}

/** The MCP Registry manifest (`server.json` at the repository root), derived from the same card. */
export function renderRegistryManifest(): string {
  const card = buildServerCard({ version: VERSION });
  const manifest = {
    $schema: REGISTRY_SCHEMA,
    name: SERVER_CARD_NAME,
    title: SERVER_TITLE,
    description: SERVER_CARD_DESCRIPTION,
    version: VERSION,
    websiteUrl: SERVER_CARD_DEFAULT_BASE_URL,
    remotes: card.remotes.map((r) => ({
      type: r.type,
      url: r.url,
      variables: r.variables,
      headers: r.headers,
    })),
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

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
