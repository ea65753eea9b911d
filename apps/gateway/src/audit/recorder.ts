import type { AuditRecorder } from '@flowgate/workspace';
import type { AuditSink } from './queue.js';

/** The domain's audit port on the gateway's queue: its events are the admin rows (`kind: 'admin'`). */
export function adminAuditRecorder(sink: AuditSink): AuditRecorder {
  return {
    record(e) {
      sink.record({
        workspaceId: e.workspaceId,
        requestId: e.requestId,
        principalType: e.actor.kind,
        principalId: e.actor.id,
        keyId: e.actor.keyId ?? null,
        kind: 'admin',
        action: e.action,
        arguments: e.arguments ?? null,
        outcome: e.outcome,
        errorCode: e.errorCode,
        runId: e.runId,
        durationMs: e.durationMs,
      });
    },
  };
}
