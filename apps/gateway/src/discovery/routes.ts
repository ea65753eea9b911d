import { sha256, toBase64Url } from '@flowgate/core';
import { SERVER_CARD_DEFAULT_BASE_URL, serializeServerCard } from '@flowgate/workspace-mcp';
import type { Context } from 'hono';
import { cors } from 'hono/cors';
import { etag, RETAINED_304_HEADERS } from 'hono/etag';
import type { RouteInstaller } from '../app.js';
import { installProtectedResourceMetadata, PROTECTED_RESOURCE_WELL_KNOWN } from './protected-resource.js';
// Imported as a module, not read from disk, so every runtime (and the bundle) carries it.
import generatedCard from './server-card.json' with { type: 'json' };

// The committed file is `serializeServerCard`'s own output (a test holds it), so serialising the parsed document
// again gives back its exact bytes.
const CARD_TEXT = serializeServerCard(generatedCard);

/**
 * Public discovery documents. The card is the file the build step generated from the catalog
 * (`pnpm generate`); only the example base URL is swapped for this deployment's public URL.
 */
export const installDiscovery: RouteInstaller = (app, deps) => {
  const body = CARD_TEXT.split(SERVER_CARD_DEFAULT_BASE_URL).join(deps.config.publicUrl);
  // Computed once: the etag middleware uses a response's own ETag instead of hashing the body per request.
  const tag = `"${toBase64Url(sha256(body)).slice(0, 27)}"`;
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
  const serve = (mediaType: string) => (c: Context) =>
    c.body(body, 200, {
      etag: tag,
      'cache-control': 'public, max-age=3600',
      vary: 'Accept-Encoding',
      'content-type': mediaType,
    });

  app.use('/.well-known/mcp/server-card.json', ...documents);
  app.get('/.well-known/mcp/server-card.json', serve('application/json'));
  // The location the current server-card draft reserves; the same public document for every workspace id.
  app.use('/api/workspaces/:ws/mcp/server-card', ...documents);
  app.get('/api/workspaces/:ws/mcp/server-card', serve('application/mcp-server-card+json'));
  // OAuth discovery for browser-based clients too; the routes themselves exist only with an identity provider.
  app.use(PROTECTED_RESOURCE_WELL_KNOWN, publicCors);
  app.use(`${PROTECTED_RESOURCE_WELL_KNOWN}/*`, publicCors);
  installProtectedResourceMetadata(app, deps);
};
