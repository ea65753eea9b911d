import type { Principal, WorkspaceAccess } from '@flowgate/auth';
import type { WorkspacePolicy } from '@flowgate/db';
import type { TraceContext } from '@flowgate/telemetry';

/**
 * What each runtime's entry passes as the second argument of `app.fetch`: the only runtime-specific thing a request
 * carries. Node's server passes its `incoming` message; Bun, Deno and Workers entries pass `remoteAddress`.
 */
export interface RuntimeBindings {
  /** The peer address of the connection, where the entry knows it. */
  remoteAddress?: string | undefined;
  /** Node (`@hono/node-server`): the request's socket, and its headers as received (name, value, …). */
  incoming?:
    | {
        socket?: { remoteAddress?: string | undefined } | undefined;
        rawHeaders?: readonly string[] | undefined;
      }
    | undefined;
  /** Node's listener: it writes a body `respondWithParts` leaves in `bodyParts` itself (mcp/body-parts.ts). */
  writesBodyParts?: boolean;
  /** The answer's body as UTF-8 pieces, left here by `respondWithParts` for the listener to write. */
  bodyParts?: readonly Uint8Array[];
}

/** Values the middleware chain puts on each request, read by the routes. */
export interface AppEnv {
  Bindings: RuntimeBindings;
  Variables: {
    requestId: string;
    /** Set once the bearer token is verified (`authenticate`, `operatorGuard`). */
    principal: Principal;
    /** Set on `/api/workspaces/:ws/*` once the caller is authenticated and allowed into the workspace. */
    access: WorkspaceAccess;
    policy: WorkspacePolicy;
    clientIp: string | null;
    /**
     * The request span's context, with telemetry on: the parent of what the request traces. On routes that carry it
     * explicitly (the MCP endpoints) it is not made the active context (middleware/telemetry.ts).
     */
    traceContext: TraceContext | undefined;
  };
}
