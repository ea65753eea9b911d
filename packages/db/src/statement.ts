import { is, type Query, SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';

/**
 * A statement to send: built by the query builder, or already compiled to text and parameters (hot paths compile a
 * statement's text once and bind values per call).
 */
export type Statement = SQL | Query;

const dialect = new PgDialect();

export function toQuery(statement: Statement): Query {
  return is(statement, SQL) ? dialect.sqlToQuery(statement) : statement;
}
