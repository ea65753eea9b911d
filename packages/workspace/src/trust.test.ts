import { describe, expect, it } from 'vitest';
import { isTrusted, type MetadataTrust, metadataTrust, type OptIn, trustFor } from './trust.js';

const omitted = (reason: MetadataTrust['reason']): MetadataTrust => ({
  decision: 'omitted_untrusted',
  reason,
});
const ADMIN: MetadataTrust = { decision: 'trusted_workspace_admin_opt_in', reason: null };
const INSTALLER: MetadataTrust = { decision: 'trusted_installer_opt_in', reason: null };

describe('metadataTrust', () => {
  // Every combination of its four inputs, written out: [by, optedIn, pinMatches, draft] → decision.
  const TABLE: Array<[OptIn['by'], boolean, boolean, boolean, MetadataTrust]> = [
    ['owner', false, false, false, omitted(null)],
    ['owner', false, false, true, omitted(null)],
    ['owner', false, true, false, omitted(null)],
    ['owner', false, true, true, omitted(null)],
    ['owner', true, false, false, omitted('changed_since_review')],
    ['owner', true, false, true, omitted('draft')],
    ['owner', true, true, false, ADMIN],
    ['owner', true, true, true, omitted('draft')],
    ['installer', false, false, false, omitted(null)],
    ['installer', false, false, true, omitted(null)],
    ['installer', false, true, false, omitted(null)],
    ['installer', false, true, true, omitted(null)],
    ['installer', true, false, false, omitted('changed_since_review')],
    ['installer', true, false, true, omitted('draft')],
    ['installer', true, true, false, INSTALLER],
    ['installer', true, true, true, omitted('draft')],
  ];

  it.each(TABLE)(
    'by %s, opted in %s, pin matches %s, draft %s',
    (by, optedIn, pinMatches, draft, expected) => {
      expect(metadataTrust({ by, optedIn, pinMatches, draft })).toEqual(expected);
    },
  );

  it('covers every combination once', () => {
    const keys = new Set(TABLE.map(([by, o, p, d]) => `${by}/${o}/${p}/${d}`));
    expect(keys.size).toBe(16);
  });
});

describe('trustFor', () => {
  const REVIEWED = 'a'.repeat(64);
  const OTHER = 'b'.repeat(64);
  const optIn = (by: OptIn['by'], optedIn: boolean, reviewedSha256: string | null): OptIn => ({
    by,
    optedIn,
    reviewedSha256,
  });

  it('trusts exactly the released definition that was reviewed, for whoever may opt in', () => {
    expect(trustFor(optIn('owner', true, REVIEWED), { version: 1, metadataSha256: REVIEWED })).toEqual(ADMIN);
    expect(trustFor(optIn('installer', true, REVIEWED), { version: 3, metadataSha256: REVIEWED })).toEqual(
      INSTALLER,
    );
  });

  it('says a later release changed since the review', () => {
    expect(trustFor(optIn('owner', true, REVIEWED), { version: 2, metadataSha256: OTHER })).toEqual(
      omitted('changed_since_review'),
    );
    expect(trustFor(optIn('installer', true, REVIEWED), { version: 2, metadataSha256: OTHER })).toEqual(
      omitted('changed_since_review'),
    );
  });

  it('never covers a draft, even one byte-identical to the reviewed version', () => {
    expect(trustFor(optIn('owner', true, REVIEWED), { version: null, metadataSha256: REVIEWED })).toEqual(
      omitted('draft'),
    );
  });

  it('treats an opt-in without a pinned digest as covering nothing', () => {
    expect(trustFor(optIn('owner', true, null), { version: 1, metadataSha256: REVIEWED })).toEqual(
      omitted('changed_since_review'),
    );
  });

  it('omits without a reason when nobody opted in, whatever the digest', () => {
    for (const by of ['owner', 'installer'] as const) {
      expect(trustFor(optIn(by, false, REVIEWED), { version: 1, metadataSha256: REVIEWED })).toEqual(
        omitted(null),
      );
      expect(trustFor(optIn(by, false, null), { version: null, metadataSha256: REVIEWED })).toEqual(
        omitted(null),
      );
    }
  });
});

describe('isTrusted', () => {
  it('is true for the opt-in decisions only', () => {
    expect(isTrusted(ADMIN)).toBe(true);
    expect(isTrusted(INSTALLER)).toBe(true);
    expect(isTrusted(omitted(null))).toBe(false);
    expect(isTrusted(omitted('draft'))).toBe(false);
    expect(isTrusted(omitted('changed_since_review'))).toBe(false);
  });
});
