/**
 * Approval by elicitation (2026-07-28, "Multi Round-Trip Requests" and "Elicitation", form mode). A tool that changes
 * what runs for everyone (release_flow) asks the user itself when the client can show a form: the first call answers
 * `input_required` with one `elicitation/create` form and a sealed `requestState`; the client's retry carries the
 * same arguments, the echoed state and the user's answer. Nothing is stored between the two round trips: the state
 * is HMAC-sealed and bound to the workspace, the principal, the tool, its arguments, the definition text's sha256 and
 * an expiry, so a forged, replayed, foreign or stale approval releases nothing. Clients that cannot be asked (every
 * 2025-era client, and 2026 clients that did not declare form elicitation) are served exactly as before: the
 * annotations ask their host to confirm.
 */
import {
  fromBase64,
  hkdfSha256,
  hmacSha256With,
  randomBytes,
  sha256Hex,
  timingSafeEqualText,
  toBase64Url,
  utf8Bytes,
  utf8Text,
} from '@flowgate/core';
import { z } from 'zod';
import type { McpPrincipal } from './context.js';
import { isJsonObject } from './protocol.js';
import { ToolFailure } from './tool.js';

/** How long a shown approval form may be answered. */
export const APPROVAL_TTL_MS = 10 * 60_000;
/** The one `inputRequests` key an approval uses. */
export const APPROVAL_INPUT_KEY = 'approve';
/** The form's one field: the user ticks it to approve. */
export const APPROVAL_FIELD = 'confirm';
/** Longest `requestState` opened (a sealed state is a few hundred characters). */
const STATE_MAX_CHARS = 2048;
const MAC_BYTES = 32;
const STATE_VERSION = 1;

/** What the user is asked to approve, and what the approval is bound to. */
export interface ApprovalSubject {
  /** The tool asking (part of the binding). */
  tool: string;
  /** The validated arguments; the retry must carry the same ones. */
  args: unknown;
  /** The definition text that will go live: a different text at retry time is a changed draft. */
  textSha256: string;
  /**
   * Where things stood when the user was asked (release_flow: the live and latest versions, `live 3, latest 3`): a
   * release made since — the approved one included — refuses the state, so a replayed accept does nothing.
   */
  standing: string;
  /** Shown to the user: exactly what will happen. */
  message: string;
  /** The checkbox label. */
  title: string;
}

/** An approval as spent by the write it approved (see ApprovalGate.spend). */
export interface ApprovalSpend {
  stateSha256: string;
  expiresAt: Date;
}

/** The refusal of an approval presented again after it was spent. */
export function approvalUsedFailure(tool: string): ToolFailure {
  return new ToolFailure(
    'approval_used',
    `This approval was already used: an approval releases once, so this retry did nothing. Call ${tool} again to be asked anew.`,
    {},
  );
}

/** Who approved, as the audit row records it. */
export interface ApprovalRecord {
  approvedBy: 'elicitation';
  principal: { kind: McpPrincipal['kind']; id: string };
  textSha256: string;
}

/** The first round trip: the client must ask the user and retry (answered as an `input_required` result). */
export class InputRequired extends Error {
  constructor(
    readonly inputRequests: Record<string, unknown>,
    readonly requestState: string,
  ) {
    super('input required');
    this.name = 'InputRequired';
  }

  /** The 2026-07-28 InputRequiredResult. */
  toResult(): Record<string, unknown> {
    return {
      resultType: 'input_required',
      inputRequests: this.inputRequests,
      requestState: this.requestState,
    };
  }
}

/**
 * Whether a 2026-07-28 client declared form elicitation in `io.modelcontextprotocol/clientCapabilities`: an
 * `elicitation` object with `form`, or an empty one (which the specification reads as form only). `url` alone is not
 * enough: an approval is a form.
 */
export function declaresFormElicitation(capabilities: Record<string, unknown> | null | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (!isJsonObject(elicitation)) return false;
  if (isJsonObject(elicitation.form)) return true;
  return !('form' in elicitation) && !('url' in elicitation);
}

// ---- the sealed state -------------------------------------------------------------------------------------

/** What a state is bound to, besides its expiry. */
export interface StateBinding {
  workspaceId: string;
  principal: McpPrincipal;
  tool: string;
  args: unknown;
  textSha256: string;
  standing: string;
}

export type OpenedState =
  | { ok: true; expiresAt: number }
  | { ok: false; reason: 'invalid' | 'expired' | 'foreign' }
  | { ok: false; reason: 'changed'; approvedSha256: string }
  | { ok: false; reason: 'moved'; approvedStanding: string };

const StatePayload = z.strictObject({
  v: z.literal(STATE_VERSION),
  w: z.string(),
  p: z.string(),
  t: z.string(),
  a: z.string(),
  h: z.string(),
  s: z.string(),
  x: z.number().int(),
});

// Drawn on first use, not at import: Workers forbids randomness in global scope.
let drawnKey: Uint8Array | null = null;

