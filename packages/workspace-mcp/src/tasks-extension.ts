/**
 * The capability rules of the Tasks extension (`io.modelcontextprotocol/tasks`, ext-tasks specification
 * 2026-07-28, "Capability Negotiation" and "Error Handling › Protocol Errors"): a client that did not declare the
 * extension in the request's own `clientCapabilities` gets -32021 (HTTP 400) for `tasks/get`, `tasks/update` and
 * `tasks/cancel`, and for asking `subscriptions/listen` for task notifications (`notifications.taskIds`).
 * Declarations are per request: an earlier declaration counts for nothing.
 */
import type { JsonRpcError } from './protocol.js';
import { MISSING_REQUIRED_CLIENT_CAPABILITY } from './revision.js';
import { declaresTasksExtension, TASKS_EXTENSION_ID } from './tasks.js';

/** The extension's methods (2026-07-28). `tasks/list` and `tasks/result` are not among them. */
export const TASKS_EXTENSION_METHODS: ReadonlySet<string> = new Set([
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
]);

/** The -32021 error naming the extension as the capability the request lacks. */
export function missingTasksExtension(what: string): JsonRpcError {
  return {
    code: MISSING_REQUIRED_CLIENT_CAPABILITY,
    message: `Missing required client capability: ${what} needs the ${TASKS_EXTENSION_ID} extension declared in this request's _meta io.modelcontextprotocol/clientCapabilities.extensions`,
    data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } },
  };
}

/**
 * The refusal for a 2026-07-28 request to one of the extension's methods without the declaration, or null when it
 * may be served (or is not an extension method). Answered with HTTP 400, as the revision requires for -32021.
 */
export function tasksMethodRefusal(
  method: string,
  clientCapabilities: Record<string, unknown> | null | undefined,
): JsonRpcError | null {
  if (!TASKS_EXTENSION_METHODS.has(method) || declaresTasksExtension(clientCapabilities)) return null;
  return missingTasksExtension(method);
}

/**
 * For `subscriptions/listen`: the refusal when its `params.notifications.taskIds` asks for task notifications
 * (`notifications/tasks`) and the request did not declare the extension; null otherwise. An empty list asks for
 * nothing and is not refused. Answer a non-null value with HTTP 400.
 */
export function listenTaskIdsRefusal(
  params: Record<string, unknown>,
  clientCapabilities: Record<string, unknown> | null | undefined,
): JsonRpcError | null {
  const notifications = params.notifications;
  if (typeof notifications !== 'object' || notifications === null || Array.isArray(notifications))
    return null;
  const taskIds = (notifications as Record<string, unknown>).taskIds;
  if (taskIds === undefined || (Array.isArray(taskIds) && taskIds.length === 0)) return null;
  return declaresTasksExtension(clientCapabilities) ? null : missingTasksExtension('notifications.taskIds');
}
