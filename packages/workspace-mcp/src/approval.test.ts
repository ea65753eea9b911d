import { toBase64Url, utf8Bytes } from '@flowgate/core';
import { describe, expect, it } from 'vitest';
import {
  APPROVAL_TTL_MS,
  ApprovalGate,
  type ApprovalSubject,
  approvalStateKey,
  declaresFormElicitation,
  InputRequired,
  openApprovalState,
  type StateBinding,
  sealApprovalState,
} from './approval.js';
import type { McpPrincipal } from './context.js';
import { ToolFailure } from './tool.js';

const ALICE: McpPrincipal = { kind: 'service_account', id: 'sa-alice', name: 'alice', keyId: 'k1' };
const BOB: McpPrincipal = { kind: 'service_account', id: 'sa-bob', name: 'bob', keyId: 'k2' };
const KEY = approvalStateKey('deployment-cursor-key');
const T0 = 1_800_000_000_000;
const HASH = 'a'.repeat(64);

const binding = (over: Partial<StateBinding> = {}): StateBinding => ({
  workspaceId: 'ws-1',
  principal: ALICE,
  tool: 'release_flow',
  args: { flow_slug: 'enrich', release_note: 'v2' },
  textSha256: HASH,
  standing: 'live 1, latest 1',
  ...over,
});

