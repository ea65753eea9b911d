export { AppError, isAppError, statusForCode } from './errors.js';
export type { ErrorCode, ErrorIssue } from './errors.js';
export { newId, randomBase62, WORKSPACE_ID_PATTERN, workspaceIdSchema, FLOW_SLUG_PATTERN, TOOL_NAME_PATTERN } from './ids.js';
export { zodIssues } from './zod.js';
