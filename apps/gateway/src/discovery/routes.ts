import { sha256, toBase64Url } from '@flowgate/core';
import {
  buildEndpointServerCards,
  SERVER_CARD_DEFAULT_BASE_URL,
  SERVER_CARD_MEDIA_TYPE,
  serializeServerCard,
  TOOLSET_ICON_SVGS,
  TOOLSETS,
  toolsetIconPath,
} from '@flowgate/workspace-mcp';
import type { Context } from 'hono';
import { cors } from 'hono/cors';
import { etag, RETAINED_304_HEADERS } from 'hono/etag';
import type { RouteMount } from '../app.js';
import { AI_CATALOG_MEDIA_TYPE, buildAiCatalog } from './ai-catalog.js';
import { installProtectedResourceMetadata, PROTECTED_RESOURCE_WELL_KNOWN } from './protected-resource.js';
// Imported as a module, not read from disk, so every runtime (and the bundle) carries it.
import generatedCard from './server-card.json' with { type: 'json' };

// The committed file is `serializeServerCard`'s own output (a test holds it), so serialising the parsed document
// again gives back its exact bytes.
const CARD_TEXT = serializeServerCard(generatedCard);

/**
 * Public discovery documents (docs/mcp-surface.md, "Discovery documents"). The scanners' card is the file the build
 * step generated from the catalog (`pnpm generate`), only the example base URL swapped for this deployment's public
 * URL; the SEP-2127 cards and the AI Catalog come from the same builders, rendered once at start-up.
 */
export const installDiscovery: RouteMount = (app, deps) => {
  const publicUrl = deps.config.publicUrl;
  const scannersCard = CARD_TEXT.split(SERVER_CARD_DEFAULT_BASE_URL).join(publicUrl);
  // The version the endpoint's serverInfo reports, which SEP-2127 says the card should not contradict.
  const cards = buildEndpointServerCards({ publicBaseUrl: publicUrl, version: deps.version });
  const publicCors = cors({
    origin: '*',
    allowMethods: ['GET', 'HEAD', 'OPTIONS'],
    allowHeaders: ['If-None-Match'],
    maxAge: 86400,
  });
  const documents = [
    publicCors,
    // A 304 keeps the CORS and request-id headers, so browsers can read it and logs can match it.
    etag({ retainedHeaders: [...RETAINED_304_HEADERS, 'access-control-allow-origin', 'x-request-id'] }),
  ];
  /**
   * One public document: fixed bytes and ETag computed here, once (the etag middleware uses a response's own ETag
   * instead of hashing the body per request). The handler answers without reading the path's parameters, so an
   * unknown workspace id or flow slug gets the same 200 as a real one, with no lookup to time.
   */
  const publish = (
    path: string,
    body: string,
    mediaType: string,
    extra: Record<string, string> = { 'cache-control': 'public, max-age=3600' },
  ) => {
    const tag = `"${toBase64Url(sha256(body)).slice(0, 27)}"`;
    app.use(path, ...documents);
    app.get(path, (c: Context) =>
      c.body(body, 200, {
        etag: tag,
        vary: 'Accept-Encoding',
        'content-type': mediaType,
        ...extra,
      }),
    );
  };

  // The older draft's location, which directory scanners read: keeps the tool, resource and prompt lists.
  publish('/.well-known/mcp/server-card.json', scannersCard, 'application/json');
  // SEP-2127: the card at `<streamable-http-url>/server-card`, identity and transport only.
  publish(
    '/api/workspaces/:ws/mcp/server-card',
    serializeServerCard(cards.workspace),
    SERVER_CARD_MEDIA_TYPE,
  );
  publish(
    '/api/workspaces/:ws/flows/:slug/mcp/server-card',
    serializeServerCard(cards.flow),
    SERVER_CARD_MEDIA_TYPE,
  );
  // SEP-2127 discovery: the domain's AI Catalog naming both cards.
  publish(
    '/.well-known/ai-catalog.json',
    serializeServerCard(buildAiCatalog(publicUrl)),
    AI_CATALOG_MEDIA_TYPE,
  );
  // The tool icons tools/list and the scanners' card point at (one SVG per toolset): public and cached for a week, as
  // an icon changes only with a release. An SVG is active content if opened directly, so it is sandboxed: no script,
  // no fetch, no sniffing.
  for (const toolset of TOOLSETS)
    publish(toolsetIconPath(toolset), TOOLSET_ICON_SVGS[toolset], 'image/svg+xml', {
      'cache-control': 'public, max-age=604800',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      'x-content-type-options': 'nosniff',
    });
  // OAuth discovery for browser-based clients too; the routes themselves exist only with an identity provider.
  app.use(PROTECTED_RESOURCE_WELL_KNOWN, publicCors);
  app.use(`${PROTECTED_RESOURCE_WELL_KNOWN}/*`, publicCors);
  installProtectedResourceMetadata(app, deps);
};
