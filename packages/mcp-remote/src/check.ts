import { guardedFetch, isBlockedAddress, systemResolver } from '@flowgate/run-engine';
import { connectRemoteMcp } from './index.js';

/** Like an :http step's response cap: a tool listing is small, a larger answer is not a healthy server. */
const CHECK_RESPONSE_BYTES = 1_048_576;

export interface McpServerCheck {
  protocolVersion: string;
  serverName: string;
  serverVersion?: string | undefined;
  /** Tool names, all pages (bounded like every listing). */
  tools: string[];
}

/**
 * A connection health check by the protocol itself: negotiate (`server/discover` or `initialize`), list the tools,
 * close. The requests go through the run engine's guarded fetch, so the outbound address policy, the redirect rules
 * and the response cap are those of a run's steps.
 */
export async function checkMcpServer(target: {
  url: URL;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivateNetwork: boolean;
}): Promise<McpServerCheck> {
  const signal = AbortSignal.timeout(target.timeoutMs);
  const fetch = guardedFetch({
    transport: {
      isBlocked: target.allowPrivateNetwork ? undefined : isBlockedAddress,
      resolve: systemResolver,
    },
    maxResponseBytes: CHECK_RESPONSE_BYTES,
    credentialHeaders: Object.keys(target.headers),
    signal,
  });
  const session = await connectRemoteMcp({
    url: target.url,
    headers: target.headers,
    fetch,
    signal,
    timeoutMs: target.timeoutMs,
  });
  try {
    const tools = await session.listTools();
    return {
      protocolVersion: session.server.protocolVersion,
      serverName: session.server.name,
      serverVersion: session.server.version,
      tools: tools.map((t) => t.name),
    };
  } finally {
    await session.close().catch(() => undefined);
  }
}
