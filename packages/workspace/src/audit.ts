/**
 * The audit port: every use case that mutates records one event through the recorder its workspace was opened
 * with. Without a recorder nothing is recorded — the MCP path opens workspaces that way, because the dispatcher's
 * one row per tool call is already the record of what the tool did (docs/architecture.md, "Audit").
 */
import { isAppError } from '@flowgate/core';
import type { Actor } from './scope.js';

export type AuditOutcome = 'ok' | 'error';

/** One mutation as the domain records it; arguments as given (the recorder's sink redacts them). */
export interface AuditEvent {
  workspaceId: string;
  actor: Actor;
  requestId: string | null;
  action: string;
  outcome: AuditOutcome;
  arguments: unknown;
  errorCode: string | null;
  runId: string | null;
  durationMs: number;
}

/** Where audit events go; never blocks and never throws. */
export interface AuditRecorder {
  record(event: AuditEvent): void;
}

/** Who acts where, and where their events go: what `audited` needs of a scope. */
export interface AuditScope {
  workspaceId: string;
  actor: Actor;
  requestId?: string | null;
  audit?: AuditRecorder | undefined;
}

/** How a use case's outcome is described in its event. */
export interface AuditDescription<T> {
  /** The event's arguments and, when the value says so, its run and outcome (default ok, with no error code). */
  ok(value: T): {
    arguments: unknown;
    runId?: string | null;
    outcome?: AuditOutcome;
    errorCode?: string | null;
  };
  /**
   * Arguments of the event recorded when the use case throws; without it a refused mutation records nothing (the
   * admin API has only ever audited the ones that happened, runs excepted).
   */
  failed?: unknown;
}

/** Runs `act` and records its event with the time it took. */
export async function audited<T>(
  scope: AuditScope,
  action: string,
  describe: AuditDescription<T>,
  act: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const record = (event: Pick<AuditEvent, 'outcome' | 'arguments' | 'errorCode' | 'runId'>) =>
    scope.audit?.record({
      workspaceId: scope.workspaceId,
      actor: scope.actor,
      requestId: scope.requestId ?? null,
      action,
      durationMs: Math.round(performance.now() - started),
      ...event,
    });
  let value: T;
  try {
    value = await act();
  } catch (error) {
    if (describe.failed !== undefined) {
      record({
        outcome: 'error',
        arguments: describe.failed,
        errorCode: isAppError(error) ? error.code : 'internal_error',
        runId: null,
      });
    }
    throw error;
  }
  const ok = describe.ok(value);
  record({
    outcome: ok.outcome ?? 'ok',
    arguments: ok.arguments,
    errorCode: ok.errorCode ?? null,
    runId: ok.runId ?? null,
  });
  return value;
}