/**
 * The sealing key: derived from the deployment's cursor key (itself HKDF'd from the encryption key), so every replica
 * opens what another sealed, and a cursor or task id can never pass for an approval.
 */
export function approvalStateKey(cursorKey?: string | Uint8Array): Uint8Array {
  if (cursorKey === undefined) drawnKey ??= randomBytes(32);
  const base = cursorKey ?? (drawnKey as Uint8Array);
  return hkdfSha256(typeof base === 'string' ? utf8Bytes(base) : base, 'flowgate/mcp-approval-state/v1', 32);
}

/** JSON with object keys sorted, so the same arguments always give the same digest. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const principalOf = (p: McpPrincipal): string => `${p.kind}:${p.id}`;
const argsDigest = (args: unknown): string => sha256Hex(canonicalJson(args));

export function sealApprovalState(key: Uint8Array, binding: StateBinding, now: number): string {
  const payload = toBase64Url(
    utf8Bytes(
      JSON.stringify({
        v: STATE_VERSION,
        w: binding.workspaceId,
        p: principalOf(binding.principal),
        t: binding.tool,
        a: argsDigest(binding.args),
        h: binding.textSha256,
        s: binding.standing,
        x: now + APPROVAL_TTL_MS,
      }),
    ),
  );
  return `${payload}.${toBase64Url(hmacSha256With(key)(payload).subarray(0, MAC_BYTES))}`;
}

/**
 * Opens a state presented on a retry. Checked in this order: the seal (`invalid`), the expiry (`expired`), the
 * request it was issued for — workspace, principal, tool and arguments (`foreign`) — then the definition text
 * (`changed`, with the sha256 that was approved) and last what stood then (`moved`: a release happened since).
 */
