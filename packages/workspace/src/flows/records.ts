/**
 * What the flow use cases hand out. Authored text (names, descriptions, tags, titles) is raw here, because search
 * matches on it; every record carries the trust decision that says whether a model may see it (trust.ts), and the
 * MCP layer shows it only then.
 */
import type { ConnectionType } from '@flowgate/core';
import type { FlowModel } from '@flowgate/flows';
import type { MetadataTrust, OptIn } from '../trust.js';

/** Stored definitions a caller can name; an explicit version is the other way to pick one. */
export const FLOW_SOURCES = ['draft', 'latest', 'live', 'active'] as const;
export type FlowSource = (typeof FLOW_SOURCES)[number];
export type FlowSelector = { source: FlowSource } | { version: number };

/** An installation of another workspace's public flow into this one. */
export interface FlowInstallationRecord {
  id: string;
  sourceWorkspaceId: string;
  versionPolicy: 'pinned' | 'track-latest';
  pinnedVersion: number | null;
  /** The released version this installation runs now, resolved from its policy (null when none may run). */
  activeVersion: number | null;
  enabled: boolean;
  /** `:requires` slot → a connection id of this workspace. */
  slotBindings: Record<string, string>;
}

/** A flow this workspace can see: its own, or an installed public flow (`installation` set). */
export interface FlowRecord {
  slug: string;
  installation: FlowInstallationRecord | null;
  /** Authored, untrusted: of the definition the record describes (own: live, else the draft; installed: active). */
  name: string | null;
  description: string | null;
  tags: string[];
  hasDraft: boolean;
  draftUpdatedAt: string | null;
  latestVersion: number | null;
  liveVersion: number | null;
  isPublic: boolean;
  /** Tool names of the `:mcp` interfaces of the definition the record describes. */
  mcpToolNames: string[];
  /** Who may opt in to show authored text (the owner, or for an installation the installer) and what they reviewed. */
  optIn: OptIn;
  /** The decision for the definition the record describes. */
  trust: MetadataTrust;
}

/** One stored definition: the draft, or a released version (`version` set). */
export interface FlowDefinitionRecord {
  slug: string;
  installationId: string | null;
  /** `null` for the draft. */
  version: number | null;
  literal: string;
  literalSha256: string;
  /** Digest of the model's metadata (everything but code): what a trust opt-in is pinned to. */
  metadataSha256: string;
  model: FlowModel;
  updatedAt: string;
  releaseNote: string | null;
}

/** A callable `:mcp` interface as search finds it. Authored title and description are raw. */
export interface FlowToolHitRecord {
  flowSlug: string;
  toolName: string;
  installationId: string | null;
  /** Which definition declares it: the live version (or an installation's active one), or only the draft. */
  source: 'live' | 'draft';
  title: string | null;
  description: string | null;
  trust: MetadataTrust;
  /**
   * Browsing with drafts, where each own tool is listed once: how the flow's draft compares with the live row
   * (`same`, `differs`, `absent`: the draft no longer declares it), or `only` for a tool only the draft declares.
   * Null in every other listing.
   */
  draft: 'same' | 'differs' | 'absent' | 'only' | null;
}

/** A `:requires` slot binding with what is known about the bound connection (no live check, never secrets). */
export interface SlotBindingRecord {
  slot: string;
  /**
   * Where the binding was made: the flow's live or draft bindings (a draft run falls back to live per slot), or the
   * installation's.
   */
  boundFor: 'live' | 'draft' | 'installation';
  connection: {
    id: string;
    name: string;
    type: ConnectionType;
    status: 'active' | 'disabled';
    /**
     * Last stored health check, if any; for an mcp-server checked successfully, the tool names it listed (at most the
     * stored bound) and how many it listed in all.
     */
    health: { ok: boolean; checkedAt: string; mcp?: { tools: string[]; toolCount: number } } | null;
  } | null;
}

/** One page of a list: `nextAfter` is a raw position the caller seals into its own opaque cursor. */
export interface Page<T> {
  items: T[];
  nextAfter: string | null;
}
