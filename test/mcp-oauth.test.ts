import { CAPABILITIES } from '@flowgate/auth';
import { CATALOG } from '@flowgate/workspace-mcp';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { initializeParams, mcpPost, rpc } from './support/mcp.js';
import { startOidcProvider, TestOAuthClient, type TestOidcProvider } from './support/oidc.js';

/**
 * OAuth for MCP clients (RFC 9728 discovery, RFC 8707 audience binding) against a real OpenID provider on
 * loopback, driven by the MCP SDK client's own authorization-code + PKCE flow.
 */

const WS_A = 'oauth-a';
const WS_B = 'oauth-b';
const GATEWAY_AUDIENCE = 'flowgate-e2e-gateway';
const WELL_KNOWN = '/.well-known/oauth-protected-resource';

let idp: TestOidcProvider;
let gw: TestGateway;

beforeAll(async () => {
  idp = await startOidcProvider({
    accountId: 'alice',
    claimsFor: (accountId) => ({
      workspaces: [
        { id: WS_A, capabilities: ['workspace.full'] },
        { id: WS_B, role: 'viewer' },
      ],
      email: `${accountId}@example.test`,
    }),
  });
  gw = await startTestGateway({
    FLOWGATE_JWT_ISSUER: idp.issuer,
    FLOWGATE_JWT_AUDIENCE: GATEWAY_AUDIENCE,
    FLOWGATE_JWT_JWKS_URL: idp.jwksUrl,
  });
  await gw.createWorkspace(WS_A);
  await gw.createWorkspace(WS_B);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await idp?.close();
});

const flowMcpPath = (ws: string, slug: string) => `/api/workspaces/${ws}/flows/${slug}/mcp`;
const metadataUrlOf = (path: string) => `${gw.url}${WELL_KNOWN}${path}`;
const initialize = (url: string, token: string | null) =>
  mcpPost(url, { token, body: rpc('initialize', initializeParams('2025-06-18')) });

/** Runs the SDK client's OAuth flow against one MCP URL and returns the client's access token. */
async function signIn(mcpUrl: string): Promise<{ oauth: TestOAuthClient; token: string }> {
  const oauth = new TestOAuthClient();
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: oauth });
  const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
  await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const code = oauth.authorizationCode;
  if (!code) throw new Error('the SDK client did not complete authorization');
  await first.finishAuth(code);
  const token = oauth.savedTokens?.access_token;
  if (!token) throw new Error('the SDK client saved no access token');
  return { oauth, token };
}

