import { sha256Hex } from '@flowgate/core';
import type { FlowModel } from '@flowgate/flows';

/**
 * The digests a stored definition is known by: its literal's bytes, and its metadata (what a trust opt-in is pinned
 * to). Pure functions: the same model always gives the same digest, whichever process computes it.
 */

/** The sha256 (hex) of a definition literal's UTF-8 bytes. */
export function literalSha256(literal: string): string {
  return sha256Hex(literal);
}

/** JSON with object keys sorted and undefined members left out, so equal models give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What a metadata trust opt-in covers: the model without its code (the `:flow` body, the steps written in it and the
 * functions' code) — slug, name, description, tags, slots, invocations with their input schemas, interfaces, function
 * descriptions, concurrency and visibility. Authored text a model may be shown lives here, never in code, so a release
 * that changes only code keeps an opt-in and one that changes any of this drops it. Comments of the literal are not
 * covered: they are never shown as trusted (a definition is always served marked untrusted).
 */
export function flowMetadata(model: FlowModel): Omit<FlowModel, 'flow' | 'steps' | 'functions'> & {
  functions: Array<{ id: string; description?: string | undefined }>;
} {
  const { flow: _flow, steps: _steps, functions, ...rest } = model;
  return { ...rest, functions: functions.map((f) => ({ id: f.id, description: f.description })) };
}

/** The sha256 (hex) of a model's metadata (`flowMetadata`) as canonical JSON: what a trust opt-in is pinned to. */
export function metadataSha256(model: FlowModel): string {
  return sha256Hex(canonicalJson(flowMetadata(model)));
}
