import { FLOW_SLUG_PATTERN, INSTALLATION_ID_PATTERN } from '@flowgate/core';
import {
  MAX_FLOWS_PER_WORKSPACE,
  MAX_VERSIONS_PER_FLOW,
  openWorkspace,
  type Workspace,
} from '@flowgate/workspace';
import {
  type ClientInfo,
  flowSurface,
  handleMcpMessage,
  type McpAuditEntry,
  type McpHttpResult,
  type McpSurface,
  type McpUsageEntry,
  narrowingHeadersFrom,
  parseErrorResult,
  parseNarrowingHeaders,
  principalFromAccess,
  WORKSPACE_SURFACE,
} from '@flowgate/workspace-mcp';
import type { Context } from 'hono';
import type { GatewayDeps, RouteGuards, RouteInstaller } from '../app.js';
import { usagePrincipal } from '../audit/usage-meter.js';
import type { AppEnv } from '../context.js';
import { protectedResourcesOf } from '../discovery/protected-resource.js';
import { readBearer } from '../middleware/authenticate.js';
import { BUSY_RETRY_AFTER_SECONDS, busyBody, createAdmission, needsDatabase } from './admission.js';
import { respondWithParts } from './body-parts.js';
import { createClientTokens } from './client-token.js';
import { createSseAnswer, SSE_HEADERS, type SseAnswer } from './sse.js';

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** The methods the MCP routes answer (POST, and 405 for the others), every one behind the MCP gate. */
const MCP_METHODS: readonly string[] = ['POST', 'GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'];
const MCP_PATHS: readonly string[] = ['/api/workspaces/:ws/mcp', '/api/workspaces/:ws/flows/:slug/mcp'];

/** Accept values seen lately and whether they allow Streamable HTTP. */
const acceptVerdicts = new Map<string, boolean>();

/** Accept must allow both JSON and SSE answers (Streamable HTTP); wildcards count. */
export function acceptsStreamableHttp(accept: string | undefined): boolean {
  if (!accept) return false;
  const known = acceptVerdicts.get(accept);
  if (known !== undefined) return known;
  const verdict = parseAccept(accept);
  // A client sends the same Accept with every request: keep a few short ones, bounded.
  if (accept.length <= 256) {
    if (acceptVerdicts.size >= 64) acceptVerdicts.clear();
    acceptVerdicts.set(accept, verdict);
  }
  return verdict;
}

function parseAccept(accept: string): boolean {
  const types = accept.split(',').map((part) => (part.split(';')[0] ?? '').trim().toLowerCase());
  const allows = (type: string) =>
    types.some((t) => t === type || t === '*/*' || t === `${type.split('/')[0]}/*`);
  return allows('application/json') && allows('text/event-stream');
}

function httpError(
  c: Context,
  status: 400 | 404 | 405 | 406 | 415,
  code: number,
  message: string,
  headers: Record<string, string> = {},
) {
  return c.body(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), status, {
    'content-type': 'application/json',
    ...headers,
  });
}

function respond(c: Context<AppEnv>, result: McpHttpResult, headers: Record<string, string> = {}): Response {
  if (result.body === null) return c.body(null, result.status, headers);
  const all = { 'content-type': 'application/json', ...headers };
  // Cached bytes go out as they are, neither copied into a string nor re-encoded.
  if (result.parts) return respondWithParts(c, result.parts, result.status, all);
  return c.body(result.body, result.status, all);
}

function clientFromHeaders(c: Context): ClientInfo | null {
  const ua = c.req.header('user-agent');
  return ua ? { name: ua.slice(0, 100), version: null } : null;
}

/**
 * `POST /api/workspaces/{ws}/mcp`: Streamable HTTP, stateless, JSON answers. Rate limits, body bound, CORS,
 * authentication, workspace access, Origin and IP checks already ran in the MCP gate (middleware/mcp-gate.ts); this layer checks media types, parses narrowing
 * headers, and hands the parsed body to the transport-independent dispatcher.
 */
