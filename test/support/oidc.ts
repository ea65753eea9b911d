import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CAPABILITIES } from '@flowgate/auth';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';

/**
 * A real OpenID provider (panva's oidc-provider) on 127.0.0.1: one public client with PKCE, resource indicators
 * (RFC 8707) so access tokens are JWTs whose `aud` is the requested resource, and Flowgate's `workspaces` claim
 * added to them. Login and consent are approved at once for the account the test names.
 */

export const OIDC_CLIENT_ID = 'flowgate-e2e';
/** Never served: the test stops following redirects there and reads the code. */
export const OIDC_REDIRECT_URI = 'http://127.0.0.1/oauth/callback';
const KEY_ID = 'e2e-rs256';

export interface TestOidcProvider {
  issuer: string;
  jwksUrl: string;
  /** Signs a token with the provider's own key, for cases a real flow cannot produce. */
  sign(payload: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

export interface TestOidcOptions {
  /** The account signed in at the next login. */
  accountId: string;
  /** Flowgate's claims added to every access token of an account. */
  claimsFor(accountId: string): Record<string, unknown>;
}

export async function startOidcProvider(options: TestOidcOptions): Promise<TestOidcProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: KEY_ID, alg: 'RS256', use: 'sig' };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: OIDC_CLIENT_ID,
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        redirect_uris: [OIDC_REDIRECT_URI],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['e2e-cookie-signing-key-0123456789'] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, Interaction: 600, Session: 600 },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // The token endpoint issues for the resource the grant was approved for.
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: CAPABILITIES.join(' '),
          audience: resourceIndicator,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      const accountId = 'accountId' in token ? token.accountId : undefined;
      return typeof accountId === 'string' ? options.claimsFor(accountId) : {};
    },
  });

  // Approves every interaction: login as the configured account, consent to what is missing.
  provider.use(async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    if (!ctx.path.startsWith('/interaction/')) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.prompt.name === 'login') {
      const to = await provider.interactionResult(ctx.req, ctx.res, {
        login: { accountId: options.accountId },
      });
      ctx.redirect(to);
      return;
    }
    const grant = new provider.Grant({
      accountId: details.session?.accountId ?? options.accountId,
      clientId: OIDC_CLIENT_ID,
    });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    const grantId = await grant.save();
    const to = await provider.interactionResult(ctx.req, ctx.res, { consent: { grantId } });
    ctx.redirect(to);
  });
  server.on('request', provider.callback());

  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    sign: (payload) =>
      new SignJWT(payload)
        .setProtectedHeader({ alg: 'RS256', kid: KEY_ID, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(privateKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * What a browser does between the authorization request and the redirect back to the client: follows redirects
 * with the provider's cookies, and returns the authorization code the redirect URI receives.
 */
export async function followAuthorization(authorizationUrl: URL): Promise<string> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl.href;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair = ''] = set.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(set)) cookies.delete(name);
      else cookies.set(name, value);
    }
    const location = res.headers.get('location');
    await res.body?.cancel();
    if (res.status < 300 || res.status >= 400 || !location)
      throw new Error(`authorization stopped at ${url} with ${res.status}`);
    const next = new URL(location, url);
    if (next.href.startsWith(OIDC_REDIRECT_URI)) {
      const code = next.searchParams.get('code');
      if (!code)
        throw new Error(`authorization failed: ${next.searchParams.get('error_description') ?? next.search}`);
      return code;
    }
    url = next.href;
  }
  throw new Error('authorization did not reach the redirect URI');
}

/** The MCP SDK's client-side OAuth state, kept in memory; authorization is completed by `followAuthorization`. */
export class TestOAuthClient implements OAuthClientProvider {
  savedTokens: OAuthTokens | undefined;
  authorizationCode: string | undefined;
  authorizationUrl: URL | undefined;
  private verifier: string | undefined;

  get redirectUrl(): string {
    return OIDC_REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'flowgate e2e',
      redirect_uris: [OIDC_REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: OIDC_CLIENT_ID };
  }
  tokens(): OAuthTokens | undefined {
    return this.savedTokens;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.savedTokens = tokens;
  }
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationUrl = authorizationUrl;
    this.authorizationCode = await followAuthorization(authorizationUrl);
  }
  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }
  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}
