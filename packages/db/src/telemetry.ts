import { SpanKind, telemetryActive, withSpan } from '@flowgate/telemetry';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Statements } from './client.js';

const dialect = new PgDialect();

/**
 * A span around each raw statement (claims, ranked search, the run queue): the statement's text with its `$n`
 * placeholders, never the parameter values.
 */
export function tracedStatements(inner: Statements, driver: 'pglite' | 'postgres'): Statements {
  const traced =
    <T>(run: (statement: SQL) => Promise<T[]>) =>
    (statement: SQL): Promise<T[]> => {
      if (!telemetryActive()) return run(statement);
      const text = dialect.sqlToQuery(statement).sql;
      const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
      return withSpan(
        operation,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'db.system.name': 'postgresql',
            'db.operation.name': operation,
            'db.query.text': text.slice(0, 2000),
            'flowgate.db.driver': driver,
          },
        },
        () => run(statement),
      );
    };
  return {
    rows: <T>(statement: SQL) => traced<T>((s) => inner.rows<T>(s))(statement),
    prepared: <T>(statement: SQL) => traced<T>((s) => inner.prepared<T>(s))(statement),
  };
}
