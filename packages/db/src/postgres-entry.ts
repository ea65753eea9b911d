/**
 * `@flowgate/db/postgres`: the Postgres driver alone (postgres.js), for runtimes without the embedded database.
 * Importing it loads neither PGlite nor the migrations folder.
 */
export {
  createPerRequestDb,
  type PerRequestDb,
  type PerRequestOptions,
  type RequestDb,
} from './per-request.js';
export { createPostgresDb, type PostgresOptions } from './postgres.js';