export function openApprovalState(
  key: Uint8Array,
  state: unknown,
  expected: StateBinding,
  now: number,
): OpenedState {
  if (typeof state !== 'string' || state.length === 0 || state.length > STATE_MAX_CHARS)
    return { ok: false, reason: 'invalid' };
  const dot = state.indexOf('.');
  if (dot <= 0) return { ok: false, reason: 'invalid' };
  const payload = state.slice(0, dot);
  // Compared as text: base64url has spare bits in its last character, so decoding first would accept two spellings.
  const mac = toBase64Url(hmacSha256With(key)(payload).subarray(0, MAC_BYTES));
  if (!timingSafeEqualText(state.slice(dot + 1), mac)) return { ok: false, reason: 'invalid' };
  let parsed: z.infer<typeof StatePayload>;
  try {
    const result = StatePayload.safeParse(JSON.parse(utf8Text(fromBase64(payload))));
    if (!result.success) return { ok: false, reason: 'invalid' };
    parsed = result.data;
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  if (now > parsed.x) return { ok: false, reason: 'expired' };
  if (
    parsed.w !== expected.workspaceId ||
    parsed.p !== principalOf(expected.principal) ||
    parsed.t !== expected.tool ||
    parsed.a !== argsDigest(expected.args)
  )
    return { ok: false, reason: 'foreign' };
  if (parsed.h !== expected.textSha256) return { ok: false, reason: 'changed', approvedSha256: parsed.h };
  if (parsed.s !== expected.standing) return { ok: false, reason: 'moved', approvedStanding: parsed.s };
  return { ok: true, expiresAt: parsed.x };
}

// ---- the gate a tool calls --------------------------------------------------------------------------------

const ElicitAnswer = z.looseObject({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});

/** The request's identity and what its client can do. */
export interface ApprovalRequest {
  workspaceId: string;
  principal: McpPrincipal;
  /** This request's client declared form elicitation (2026-07-28 only). */
  canElicit: boolean;
  key: () => Uint8Array;
  now?: () => number;
}

/**
 * One tools/call's approval: `confirm` asks the user (first round trip), checks their answer (the retry), or, for a
 * client that cannot be asked, returns null and the tool proceeds as it always did. The approval it grants is kept
 * for the audit row.
 */
export class ApprovalGate {
  granted: ApprovalRecord | null = null;
  /**
   * What the granted approval spends: the SHA-256 of its sealed state and its expiry. The tool hands it to the write
   * it approves, which records it in the same transaction, so a state approves one write only, on any replica.
   */
  spend: ApprovalSpend | null = null;
  /** The form was sent (this call answered `input_required`). */
  asked = false;
  /** `params.requestState` and `params.inputResponses` of the tools/call, as sent (unvalidated). */
  private retry: { requestState: unknown; inputResponses: unknown } = {
    requestState: undefined,
    inputResponses: undefined,
  };
  constructor(private readonly request: ApprovalRequest) {}

  /** tools/call hands in its params: the retry fields of a multi round-trip request live beside the arguments. */
  receive(params: Record<string, unknown>): void {
    this.retry = { requestState: params.requestState, inputResponses: params.inputResponses };
  }

  get canElicit(): boolean {
    return this.request.canElicit;
  }

  /** The SHA-256 of the `requestState` this retry presents (any string; null when none), to look up as spent. */
  presentedState(): string | null {
    const state = this.retry.requestState;
    return this.request.canElicit && typeof state === 'string' && state.length > 0 ? sha256Hex(state) : null;
  }

  /** The approved write did not happen (its approval was already spent): the call records no approval. */
  revoke(): void {
    this.granted = null;
    this.spend = null;
  }

  /**
   * Null: this client cannot be asked (proceed as before). A record: the user approved exactly this subject.
   * Throws `InputRequired` to ask, and a `ToolFailure` for a declined, cancelled, forged, expired or stale approval.
   */
  confirm(subject: ApprovalSubject): ApprovalRecord | null {
    const r = this.request;
    if (!r.canElicit) return null;
    const now = (r.now ?? Date.now)();
    const binding: StateBinding = {
      workspaceId: r.workspaceId,
      principal: r.principal,
      tool: subject.tool,
      args: subject.args,
      textSha256: subject.textSha256,
      standing: subject.standing,
    };
    // A state is only ever sent with a form, so a retry without one (or without its answer) is asked again.
    const { requestState, inputResponses } = this.retry;
    const answer = isJsonObject(inputResponses) ? inputResponses[APPROVAL_INPUT_KEY] : undefined;
    if (requestState === undefined || answer === undefined) throw this.ask(subject, binding, now);
    const opened = openApprovalState(r.key(), requestState, binding, now);
    if (!opened.ok) throw stateFailure(subject, opened);
    const parsed = ElicitAnswer.safeParse(answer);
    if (!parsed.success)
      throw new ToolFailure(
        'approval_invalid',
        `The answer to the approval form is not an elicitation result; nothing was done. Call ${subject.tool} again.`,
        {},
      );
    const { action, content } = parsed.data;
    if (action !== 'accept')
      throw new ToolFailure(
        action === 'decline' ? 'approval_declined' : 'approval_cancelled',
        `The user ${action === 'decline' ? 'declined' : 'dismissed'} the approval; nothing was done.`,
        { action },
      );
    if (content?.[APPROVAL_FIELD] !== true)
      throw new ToolFailure(
        'approval_declined',
        `The approval form was submitted without ticking "${subject.title}"; nothing was done.`,
        { action },
      );
    this.granted = {
      approvedBy: 'elicitation',
      principal: { kind: r.principal.kind, id: r.principal.id },
      textSha256: subject.textSha256,
    };
    this.spend = { stateSha256: sha256Hex(requestState as string), expiresAt: new Date(opened.expiresAt) };
    return this.granted;
  }

  /** What the call's audit row adds to its arguments: the approval granted, or that one was asked for. */
  auditNote(): Record<string, unknown> | null {
    if (this.granted) return { status: 'approved', ...this.granted };
    return this.asked ? { status: 'requested', via: 'elicitation' } : null;
  }

  private ask(subject: ApprovalSubject, binding: StateBinding, now: number): InputRequired {
    this.asked = true;
    const form = {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: subject.message,
        requestedSchema: {
          type: 'object',
          properties: {
            [APPROVAL_FIELD]: { type: 'boolean', title: subject.title, default: false },
          },
          required: [APPROVAL_FIELD],
        },
      },
    };
    return new InputRequired(
      { [APPROVAL_INPUT_KEY]: form },
      sealApprovalState(this.request.key(), binding, now),
    );
  }
}

function stateFailure(subject: ApprovalSubject, opened: Exclude<OpenedState, { ok: true }>): ToolFailure {
  const again = `Call ${subject.tool} again to be asked anew.`;
  switch (opened.reason) {
    case 'expired':
      return new ToolFailure(
        'approval_expired',
        `The approval expired (it is valid for ${APPROVAL_TTL_MS / 60_000} minutes); nothing was done. ${again}`,
        {},
      );
    case 'changed':
      return new ToolFailure(
        'approval_stale',
        `The definition changed since it was approved (approved sha256 ${opened.approvedSha256}, now ${subject.textSha256}); nothing was done. ${again}`,
        { approvedSha256: opened.approvedSha256, currentSha256: subject.textSha256 },
      );
    case 'moved':
      return new ToolFailure(
        'approval_stale',
        `A release happened since this was approved (then: ${opened.approvedStanding}; now: ${subject.standing}); nothing was done. ${again}`,
        { approvedStanding: opened.approvedStanding, currentStanding: subject.standing },
      );
    case 'foreign':
      return new ToolFailure(
        'approval_invalid',
        `The requestState was issued for another request (other arguments, tool, workspace or caller); nothing was done. ${again}`,
        {},
      );
    default:
      return new ToolFailure(
        'approval_invalid',
        `The requestState is not one this server issued (altered or malformed); nothing was done. ${again}`,
        {},
      );
  }
}
