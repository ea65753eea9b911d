import {
  fromBase64,
  hkdfSha256,
  hmacSha256With,
  timingSafeEqualText,
  toBase64Url,
  utf8Bytes,
  utf8Text,
} from '@flowgate/core';
import type { ClientInfo } from '@flowgate/workspace-mcp';
import { z } from 'zod';

/**
 * The client a stateless 2025 connection named at `initialize`, carried to its later requests without server
 * state: the answer to `initialize` sets `Mcp-Session-Id` to a signed, self-contained token (client name and
 * version, negotiated protocol version, workspace and principal), which clients echo on every request. Any replica
 * verifies it with the deployment key, so audit rows name the client instead of its User-Agent.
 *
 * Limits: a client that ignores the header (or a 2025-03-26 client that never sends it) stays identified by its
 * User-Agent; the name is what the client claims (signing stops others from putting words in its mouth, not the
 * client itself from lying); tokens do not expire, since they grant nothing.
 */

/** Longest token accepted: a bounded name and version fit far below it. */
const MAX_TOKEN_CHARS = 1024;
const PREFIX = 'fgc1';

const payloadSchema = z.strictObject({
  w: z.string().max(128),
  p: z.string().max(300),
  n: z.string().max(200),
  v: z.string().max(100).nullable(),
  pv: z.string().max(40),
});

export interface ClientTokenClaims {
  workspaceId: string;
  /** The principal the token was issued to (`kind:id`), so it cannot be replayed by another. */
  principal: string;
  client: ClientInfo;
  protocolVersion: string;
}

export interface ClientTokens {
  issue(claims: ClientTokenClaims): string;
  /** The claims of a genuine token, else null. */
  open(token: string): ClientTokenClaims | null;
}

export function createClientTokens(deploymentKey: Uint8Array): ClientTokens {
  // Its own key, derived so no key signs two kinds of thing.
  const mac = hmacSha256With(hkdfSha256(deploymentKey, 'flowgate/mcp-client-token/v1', 32));
  const sign = (body: string) => toBase64Url(mac(body));
  return {
    issue(claims) {
      const body = toBase64Url(
        utf8Bytes(
          JSON.stringify({
            w: claims.workspaceId,
            p: claims.principal,
            n: claims.client.name,
            v: claims.client.version,
            pv: claims.protocolVersion,
          }),
        ),
      );
      return `${PREFIX}.${body}.${sign(body)}`;
    },
    open(token) {
      if (token.length > MAX_TOKEN_CHARS) return null;
      const [prefix, body, tag, extra] = token.split('.');
      if (prefix !== PREFIX || !body || !tag || extra !== undefined) return null;
      if (!timingSafeEqualText(sign(body), tag)) return null;
      let parsed: unknown;
      try {
        parsed = JSON.parse(utf8Text(fromBase64(body)));
      } catch {
        return null;
      }
      const claims = payloadSchema.safeParse(parsed);
      if (!claims.success) return null;
      const c = claims.data;
      return {
        workspaceId: c.w,
        principal: c.p,
        client: { name: c.n, version: c.v },
        protocolVersion: c.pv,
      };
    },
  };
}
