export { createDb, MIGRATIONS_FOLDER } from './client.js';
export type { Database, DbHandle, DbOptions, Schema } from './client.js';
export * as schema from './schema.js';
