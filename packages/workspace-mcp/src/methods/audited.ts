/**
 * The one wrapper every audited method runs in (tools/call, tasks/cancel, resources/read, prompts/get): it times the
 * call, tells the method span its verdict and writes exactly one audit entry, whatever happens inside. Handlers only
 * state the facts they learn (the run they touched, the failure's audit code); none builds an entry or a span.
 */
import { auditText, storableText } from '../audit-preview.js';
import type { McpAuditEntry } from '../context.js';
import { LIMITS } from '../limits.js';
import { isJsonObject } from '../protocol.js';
import type { Blocker } from '../schemas.js';
import { reportCall } from '../telemetry.js';
import type { MethodHandler, Params, Scope } from './scope.js';

/** Most resource URIs one audit entry keeps (a tool reports a handful; more is a bug or noise). */
const AUDIT_MAX_RESOURCE_URIS = 20;

/** What names an audited call; known once its parameters are valid (a call refused before that is not audited). */
export interface CallSubject {
  kind: McpAuditEntry['kind'];
  action: string;
  /** The redacted arguments, read when the call ends so they can use what the call learned (secret inputs, run). */
  arguments: (call: AuditedCall) => unknown;
  resourceUris?: string[];
  runId?: string | null;
}

/** The facts of one audited call; the handler updates them as it learns them. */
export class AuditedCall {
  kind: McpAuditEntry['kind'];
  resourceUris: string[];
  runId: string | null;
  /** How the call ended when it returned (a tool error result or a block is not `ok`). */
  outcome: McpAuditEntry['outcome'] = 'ok';
  errorCode: string | null = null;
  blockers: Blocker[] | null = null;
  /** The catalog tool that gave the verdict, for the blocked-calls counter. */
  tool: string | null = null;
  /** The audit code of a failure the handler throws; `internal_error` for anything unforeseen. */
  private failure = 'internal_error';

  constructor(readonly subject: CallSubject) {
    this.kind = subject.kind;
    this.resourceUris = subject.resourceUris ?? [];
    this.runId = subject.runId ?? null;
  }

  /** Records `code` as the reason of the failure about to be thrown, and returns the error to throw. */
  fail<E>(code: string, error: E): E {
    this.failure = code;
    return error;
  }

  /** The verdict of a call that threw. */
  failed(): void {
    this.outcome = 'error';
    this.errorCode = this.failure;
    this.blockers = null;
  }
}

export type AuditedHandler = (params: Params, scope: Scope, call: AuditedCall) => Promise<unknown> | unknown;

/**
 * A method audited once per call: `subject` checks the parameters and names the call (what it throws is answered
 * and not audited), then `run` serves it.
 */
export function audited(
  subject: (params: Params, scope: Scope) => CallSubject,
  run: AuditedHandler,
): MethodHandler {
  return async (params, scope) => {
    const start = performance.now();
    const call = new AuditedCall(subject(params, scope));
    try {
      return await run(params, scope, call);
    } catch (error) {
      call.failed();
      throw error;
    } finally {
      reportCall(call.tool, call.outcome, call.errorCode, call.blockers?.map((b) => b.reason) ?? []);
      scope.verdict.outcome = call.outcome;
      audit(scope, {
        kind: call.kind,
        action: call.subject.action,
        // Bounded before anything else touches the unvalidated arguments (redaction is not linear on hostile text).
        arguments: call.subject.arguments(call),
        reason: reasonFrom(params),
        outcome: call.outcome,
        errorCode: call.errorCode,
        blockers: call.blockers,
        resourceUris: call.resourceUris,
        runId: call.runId,
        durationMs: Math.max(0, Math.round(performance.now() - start)),
      });
    }
  };
}

/** `params._meta.reason`, redacted and bounded. */
function reasonFrom(params: Params): string | null {
  const meta = params._meta;
  if (!isJsonObject(meta) || typeof meta.reason !== 'string') return null;
  const reason = meta.reason.trim();
  return reason ? auditText(reason, LIMITS.reasonMaxChars) || null : null;
}

function audit(
  scope: Scope,
  entry: Omit<McpAuditEntry, 'clientName' | 'clientVersion' | 'protocolVersion'>,
): void {
  const sink = scope.request.audit;
  if (!sink) return;
  const client = scope.clientInfo;
  try {
    // Every client-influenced string is bounded, redacted and storable here, whatever the call site did.
    sink({
      ...entry,
      action: auditText(entry.action, LIMITS.resourceUriMaxChars),
      errorCode: entry.errorCode === null ? null : storableText(entry.errorCode),
      resourceUris: entry.resourceUris
        .slice(0, AUDIT_MAX_RESOURCE_URIS)
        .map((uri) => auditText(uri, LIMITS.resourceUriMaxChars)),
      clientName: client ? auditText(client.name, 200) : null,
      clientVersion: client?.version ? auditText(client.version, 100) : null,
      protocolVersion: scope.protocolVersion,
    });
  } catch (error) {
    // Auditing must never turn a served call into a failure; the gateway's sink reports its own trouble.
    scope.request.onError?.(error);
  }
}