describe('approval state sealing', () => {
  const state = sealApprovalState(KEY, binding(), T0);

  it('opens what it sealed, on any replica with the same deployment key, until the expiry', () => {
    expect(openApprovalState(approvalStateKey('deployment-cursor-key'), state, binding(), T0)).toEqual({
      ok: true,
      expiresAt: T0 + APPROVAL_TTL_MS,
    });
    expect(openApprovalState(KEY, state, binding(), T0 + APPROVAL_TTL_MS)).toEqual({
      ok: true,
      expiresAt: T0 + APPROVAL_TTL_MS,
    });
    // Argument order does not matter: the arguments are bound by a canonical digest.
    const reordered = binding({ args: { release_note: 'v2', flow_slug: 'enrich' } });
    expect(openApprovalState(KEY, state, reordered, T0)).toEqual({
      ok: true,
      expiresAt: T0 + APPROVAL_TTL_MS,
    });
  });

  it('refuses an expired state', () => {
    expect(openApprovalState(KEY, state, binding(), T0 + APPROVAL_TTL_MS + 1)).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuses a state under another key: a cursor key or another deployment', () => {
    expect(openApprovalState(approvalStateKey('other-deployment'), state, binding(), T0)).toEqual({
      ok: false,
      reason: 'invalid',
    });
    expect(openApprovalState(utf8Bytes('deployment-cursor-key'), state, binding(), T0)).toEqual({
      ok: false,
      reason: 'invalid',
    });
  });

  it('refuses a tampered payload, a tampered seal and junk', () => {
    const [payload, mac] = state.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const extended = toBase64Url(utf8Bytes(JSON.stringify({ ...decoded, x: decoded.x + 86_400_000 })));
    expect(openApprovalState(KEY, `${extended}.${mac}`, binding(), T0)).toEqual({
      ok: false,
      reason: 'invalid',
    });
    const flipped = `${payload}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(openApprovalState(KEY, flipped, binding(), T0)).toEqual({ ok: false, reason: 'invalid' });
    for (const junk of [undefined, null, 42, '', 'no-dot', '.x', 'x'.repeat(5000)])
      expect(openApprovalState(KEY, junk, binding(), T0)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses a state issued for another principal, workspace, tool or arguments', () => {
    for (const other of [
      binding({ principal: BOB }),
      binding({ principal: { ...ALICE, kind: 'user' } }),
      binding({ workspaceId: 'ws-2' }),
      binding({ tool: 'create_flow_draft' }),
      binding({ args: { flow_slug: 'enrich', release_note: 'v3' } }),
      binding({ args: { flow_slug: 'enrich', release_note: 'v2', version: 1 } }),
    ])
      expect(openApprovalState(KEY, state, other, T0)).toEqual({ ok: false, reason: 'foreign' });
  });

  it('reports a release made since (a replayed approval) with what stood then', () => {
    expect(openApprovalState(KEY, state, binding({ standing: 'live 2, latest 2' }), T0)).toEqual({
      ok: false,
      reason: 'moved',
      approvedStanding: 'live 1, latest 1',
    });
  });

  it('reports a changed definition with the sha256 that was approved', () => {
    expect(openApprovalState(KEY, state, binding({ textSha256: 'b'.repeat(64) }), T0)).toEqual({
      ok: false,
      reason: 'changed',
      approvedSha256: HASH,
    });
  });
});

describe('declaresFormElicitation', () => {
  it.each([
    [{ elicitation: {} }, true],
    [{ elicitation: { form: {} } }, true],
    [{ elicitation: { form: {}, url: {} } }, true],
    [{ elicitation: { url: {} } }, false],
    [{ elicitation: true }, false],
    [{ sampling: {} }, false],
    [{}, false],
    [null, false],
  ])('%j → %s', (caps, expected) => {
    expect(declaresFormElicitation(caps as Record<string, unknown> | null)).toBe(expected);
  });
});

describe('ApprovalGate', () => {
  const subject: ApprovalSubject = {
    tool: 'release_flow',
    args: { flow_slug: 'enrich' },
    textSha256: HASH,
    standing: 'live 1, latest 1',
    message: 'Release flow enrich: the draft becomes version 2',
    title: 'Release enrich as version 2',
  };
  const gate = (canElicit: boolean, now = T0, principal = ALICE) =>
    new ApprovalGate({ workspaceId: 'ws-1', principal, canElicit, key: () => KEY, now: () => now });

  function firstRound(): InputRequired {
    try {
      gate(true).confirm(subject);
    } catch (error) {
      if (error instanceof InputRequired) return error;
      throw error;
    }
    throw new Error('expected input_required');
  }

  function failure(g: ApprovalGate, s: ApprovalSubject = subject): ToolFailure {
    try {
      g.confirm(s);
    } catch (error) {
      if (error instanceof ToolFailure) return error;
      throw error;
    }
    throw new Error('expected a tool failure');
  }

  it('lets a client that cannot be asked proceed as before, and records nothing', () => {
    const g = gate(false);
    g.receive({ requestState: 'anything', inputResponses: { approve: { action: 'accept' } } });
    expect(g.confirm(subject)).toBeNull();
    expect(g.auditNote()).toBeNull();
  });

  it('asks with one form elicitation and a sealed state', () => {
    const asked = firstRound();
    expect(asked.toResult()).toEqual({
      resultType: 'input_required',
      inputRequests: {
        approve: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: subject.message,
            requestedSchema: {
              type: 'object',
              properties: { confirm: { type: 'boolean', title: subject.title, default: false } },
              required: ['confirm'],
            },
          },
        },
      },
      requestState: asked.requestState,
    });
    expect(openApprovalState(KEY, asked.requestState, binding({ args: subject.args }), T0)).toEqual({
      ok: true,
      expiresAt: T0 + APPROVAL_TTL_MS,
    });
  });

  it('grants an accepted, confirmed approval and records who approved', () => {
    const { requestState } = firstRound();
    const g = gate(true, T0 + 1000);
    g.receive({
      requestState,
      inputResponses: { approve: { action: 'accept', content: { confirm: true } } },
    });
    const record = {
      approvedBy: 'elicitation',
      principal: { kind: 'service_account', id: 'sa-alice' },
      textSha256: HASH,
    };
    expect(g.confirm(subject)).toEqual(record);
    expect(g.auditNote()).toEqual({ status: 'approved', ...record });
  });

  it('asks again when the retry lacks the answer or the state', () => {
    const { requestState } = firstRound();
    for (const params of [{ requestState }, { inputResponses: { approve: { action: 'accept' } } }, {}]) {
      const g = gate(true);
      g.receive(params);
      expect(() => g.confirm(subject)).toThrow(InputRequired);
      expect(g.auditNote()).toEqual({ status: 'requested', via: 'elicitation' });
    }
  });

  it.each([
    [{ action: 'decline' }, 'approval_declined', 'The user declined the approval; nothing was done.'],
    [{ action: 'cancel' }, 'approval_cancelled', 'The user dismissed the approval; nothing was done.'],
    [
      { action: 'accept', content: { confirm: false } },
      'approval_declined',
      'The approval form was submitted without ticking "Release enrich as version 2"; nothing was done.',
    ],
    [
      { action: 'accept' },
      'approval_declined',
      'The approval form was submitted without ticking "Release enrich as version 2"; nothing was done.',
    ],
    [
      { action: 'maybe' },
      'approval_invalid',
      'The answer to the approval form is not an elicitation result; nothing was done. Call release_flow again.',
    ],
  ])('refuses the answer %j as %s', (answer, code, message) => {
    const { requestState } = firstRound();
    const g = gate(true);
    g.receive({ requestState, inputResponses: { approve: answer } });
    const f = failure(g);
    expect({ code: f.code, message: f.message }).toEqual({ code, message });
    expect(g.granted).toBeNull();
  });

  it('refuses an expired, foreign, tampered or stale state even with an accept', () => {
    const { requestState } = firstRound();
    const accept = { approve: { action: 'accept', content: { confirm: true } } };
    const expired = gate(true, T0 + APPROVAL_TTL_MS + 1);
    expired.receive({ requestState, inputResponses: accept });
    expect(failure(expired).code).toBe('approval_expired');

    const bob = gate(true, T0, BOB);
    bob.receive({ requestState, inputResponses: accept });
    expect(failure(bob).message).toBe(
      'The requestState was issued for another request (other arguments, tool, workspace or caller); nothing was done. Call release_flow again to be asked anew.',
    );

    const tampered = gate(true);
    tampered.receive({ requestState: `${requestState}x`, inputResponses: accept });
    expect(failure(tampered).code).toBe('approval_invalid');

    const stale = gate(true);
    stale.receive({ requestState, inputResponses: accept });
    const f = failure(stale, { ...subject, textSha256: 'c'.repeat(64) });
    expect(f.code).toBe('approval_stale');
    expect(f.details).toEqual({ approvedSha256: HASH, currentSha256: 'c'.repeat(64) });

    const replayed = gate(true);
    replayed.receive({ requestState, inputResponses: accept });
    const moved = failure(replayed, { ...subject, standing: 'live 2, latest 2' });
    expect({ code: moved.code, message: moved.message }).toEqual({
      code: 'approval_stale',
      message:
        'A release happened since this was approved (then: live 1, latest 1; now: live 2, latest 2); nothing was done. Call release_flow again to be asked anew.',
    });
  });
});
