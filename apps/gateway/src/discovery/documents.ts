import {
  buildServerCard,
  SERVER_CARD_DEFAULT_BASE_URL,
  SERVER_CARD_DESCRIPTION,
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