describe('protected-resource metadata (RFC 9728)', () => {
  it('names the deployment, each workspace MCP URL and each per-flow MCP URL', async () => {
    const expected = (resource: string) => ({
      resource,
      authorization_servers: [idp.issuer],
      scopes_supported: [...CAPABILITIES],
      bearer_methods_supported: ['header'],
    });
    for (const [path, resource] of [
      ['', gw.url],
      [`/api/workspaces/${WS_A}/mcp`, gw.mcpUrl(WS_A)],
      [flowMcpPath(WS_B, 'triage'), `${gw.url}${flowMcpPath(WS_B, 'triage')}`],
      // Any well-formed workspace id: the documents do not reveal which workspaces exist.
      ['/api/workspaces/no-such-ws/mcp', gw.mcpUrl('no-such-ws')],
    ] as const) {
      const res = await fetch(`${gw.url}${WELL_KNOWN}${path}`, {
        headers: { origin: 'https://app.example' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toEqual(expected(resource));
    }
  });

  it('answers 404 for paths that are not MCP endpoints', async () => {
    for (const path of [
      `/api/workspaces/${WS_A}/audit`,
      '/api/workspaces/Not_A_Workspace/mcp',
      `/api/workspaces/${WS_A}/mcp/extra`,
      `/api/workspaces/${WS_A}/flows/9bad/mcp`,
    ]) {
      const res = await fetch(`${gw.url}${WELL_KNOWN}${path}`);
      expect(res.status, path).toBe(404);
      await res.body?.cancel();
    }
  });

  it("every 401 of an MCP endpoint points at that endpoint's metadata", async () => {
    const missing = await initialize(gw.mcpUrl(WS_A), null);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer realm="flowgate", resource_metadata="${metadataUrlOf(`/api/workspaces/${WS_A}/mcp`)}"`,
    );
    const bad = await initialize(`${gw.url}${flowMcpPath(WS_A, 'triage')}`, 'fgk_not_a_real_key');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(
      `Bearer realm="flowgate", error="invalid_token", resource_metadata="${metadataUrlOf(flowMcpPath(WS_A, 'triage'))}"`,
    );
    // Not an MCP endpoint: no resource to point at.
    const admin = await fetch(`${gw.url}/api/workspaces/${WS_A}/audit`);
    expect(admin.status).toBe(401);
    expect(admin.headers.get('www-authenticate')).toBe('Bearer realm="flowgate"');
    await admin.body?.cancel();
  });
});

describe('signing in through the identity provider with the MCP SDK client', () => {
  it('discovers the metadata from the 401, does authorization code + PKCE for the endpoint, and lists tools', async () => {
    const { oauth, token } = await signIn(gw.mcpUrl(WS_A));

    const authorization = oauth.authorizationUrl;
    expect(authorization?.origin).toBe(idp.issuer);
    expect(authorization?.searchParams.get('resource')).toBe(gw.mcpUrl(WS_A));
    expect(authorization?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization?.searchParams.get('scope')).toBe(CAPABILITIES.join(' '));

    const claims = decodeJwt(token);
    expect(claims.iss).toBe(idp.issuer);
    expect(claims.aud).toBe(gw.mcpUrl(WS_A));
    expect(claims.sub).toBe('alice');

    const transport = new StreamableHTTPClientTransport(new URL(gw.mcpUrl(WS_A)), { authProvider: oauth });
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(CATALOG.map((t) => t.name));
      const ctx = await client.callTool({ name: 'get_workspace_context', arguments: {} });
      const sc = ctx.structuredContent as {
        workspace: { id: string };
        principal: { kind: string; id: string };
      };
      expect(sc.workspace.id).toBe(WS_A);
      expect(sc.principal).toMatchObject({ kind: 'user', id: 'alice' });
    } finally {
      await client.close();
    }
  });

  it("refuses a token minted for another workspace's MCP URL, though the claims grant that workspace too", async () => {
    const { token: forB } = await signIn(gw.mcpUrl(WS_B));
    expect(decodeJwt(forB).aud).toBe(gw.mcpUrl(WS_B));
    expect((await initialize(gw.mcpUrl(WS_B), forB)).status).toBe(200);

    const onA = await initialize(gw.mcpUrl(WS_A), forB);
    expect(onA.status).toBe(401);
    expect(onA.json).toMatchObject({ code: 'invalid_token', message: 'token audience is not accepted' });
    expect(onA.headers.get('www-authenticate')).toBe(
      `Bearer realm="flowgate", error="invalid_token", resource_metadata="${metadataUrlOf(`/api/workspaces/${WS_A}/mcp`)}"`,
    );
    // The per-flow endpoint of the same workspace is another resource, and so is the admin API.
    const onFlow = await initialize(`${gw.url}${flowMcpPath(WS_B, 'triage')}`, forB);
    expect(onFlow.status).toBe(401);
    expect(onFlow.headers.get('www-authenticate')).toBe(
      `Bearer realm="flowgate", error="invalid_token", resource_metadata="${metadataUrlOf(flowMcpPath(WS_B, 'triage'))}"`,
    );
    const admin = await fetch(`${gw.url}/api/workspaces/${WS_B}/flows`, {
      headers: { authorization: `Bearer ${forB}` },
    });
    expect(admin.status).toBe(401);
    await admin.body?.cancel();
  });

  it('accepts the configured audience on every endpoint and refuses any other resource', async () => {
    const claims = { sub: 'bob', workspaces: [{ id: WS_A, role: 'viewer' }] };
    const general = await idp.sign({ ...claims, aud: GATEWAY_AUDIENCE });
    expect((await initialize(gw.mcpUrl(WS_A), general)).status).toBe(200);

    for (const aud of [
      'https://elsewhere.example/mcp',
      `${gw.mcpUrl(WS_A)}/`,
      gw.url,
      `${gw.url}${flowMcpPath(WS_A, 'triage')}`,
    ]) {
      const res = await initialize(gw.mcpUrl(WS_A), await idp.sign({ ...claims, aud }));
      expect(res.status, aud).toBe(401);
      expect(res.json).toMatchObject({ code: 'invalid_token', message: 'token audience is not accepted' });
    }
  });
});

describe('without an identity provider', () => {
  let plain: TestGateway;
  beforeAll(async () => {
    plain = await startTestGateway();
    await plain.createWorkspace(WS_A);
  }, 60_000);
  afterAll(async () => plain?.close());

  it('serves no protected-resource metadata and no resource_metadata in challenges', async () => {
    for (const path of ['', `/api/workspaces/${WS_A}/mcp`, flowMcpPath(WS_A, 'triage')]) {
      const res = await fetch(`${plain.url}${WELL_KNOWN}${path}`);
      expect(res.status, path).toBe(404);
      await res.body?.cancel();
    }
    const res = await initialize(plain.mcpUrl(WS_A), null);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="flowgate"');
  });
});
