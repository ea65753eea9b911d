export type { Database, DbHandle, DbOptions, Schema } from './client.js';
export { createDb, databaseState, MIGRATIONS_FOLDER } from './client.js';
export { BACKFILLS, type BackfillOutcome, runBackfills } from './maintenance.js';
export type { KeyLookup } from './repos/api-keys.js';
export type { ConnectionRow, ConnectionView } from './repos/connections.js';
export * as repos from './repos/index.js';
export type { WorkspacePolicy } from './repos/policy.js';
export * as schema from './schema.js';
