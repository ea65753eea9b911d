import type { Capability, Role } from './capabilities.js';

/**
 * Who is calling, after authentication. `capabilities` is already expanded (no `workspace.full`).
 * `workspaceIds` is the set of workspaces the principal may act in; `'*'` only for the operator.
 */
export type Principal =
  | {
      kind: 'service_account';
      id: string;
      workspaceId: string;
      keyId: string;
      name: string;
      status: 'active' | 'disabled';
      capabilities: ReadonlySet<Capability>;
      /** Token expiry used to bound caching, if any. */
      expiresAt: Date | null;
    }
  | {
      kind: 'user';
      id: string;
      /** Memberships carried by the JWT: workspace id → role or explicit capabilities. */
      workspaces: ReadonlyMap<string, { role: Role | null; capabilities: ReadonlySet<Capability> }>;
      expiresAt: Date | null;
      /** The token's `aud` values; which endpoints accept them is checked at each use, cached or not. */
      audiences?: readonly string[];
    }
  | { kind: 'operator'; id: 'operator' };

/** The principal as seen inside one workspace, after the workspace check passed. */
export interface WorkspaceAccess {
  workspaceId: string;
  principal: Principal;
  /** Expanded capabilities within this workspace. */
  capabilities: ReadonlySet<Capability>;
  /** May manage members, service accounts, keys, connections and policy. */
  isAdmin: boolean;
  keyId: string | null;
}

export type ServiceAccountPrincipal = Extract<Principal, { kind: 'service_account' }>;
export type UserPrincipal = Extract<Principal, { kind: 'user' }>;
export type OperatorPrincipal = Extract<Principal, { kind: 'operator' }>;
