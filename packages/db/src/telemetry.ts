import { SpanKind, telemetryActive, withSpan } from '@flowgate/telemetry';
import type { Statements } from './client.js';
import { type Statement, toQuery } from './statement.js';

function statementSpan<T>(text: string, driver: 'pglite' | 'postgres', run: () => Promise<T>): Promise<T> {
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  return withSpan(
    operation,
    {
      kind: SpanKind.CLIENT,
      // A leaf: nothing under a statement opens spans, so it is never made the active context (telemetry.ts).
      activate: false,
      fold: false,
      attributes: {
        'db.system.name': 'postgresql',
        'db.operation.name': operation,
        'db.query.text': text.slice(0, 2000),
        'flowgate.db.driver': driver,
      },
    },
    run,
  );
}

type Executes = { queryString: string } & Record<'execute' | 'all', (...args: unknown[]) => Promise<unknown>>;
const instrumented = new Set<'pglite' | 'postgres'>();

/**
 * Spans around the query builder's statements: a driver's prepared queries' `execute` and `all`, with the statement
 * text only (drizzle's own tracing hook would add the parameter values, so it is not used). Each driver module passes
 * its own prepared-query class, so a bundle holding one driver never loads the other. Wrapped once per process;
 * without telemetry each call costs one check.
 */
export function instrumentQueryBuilder(
  preparedQuery: { prototype: unknown },
  driver: 'pglite' | 'postgres',
): void {
  if (instrumented.has(driver)) return;
  instrumented.add(driver);
  const target = preparedQuery.prototype as Executes;
  for (const method of ['execute', 'all'] as const) {
    const inner = target[method];
    target[method] = function (this: Executes, ...args: unknown[]) {
      if (!telemetryActive()) return inner.apply(this, args);
      return statementSpan(this.queryString, driver, () => inner.apply(this, args));
    };
  }
}

/**
 * A span around each raw statement (claims, ranked search, the run queue): the statement's text with its `$n`
 * placeholders, never the parameter values.
 */
export function tracedStatements(inner: Statements, driver: 'pglite' | 'postgres'): Statements {
  const traced =
    <T>(run: (statement: Statement) => Promise<T[]>) =>
    (statement: Statement): Promise<T[]> => {
      if (!telemetryActive()) return run(statement);
      return statementSpan(toQuery(statement).sql, driver, () => run(statement));
    };
  return {
    rows: <T>(statement: Statement) => traced<T>((s) => inner.rows<T>(s))(statement),
    prepared: <T>(statement: Statement) => traced<T>((s) => inner.prepared<T>(s))(statement),
  };
}
