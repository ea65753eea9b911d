import { FLOW_SLUG_PATTERN, workspaceIdSchema } from '@flowgate/core';
import { InvalidArgumentError } from 'commander';
import { CliError } from './cli-io.js';

/** Option parsers shared by the command modules: commander reports their errors as usage errors. */

const SLUG_RULE = 'a flow slug is letters, digits, - and _, starting with a letter (e.g. enrich-company)';

export function parseWorkspaceId(value: string): string {
  const parsed = workspaceIdSchema.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError('workspace id must match ^[a-z0-9][a-z0-9-]{1,62}$');
  return parsed.data;
}

export function parseSlug(value: string): string {
  if (!FLOW_SLUG_PATTERN.test(value)) throw new InvalidArgumentError(SLUG_RULE);
  return value;
}

/** For positional arguments, checked inside the action: reported like every other CLI error. */
export function requireSlug(value: string): string {
  if (!FLOW_SLUG_PATTERN.test(value)) throw new CliError('invalid_request', SLUG_RULE);
  return value;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** A quota: a positive integer, or `none` to remove it (a string: commander turns a parsed null into ''). */
export function parseQuota(value: string): number | 'none' {
  if (value.trim().toLowerCase() === 'none') return 'none';
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('expected a positive integer, or none to remove the quota');
  return n;
}
