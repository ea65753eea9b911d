import { CliError } from './cli-io.js';

/**
 * Database failures in words. The driver says `connect ECONNREFUSED 127.0.0.1:5999` or a bare SQLSTATE; a user
 * needs to know which server, and whether waiting can help. `heals` says whether retrying can succeed: a server
 * that is down or starting can come up, wrong credentials or a missing database cannot.
 */
export interface DatabaseFailure {
  error: CliError;
  heals: boolean;
}

/** Socket and driver codes for "no connection (yet)": the server is down, starting, or the network is. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
]);
/** SQLSTATEs of a server that exists but is not taking this connection now (starting, shutting down, full). */
const TRANSIENT_SQLSTATE = new Set(['57P03', '57P01', '57P02', '53300']);
/** Wrong user or password (28P01), or a role that does not exist / is not allowed (28000). */
const AUTH_SQLSTATE = new Set(['28P01', '28000']);
/** The database named in the URL does not exist. */
const MISSING_DATABASE = '3D000';

/** `host:port` and database name from DATABASE_URL: never the user or password. */
export function databaseTarget(url: string): { address: string; name: string } {
  try {
    const u = new URL(url);
    const host = u.hostname || 'localhost';
    return {
      address: `${host}:${u.port || '5432'}`,
      name: decodeURIComponent(u.pathname.replace(/^\//, '')),
    };
  } catch {
    return { address: '(unparseable DATABASE_URL)', name: '' };
  }
}

function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

export function describeDatabaseFailure(error: unknown, url: string): DatabaseFailure {
  const { address, name } = databaseTarget(url);
  const code = codeOf(error);
  if (code !== null && UNREACHABLE.has(code)) {
    return {
      heals: true,
      error: new CliError(
        'database_unreachable',
        `cannot reach the database at ${address} (${code}); is Postgres running and DATABASE_URL right?`,
      ),
    };
  }
  if (code !== null && TRANSIENT_SQLSTATE.has(code)) {
    return {
      heals: true,
      error: new CliError(
        'database_unreachable',
        `the database at ${address} is not accepting connections yet`,
      ),
    };
  }
  if (code !== null && AUTH_SQLSTATE.has(code)) {
    return {
      heals: false,
      error: new CliError(
        'database_auth_failed',
        `the database at ${address} refused the credentials in DATABASE_URL; check its user and password`,
      ),
    };
  }
  if (code === MISSING_DATABASE) {
    return {
      heals: false,
      error: new CliError(
        'database_missing',
        `database "${name}" does not exist at ${address}; create it or fix DATABASE_URL`,
      ),
    };
  }
  // Unknown failures are retried by a waiting worker: only the two above are known not to heal.
  const reason = error instanceof Error ? error.message.slice(0, 200) : 'unknown failure';
  return {
    heals: true,
    error: new CliError('database_error', `the database at ${address} failed: ${reason}`),
  };
}

/** For one-shot commands: a connection failure as a CliError in words, anything else unchanged. */
export function databaseErrorInWords(error: unknown, url: string): unknown {
  const code = codeOf(error);
  const known =
    code !== null &&
    (UNREACHABLE.has(code) ||
      TRANSIENT_SQLSTATE.has(code) ||
      AUTH_SQLSTATE.has(code) ||
      code === MISSING_DATABASE);
  return known ? describeDatabaseFailure(error, url).error : error;
}

export interface WaitLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export const FIRST_RETRY_MS = 500;
export const MAX_RETRY_MS = 5_000;

/**
 * Waits until the database answers and its migrations are current, retrying with backoff (0.5 s doubling to 5 s).
 * A worker started next to a database (compose, Kubernetes) often comes up first: it waits instead of exiting.
 * One log line each time the reason for waiting changes (unreachable → not migrated), not one per attempt.
 * Throws at once for what cannot heal (bad credentials, missing database); false when `signal` aborted the wait.
 */
export async function waitForDatabase(options: {
  url: string;
  probe: () => Promise<'ready' | 'not_migrated'>;
  log: WaitLog;
  sleep?: (ms: number) => Promise<void>;
  signal?: AbortSignal;
}): Promise<boolean> {
  const { signal } = options;
  const sleep =
    options.sleep ??
    ((ms: number) =>
      new Promise<void>((resolve) => {
        // A shutdown while waiting ends the wait at once, not after the current delay.
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        function done() {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        }
      }));
  let delay = FIRST_RETRY_MS;
  let lastReason: string | null = null;
  const { address } = databaseTarget(options.url);
  for (let attempt = 1; ; attempt++) {
    let reason: string;
    let message: string;
    try {
      const state = await options.probe();
      if (state === 'ready') {
        if (lastReason !== null) options.log.info({ database: address, attempt }, 'database ready');
        return true;
      }
      reason = 'not_migrated';
      message = `the database at ${address} is not migrated; waiting for \`flowgate db migrate\` (or a gateway) to migrate it`;
    } catch (error) {
      const failure = describeDatabaseFailure(error, options.url);
      if (!failure.heals) throw failure.error;
      reason = failure.error.code;
      message = failure.error.message;
    }
    if (signal?.aborted) return false;
    if (reason !== lastReason) {
      options.log.warn({ database: address, reason, attempt, retryInMs: delay }, `${message}; retrying`);
      lastReason = reason;
    }
    await sleep(delay);
    if (signal?.aborted) return false;
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
}
