import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SERVER_CARD_DEFAULT_BASE_URL } from '@flowgate/workspace-mcp';
import type { Context } from 'hono';
import type { RouteInstaller } from '../app.js';

const CARD_FILE = new URL('./server-card.json', import.meta.url);

/**
 * Public discovery documents. The card is the file the build step generated from the catalog
 * (`pnpm generate`); only the example base URL is swapped for this deployment's public URL.
 */
export const installDiscovery: RouteInstaller = (app, deps) => {
  const body = readFileSync(CARD_FILE, 'utf8')
    .split(SERVER_CARD_DEFAULT_BASE_URL)
    .join(deps.config.publicUrl);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, HEAD, OPTIONS',
    'access-control-allow-headers': 'If-None-Match',
  };
  const serve = (mediaType: string) => (c: Context) => {
    const headers = { ...cors, etag, 'cache-control': 'public, max-age=3600', vary: 'Accept-Encoding' };
    const match = c.req.header('if-none-match');
    if (match?.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}` || t.trim() === '*')) {
      return c.body(null, 304, headers);
    }
    return c.body(body, 200, { ...headers, 'content-type': mediaType });
  };
  const preflight = (c: Context) => c.body(null, 204, { ...cors, 'access-control-max-age': '86400' });

  app.get('/.well-known/mcp/server-card.json', serve('application/json'));
  app.options('/.well-known/mcp/server-card.json', preflight);
  // The location the current server-card draft reserves; the same public document for every workspace id.
  app.get('/api/workspaces/:ws/mcp/server-card', serve('application/mcp-server-card+json'));
  app.options('/api/workspaces/:ws/mcp/server-card', preflight);
};
