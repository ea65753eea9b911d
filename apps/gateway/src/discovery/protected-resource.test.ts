import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { protectedResourcesOf } from './protected-resource.js';

const JWT_ENV = {
  FLOWGATE_JWT_ISSUER: 'https://idp.example.test/',
  FLOWGATE_JWT_AUDIENCE: 'flowgate',
  FLOWGATE_JWT_JWKS_URL: 'https://idp.example.test/jwks',
};

describe('protectedResourcesOf', () => {
  it('is absent without an identity provider', () => {
    expect(protectedResourcesOf(loadConfig({}))).toBeUndefined();
  });

  it('keeps a public URL path prefix in the resource and after the well-known segment', () => {
    const r = protectedResourcesOf(
      loadConfig({ ...JWT_ENV, FLOWGATE_PUBLIC_URL: 'https://gw.example.test/flowgate/' }),
    );
    expect(r?.forPath('/api/workspaces/acme/mcp')).toEqual({
      resource: 'https://gw.example.test/flowgate/api/workspaces/acme/mcp',
      metadataUrl:
        'https://gw.example.test/.well-known/oauth-protected-resource/flowgate/api/workspaces/acme/mcp',
    });
    expect(r?.forPath('/api/workspaces/acme/flows/triage/mcp')?.resource).toBe(
      'https://gw.example.test/flowgate/api/workspaces/acme/flows/triage/mcp',
    );
    expect(r?.forPath('/api/workspaces/acme/audit')).toBeUndefined();
    expect(r?.forPath('/api/workspaces/ACME/mcp')).toBeUndefined();
    expect(r?.document(null).resource).toBe('https://gw.example.test/flowgate');
  });

  it('names the configured authorization servers instead of the issuer', () => {
    const r = protectedResourcesOf(
      loadConfig({
        ...JWT_ENV,
        FLOWGATE_OAUTH_AUTHORIZATION_SERVERS: 'https://login.example.test, https://backup.example.test',
      }),
    );
    expect(r?.document('/api/workspaces/acme/mcp').authorization_servers).toEqual([
      'https://login.example.test',
      'https://backup.example.test',
    ]);
    expect(() => loadConfig({ FLOWGATE_OAUTH_AUTHORIZATION_SERVERS: 'not a url' })).toThrow(
      /FLOWGATE_OAUTH_AUTHORIZATION_SERVERS/,
    );
  });
});
