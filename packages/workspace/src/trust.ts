/**
 * The one decision of whether a model may see a flow's authored text (names, descriptions, labels, examples,
 * defaults). Such text is written by whoever authored the flow — for an installed flow, another workspace — so it is
 * untrusted unless the party answerable for this workspace's agents reviewed it and opted in: the workspace admin
 * for its own flows, the installer for an installation (never the source's author, who cannot vouch for itself). An
 * opt-in covers exactly the metadata reviewed (names, descriptions, interfaces, schemas — the model without code; its
 * sha256 is pinned), so a release that changes only code keeps it, while a release that changes any of that metadata,
 * or a draft — which any `flows.manage` key may rewrite — is untrusted again until someone reviews it. See docs/flows.md, "Metadata safety".
 */

/** Which trust decision applies to a flow's authored text. */
export type TrustDecision =
  | 'omitted_untrusted'
  | 'trusted_installer_opt_in'
  | 'trusted_workspace_admin_opt_in';

/** Why text an opt-in exists for is omitted anyway. */
export type UntrustedReason = 'changed_since_review' | 'draft';

export interface MetadataTrust {
  decision: TrustDecision;
  /** Set when an opt-in exists but does not cover the definition described. */
  reason: UntrustedReason | null;
}

/** Who may opt in for a flow, whether they did, and the metadata digest of the definition they reviewed. */
export interface OptIn {
  by: 'owner' | 'installer';
  optedIn: boolean;
  reviewedSha256: string | null;
}

/**
 * The decision for one definition: `pinMatches` is whether its metadata is identical to that reviewed, `draft` whether
 * it is a draft (never covered, whatever its digest).
 */
export function metadataTrust(input: {
  by: 'owner' | 'installer';
  optedIn: boolean;
  pinMatches: boolean;
  draft: boolean;
}): MetadataTrust {
  if (!input.optedIn) return { decision: 'omitted_untrusted', reason: null };
  if (input.draft) return { decision: 'omitted_untrusted', reason: 'draft' };
  if (!input.pinMatches) return { decision: 'omitted_untrusted', reason: 'changed_since_review' };
  return {
    decision: input.by === 'installer' ? 'trusted_installer_opt_in' : 'trusted_workspace_admin_opt_in',
    reason: null,
  };
}

/** The decision for a definition given an opt-in: the definition's metadata digest against the pin. */
export function trustFor(
  optIn: OptIn,
  definition: { version: number | null; metadataSha256: string },
): MetadataTrust {
  return metadataTrust({
    by: optIn.by,
    optedIn: optIn.optedIn,
    pinMatches: optIn.reviewedSha256 !== null && optIn.reviewedSha256 === definition.metadataSha256,
    draft: definition.version === null,
  });
}

export function isTrusted(trust: MetadataTrust): boolean {
  return trust.decision !== 'omitted_untrusted';
}
