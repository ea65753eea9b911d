import type { Authenticator } from '@flowgate/auth';
import type { WorkspaceDeps } from '@flowgate/workspace';
import { Hono, type MiddlewareHandler } from 'hono';
import type { AuditSink } from '../audit/queue.js';
import { adminAuditRecorder } from '../audit/recorder.js';
import type { AppEnv } from '../context.js';
import { operatorGuard } from '../middleware/authenticate.js';
import { auditRoutes } from './audit.js';
import { connectionRoutes } from './connections.js';
import { createAdminCursors } from './cursor.js';
import { feedbackRoutes } from './feedback.js';
import { flowRoutes } from './flows.js';
import { policyRoutes } from './policy.js';
import { reviewRoutes } from './review.js';
import { runRoutes } from './runs.js';
import { serviceAccountRoutes } from './service-accounts.js';
import { toolsPreviewRoutes } from './tools-preview.js';
import { operatorUsageRoutes, usageRoutes } from './usage.js';
import type { AdminWorkspaces } from './workspace-of.js';
import { workspaceRoutes } from './workspaces.js';

export interface AdminDeps {
  /** Checks the operator token (unless `operatorGuard` is given). */
  authenticator: Authenticator;
  audit: AuditSink;
  /** The domain's deps; their `changes` listener keeps the gateway's caches in step with every mutation. */
  workspaceDeps: WorkspaceDeps;
  /** Tool names a policy may disable: the catalog's. */
  toolNames: readonly string[];
  /** HMAC key of the list cursors; the same on every replica. */
  cursorKey: Uint8Array;
  /**
   * Who may create workspaces; the operator bearer token unless given. The console's in-process caller passes a
   * check of its session's principal, so it reaches the same route without ever holding the token.
   */
  operatorGuard?: MiddlewareHandler<AppEnv>;
}

/**
 * The admin API (docs/admin-api.md), one module per resource. Each route validates, calls one workspace use case and
 * renders its answer; the use cases record the audit rows. Workspace routes sit behind the workspace guards (mounted
 * by the app) plus their own capability or admin guard; creating and listing workspaces needs the operator. Routes are
 * chained so their types accumulate into `AdminApi`, the contract the typed clients are checked against.
 */
export function adminRoutes(deps: AdminDeps) {
  const cursors = createAdminCursors(deps.cursorKey);
  const recorder = adminAuditRecorder(deps.audit);
  const opened: AdminWorkspaces & { cursors: typeof cursors } = {
    workspaceDeps: deps.workspaceDeps,
    recorder,
    cursors,
  };

  const ws = new Hono<AppEnv>()
    .route('/', runRoutes(opened))
    .route('/', flowRoutes(opened))
    .route('/', feedbackRoutes(opened))
    .route('/', connectionRoutes(opened))
    .route('/', serviceAccountRoutes(opened))
    .route('/', policyRoutes({ ...opened, toolNames: deps.toolNames }))
    .route('/', auditRoutes(opened))
    .route('/', reviewRoutes(opened))
    .route('/', toolsPreviewRoutes(opened))
    .route('/', usageRoutes(opened));

  const operator = deps.operatorGuard ?? operatorGuard(deps.authenticator);
  return new Hono<AppEnv>()
    .route('/', workspaceRoutes({ ...opened, operatorGuard: operator }))
    .route('/', operatorUsageRoutes({ ...opened, operatorGuard: operator }))
    .route('/api/workspaces/:ws', ws);
}

/** The admin API's routes and answers, for typed clients (`hc<AdminApi>`). */
export type AdminApi = ReturnType<typeof adminRoutes>;