export function mcpRoutes(deps: GatewayDeps): RouteInstaller {
  // Cursors must open on any replica: the key is derived from the deployment's encryption key.
  const cursorKey = deps.cursorKey;
  const clientTokens = createClientTokens(deps.cursorKey);
  const admission = createAdmission(deps.config.mcpMaxInFlight);
  const limits = {
    maxRequestBodyBytes: deps.config.maxBodyBytes,
    maxFlowsPerWorkspace: MAX_FLOWS_PER_WORKSPACE,
    maxVersionsPerFlow: MAX_VERSIONS_PER_FLOW,
  };

  return (app, _deps, { mcpGate }) => {
    const notAllowed = (c: Context) =>
      c.body(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32000,
            message: 'Method not allowed: this endpoint takes POST only (no standalone SSE stream)',
          },
        }),
        405,
        {
          'content-type': 'application/json',
          allow: 'POST',
        },
      );
    // Every method but POST is 405 (a CORS preflight never gets here: the gate's CORS answers it).
    const otherMethods = MCP_METHODS.filter((m) => m !== 'POST');
    app.on(otherMethods, '/api/workspaces/:ws/mcp', mcpGate, notAllowed);
    app.on(otherMethods, '/api/workspaces/:ws/flows/:slug/mcp', mcpGate, notAllowed);

    /**
     * One MCP request on a surface: media types, narrowing headers (checked against the surface's tool names), the
     * body, then dispatch with the caller's workspace and the audit sink.
     */
    const serve = async (
      c: Context<AppEnv>,
      surfaceFor: (workspace: () => Workspace) => Promise<McpSurface | Response>,
    ): Promise<Response> => {
      if (!JSON_TYPE.test(c.req.header('content-type') ?? '')) {
        return httpError(c, 415, -32600, 'Unsupported Media Type: Content-Type must be application/json');
      }
      if (!acceptsStreamableHttp(c.req.header('accept'))) {
        return httpError(
          c,
          406,
          -32600,
          'Not Acceptable: Accept must allow both application/json and text/event-stream',
        );
      }
      const access = c.get('access');
      const principal = principalFromAccess(access);
      const usage = deps.usage.enabled ? deps.usage : null;
      // Opened on first use: list calls and ping never touch the use cases (≈ 3% of a tools/list's CPU).
      let opened: Workspace | undefined;
      const workspace = () => {
        opened ??= openWorkspace(deps.workspaceDeps, {
          workspaceId: access.workspaceId,
          actor: { kind: principal.kind, id: principal.id },
        });
        return opened;
      };
      const surface = await surfaceFor(workspace);
      if (surface instanceof Response) return surface;
      const narrowing = parseNarrowingHeaders(
        narrowingHeadersFrom((name) => c.req.header(name)),
        surface.toolNames,
      );
      if (!narrowing.ok) {
        const { code, message, unknown, valid } = narrowing.error;
        return c.json({ code, message, unknown, valid }, 400);
      }
      let body: unknown;
      try {
        body = JSON.parse(await c.req.text());
      } catch (err) {
        if ((err as { status?: number }).status === 413) throw err;
        return respond(c, parseErrorResult());
      }
      // A bounded number of requests wait on the database; past it the caller is told to come back (admission.ts).
      let release: (() => void) | null = null;
      if (needsDatabase(body)) {
        release = admission.enter();
        if (!release) {
          return c.body(busyBody(), 503, {
            'content-type': 'application/json',
            'retry-after': String(BUSY_RETRY_AFTER_SECONDS),
          });
        }
      }
      // The client named at initialize, echoed back in Mcp-Session-Id (client-token.ts); else the User-Agent.
      const principalTag = `${principal.kind}:${principal.id}`;
      const fromUserAgent = clientFromHeaders(c);
      let clientInfo = fromUserAgent;
      let tokenProtocolVersion: string | null = null;
      const sessionToken = c.req.header('mcp-session-id');
      if (sessionToken !== undefined) {
        const claims = clientTokens.open(sessionToken);
        if (!claims || claims.workspaceId !== access.workspaceId || claims.principal !== principalTag) {
          return httpError(c, 404, -32001, 'Session not found: send initialize again');
        }
        clientInfo = claims.client;
        tokenProtocolVersion = claims.protocolVersion;
      }
      let initialized: { clientInfo: ClientInfo | null; negotiatedVersion: string } | null = null;
      const policy = c.get('policy');
      const requestId = c.get('requestId');
      // A single request may be answered as an SSE stream (a waiting tools/call with a progress token or a listen
      // opens it); a batch is always answered as one JSON array. The stream, and the request's abort signal (which
      // makes @hono/node-server build an AbortController), are made only when a handler asks for them: most requests
      // answer JSON and never do.
      const streamable = !Array.isArray(body);
      let sse: SseAnswer | null = null;
      let streamOpened: (() => void) | null = null;
      const openStream = () => {
        if (sse === null) {
          sse = createSseAnswer({ signal: c.req.raw.signal });
          streamOpened?.();
        }
        return sse.open();
      };
      const handled = handleMcpMessage(body, {
        workspaceId: access.workspaceId,
        principal,
        capabilities: access.capabilities,
        narrowing: narrowing.narrowing,
        workspacePolicy: policy,
        workspace,
        surface,
        protocolVersionHeader: c.req.header('mcp-protocol-version') ?? tokenProtocolVersion,
        mcpMethodHeader: c.req.header('mcp-method') ?? null,
        mcpNameHeader: c.req.header('mcp-name') ?? null,
        traceContext: c.get('traceContext'),
        clientInfo,
        onInitialize: (info) => {
          initialized = info;
        },
        cursorKey,
        publicBaseUrl: deps.config.publicUrl,
        // A list for this key can be no fresher than the key (auth cache) and policy (workspace cache) it is built from.
        listCacheTtlMs: Math.min(deps.config.authCacheTtlMs, deps.workspaces.ttlMs),
        serverVersion: deps.version,
        limits,
        maxResultBytes: deps.config.mcpMaxResultBytes,
        waits: deps.mcpWaits,
        listens: deps.mcpListens,
        // A listen stream outlives the checks its request passed: it reads them again (auth cache and workspace
        // cache bound how fresh that is) to end when access is gone and to tell a changed tool list.
        recheck: async () => {
          const target = protectedResourcesOf(deps.config)?.forPath(c.req.path);
          let token: string;
          try {
            token = readBearer(c, target?.metadataUrl);
          } catch {
            return null;
          }
          const verified = await deps.authenticator.authenticate(token, { resource: target?.resource });
          if (!verified.ok) return null;
          const now = deps.authenticator.resolveAccess(verified.principal, access.workspaceId);
          if (!now.ok || now.access.keyId !== access.keyId) return null;
          const state = await deps.workspaces.get(access.workspaceId);
          return state.exists
            ? { capabilities: now.access.capabilities, workspacePolicy: state.policy }
            : null;
        },
        // A client that hangs up ends its parked wait at once (its timer, listener and slot are released).
        signal: () => c.req.raw.signal,
        ...(streamable ? { openStream } : {}),
        ...(usage
          ? {
              meter: (entry: McpUsageEntry) =>
                usage.call({
                  workspaceId: access.workspaceId,
                  method: entry.method,
                  tool: entry.tool,
                  principal: usagePrincipal({ kind: principal.kind, id: principal.id, keyId: access.keyId }),
                  client: entry.clientName,
                  outcome: entry.outcome,
                  durationMs: entry.durationMs,
                }),
            }
          : {}),
        audit: (entry: McpAuditEntry) =>
          deps.audit.record({
            workspaceId: access.workspaceId,
            requestId,
            principalType: principal.kind,
            principalId: principal.id,
            keyId: access.keyId,
            kind: entry.kind,
            action: entry.action,
            arguments: entry.arguments,
            outcome: entry.outcome,
            errorCode: entry.errorCode,
            protocolVersion: entry.protocolVersion,
            blockers: entry.blockers,
            runId: entry.runId,
            resourceUris: entry.resourceUris,
            reason: entry.reason,
            clientName: entry.clientName,
            clientVersion: entry.clientVersion,
            durationMs: Math.round(entry.durationMs),
          }),
        onError: (error) =>
          deps.logger.error(
            {
              requestId,
              code: 'mcp_internal_error',
              err: error instanceof Error ? error.message.slice(0, 300) : 'unknown',
            },
            'mcp handler failed',
          ),
      });
      // Held until the whole answer is done, a streamed one included.
      if (release) void handled.finally(release).catch(() => {});
      // Whichever comes first: the whole answer (JSON, exactly as without streaming) or the stream being opened.
      const result = streamable
        ? await new Promise<McpHttpResult | null>((resolve, reject) => {
            if (sse !== null) return resolve(null);
            streamOpened = () => resolve(null);
            handled.then(resolve, reject);
          })
        : await handled;
      const stream = sse as SseAnswer | null;
      if (stream?.isOpen()) {
        // handleMcpMessage answers every failure itself; the final response is the stream's last event.
        void handled.then(
          (final) => stream.end(final.body ?? ''),
          () =>
            stream.end(
              JSON.stringify({
                jsonrpc: '2.0',
                id: null,
                error: { code: -32603, message: 'Internal error' },
              }),
            ),
        );
        return c.body(stream.body, 200, { ...SSE_HEADERS });
      }
      if (result === null) throw new Error('unreachable: no stream was offered');
      const answered = initialized as { clientInfo: ClientInfo | null; negotiatedVersion: string } | null;
      // Only a name the client gave at initialize is worth carrying; the User-Agent comes with every request anyway.
      const named = answered?.clientInfo;
      if (
        answered &&
        named &&
        result.status === 200 &&
        !(fromUserAgent && named.name === fromUserAgent.name && named.version === fromUserAgent.version)
      ) {
        const token = clientTokens.issue({
          workspaceId: access.workspaceId,
          principal: principalTag,
          client: named,
          protocolVersion: answered.negotiatedVersion,
        });
        return respond(c, result, { 'mcp-session-id': token });
      }
      return respond(c, result);
    };

    app.post('/api/workspaces/:ws/mcp', mcpGate, (c: Context<AppEnv>) =>
      serve(c, async () => WORKSPACE_SURFACE),
    );

    // One flow's MCP interfaces as direct tools; `?installation_id=` picks an installation sharing the slug.
    app.post('/api/workspaces/:ws/flows/:slug/mcp', mcpGate, (c: Context<AppEnv>) =>
      serve(c, async (workspace) => {
        const slug = c.req.param('slug') ?? '';
        const installationId = c.req.query('installation_id') ?? null;
        const missing = () =>
          c.json(
            { code: 'not_found', message: `no flow ${slug.slice(0, 128)} with MCP tools in this workspace` },
            404,
          );
        if (
          !FLOW_SLUG_PATTERN.test(slug) ||
          (installationId !== null && !INSTALLATION_ID_PATTERN.test(installationId))
        )
          return missing();
        const includeInstalled = c.get('access').capabilities.has('installations.read');
        // Resolved again by a listen stream at each recheck, so it sees a release of the flow.
        const reopen = () => workspace().flows.open({ slug, installationId, includeInstalled });
        const open = await reopen();
        return (open && (await flowSurface(open, reopen))) ?? missing();
      }),
    );
  };
}

/** Gated: the MCP routes are mounted behind their own gate, ahead of the `/api` middlewares. */
export const installMcp: RouteInstaller = Object.assign(
  (app: Parameters<RouteInstaller>[0], deps: GatewayDeps, guards: RouteGuards) =>
    mcpRoutes(deps)(app, deps, guards),
  { gated: { methods: MCP_METHODS, paths: MCP_PATHS } },
);
