import { CAPABILITIES } from '@flowgate/auth';
import { FLOW_SLUG_PATTERN, WORKSPACE_ID_PATTERN } from '@flowgate/core';
import type { Context } from 'hono';
import type { RouteMount } from '../app.js';
import type { GatewayConfig } from '../config.js';

/** RFC 9728 section 3: the well-known suffix, and the place the resource's path is appended to. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

const MCP_PATH = /^\/api\/workspaces\/([^/]+)\/(?:flows\/([^/]+)\/)?mcp$/;

/** RFC 9728 section 2, the members this gateway fills in. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ['header'];
}

export interface ProtectedResource {
  /** The absolute URL of the endpoint; the `aud` a token minted for it carries. */
  resource: string;
  /** Where its metadata is served (the `resource_metadata` of a 401 challenge). */
  metadataUrl: string;
}

export interface ProtectedResources {
  /** The MCP endpoint (workspace or per-flow) a request path is, or undefined for any other path. */
  forPath(path: string): ProtectedResource | undefined;
  /** The metadata document of an MCP endpoint path, or of the whole deployment for `null`. */
  document(path: string | null): ProtectedResourceMetadata;
}

function isMcpPath(path: string): boolean {
  const m = MCP_PATH.exec(path);
  if (!m || !WORKSPACE_ID_PATTERN.test(m[1] ?? '')) return false;
  return m[2] === undefined || FLOW_SLUG_PATTERN.test(m[2]);
}

/**
 * The OAuth protected resources of a deployment: only when an identity provider is configured, since without one
 * no client could get a token from the advertised authorization server.
 */
export function protectedResourcesOf(config: GatewayConfig): ProtectedResources | undefined {
  if (!config.jwt) return undefined;
  const base = new URL(config.publicUrl);
  // A public URL with a path (behind a proxy prefix) keeps that path in the resource and in the metadata URL.
  const prefix = base.pathname.replace(/\/+$/, '');
  const authorizationServers =
    config.oauthAuthorizationServers.length > 0 ? [...config.oauthAuthorizationServers] : [config.jwt.issuer];
  const document = (resource: string): ProtectedResourceMetadata => ({
    resource,
    authorization_servers: authorizationServers,
    scopes_supported: [...CAPABILITIES],
    bearer_methods_supported: ['header'],
  });
  return {
    forPath(path) {
      if (!isMcpPath(path)) return undefined;
      return {
        resource: `${config.publicUrl}${path}`,
        metadataUrl: `${base.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${prefix}${path}`,
      };
    },
    document(path) {
      return document(path === null ? config.publicUrl : `${config.publicUrl}${path}`);
    },
  };
}

/**
 * `/.well-known/oauth-protected-resource` (the deployment) and its path-suffixed form per MCP endpoint. Public and
 * the same for any well-formed workspace id, so they reveal nothing about which workspaces exist. Not mounted at
 * all (404) when no identity provider is configured.
 */
export const installProtectedResourceMetadata: RouteMount = (app, deps) => {
  const resources = protectedResourcesOf(deps.config);
  if (!resources) return;
  const prefix = new URL(deps.config.publicUrl).pathname.replace(/\/+$/, '');
  const serve = (c: Context, metadata: ProtectedResourceMetadata) =>
    c.json(metadata, 200, { 'cache-control': 'public, max-age=3600' });
  app.get(PROTECTED_RESOURCE_WELL_KNOWN, (c) => serve(c, resources.document(null)));
  app.get(`${PROTECTED_RESOURCE_WELL_KNOWN}/*`, (c) => {
    const suffix = c.req.path.slice(PROTECTED_RESOURCE_WELL_KNOWN.length);
    const path = prefix && suffix.startsWith(`${prefix}/`) ? suffix.slice(prefix.length) : suffix;
    if ((prefix && path === suffix) || !resources.forPath(path)) return c.notFound();
    return serve(c, resources.document(path));
  });
};
