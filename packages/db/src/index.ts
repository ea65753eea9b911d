export { createDb, databaseState, MIGRATIONS_FOLDER } from './client.js';
export * from './neutral.js';
