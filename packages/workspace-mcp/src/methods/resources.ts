/** resources/list, resources/templates/list and resources/read (the resources themselves: resources.ts). */
import { isAppError } from '@flowgate/core';
import { auditPreview } from '../audit-preview.js';
import { LIMITS } from '../limits.js';
import { invalidParams } from '../protocol.js';
import { listResources, listResourceTemplates, readResource } from '../resources.js';
import { type AuditedCall, audited, type CallSubject } from './audited.js';
import { listPage } from './pages.js';
import type { MethodHandler, Params, Scope } from './scope.js';

/** A run id as the audit keeps it: bounded, else none. */
export function boundedRunId(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= LIMITS.runIdMaxChars ? value : null;
}

/** The run a `flowgate://runs/{id}…` read is about, for the audit row. */
function runIdOf(uri: string): string | null {
  const match = /^flowgate:\/\/runs\/([A-Za-z0-9_-]+)(?:[/?#]|$)/.exec(uri);
  return match ? boundedRunId(match[1]) : null;
}

function readSubject(params: Params): CallSubject {
  const uri = params.uri;
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > LIMITS.resourceUriMaxChars) {
    throw invalidParams(
      `params.uri must be a resource URI of at most ${LIMITS.resourceUriMaxChars} characters`,
    );
  }
  return {
    kind: 'resources/read',
    action: uri,
    arguments: () => auditPreview({ uri }),
    resourceUris: [uri],
    runId: runIdOf(uri),
  };
}

async function read(params: Params, scope: Scope, call: AuditedCall): Promise<unknown> {
  const uri = params.uri as string;
  let contents: Awaited<ReturnType<typeof readResource>>;
  try {
    contents = await readResource(uri, scope);
  } catch (error) {
    if (!isAppError(error)) throw error;
    if (error.code === 'not_found') throw call.fail(error.code, invalidParams('Resource not found', { uri }));
    throw call.fail(error.code, error);
  }
  if (contents === null) throw call.fail('not_found', invalidParams('Resource not found', { uri }));
  return { contents: [contents] };
}

export const RESOURCE_METHODS: ReadonlyArray<readonly [string, MethodHandler]> = [
  [
    'resources/list',
    (p: Params, s: Scope) => listPage('resources', listResources(s), s, 'resources/list', p.cursor),
  ],
  [
    'resources/templates/list',
    (p: Params, s: Scope) =>
      listPage('resourceTemplates', listResourceTemplates(s), s, 'resources/templates/list', p.cursor),
  ],
  ['resources/read', audited(readSubject, read)],
];
