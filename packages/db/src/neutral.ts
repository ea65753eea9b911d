/**
 * What every runtime imports as `@flowgate/db` (the `workerd` condition resolves here): repositories, schema and
 * types, without Node's `createDb` (PGlite, the migrations folder). Drivers: `@flowgate/db/postgres`.
 */
export type { Database, DbHandle, DbOptions, Schema } from './client.js';
export { BACKFILLS, type BackfillOutcome, runBackfills } from './maintenance.js';
export type { KeyLookup } from './repos/api-keys.js';
export type { ConnectionRow, ConnectionView } from './repos/connections.js';
export * as repos from './repos/index.js';
export type { WorkspacePolicy } from './repos/policy.js';
export * as schema from './schema.js';
export { USAGE_DURATION_BOUNDS_MS } from './schema.js';
