/** What an admin reviews before opting in to a flow's metadata trust (trust.ts has the decision itself). */
import { isTrusted } from '../trust.js';
import type { OpenFlow } from './index.js';

export interface TrustReview {
  /** The version an opt-in would pin: an own flow's live version, or the version an installation runs now. */
  version: number | null;
  /** Its text, to review; null when there is none (not released, or an installation that cannot run). */
  literal: string | null;
  /** Whether the current opt-in (if any) covers exactly this text's metadata. */
  trusted: boolean;
}

export async function trustReview(flow: OpenFlow): Promise<TrustReview> {
  const definition = await flow.definitionFor('live');
  return {
    version: definition?.version ?? null,
    literal: definition?.literal ?? null,
    // The record's decision is the one for this same definition (own: live; installed: the one it runs).
    trusted: definition !== null && isTrusted(flow.record.trust),
  };
}
