import { randomBytes } from 'node:crypto';
import { createDb } from '@flowgate/db';
import { createEmptyTestDatabase } from '@flowgate/db/testing';
import { describe, expect, it } from 'vitest';
import { waitForDatabase } from './database.js';
import { runWith } from './testing.js';
import { runWorker } from './worker.js';

const KEY = randomBytes(32).toString('hex');
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' });
const sqlstate = (code: string, message: string) => Object.assign(new Error(message), { code });

interface Line {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}
function recorder() {
  const lines: Line[] = [];
  const at = (level: Line['level']) => (fields: Record<string, unknown>, message: string) => {
    lines.push({ level, fields, message });
  };
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('waiting for the database', () => {
  it('retries with backoff from 0.5 s to 5 s, one log line per reason, until it is reachable and migrated', async () => {
    const script: Array<() => 'ready' | 'not_migrated'> = [
      ...Array.from({ length: 3 }, () => () => {
        throw refused();
      }),
      () => 'not_migrated',
      () => 'not_migrated',
      () => 'not_migrated',
      () => 'ready',
    ];
    const slept: number[] = [];
    const { lines, log } = recorder();
    const ready = await waitForDatabase({
      url: 'postgres://flowgate:hunter2@127.0.0.1:5999/flowgate',
      probe: async () => (script.shift() as () => 'ready' | 'not_migrated')(),
      log,
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    expect(ready).toBe(true);
    expect(slept).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      [
        'warn',
        'cannot reach the database at 127.0.0.1:5999 (ECONNREFUSED); is Postgres running and DATABASE_URL right?; retrying',
      ],
      [
        'warn',
        'the database at 127.0.0.1:5999 is not migrated; waiting for `flowgate db migrate` (or a gateway) to migrate it; retrying',
      ],
      ['info', 'database ready'],
    ]);
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });

  it.each([
    [
      '28P01',
      'password authentication failed for user "flowgate"',
      'error: database_auth_failed: the database at db.internal:5432 refused the credentials in DATABASE_URL; check its user and password',
    ],
    [
      '28000',
      'role "nobody" does not exist',
      'error: database_auth_failed: the database at db.internal:5432 refused the credentials in DATABASE_URL; check its user and password',
    ],
    [
      '3D000',
      'database "flowgate" does not exist',
      'error: database_missing: database "flowgate" does not exist at db.internal:5432; create it or fix DATABASE_URL',
    ],
  ])('gives up at once on what cannot heal (%s)', async (code, message, rendered) => {
    const slept: number[] = [];
    const failed = await waitForDatabase({
      url: 'postgres://db.internal/flowgate',
      probe: async () => {
        throw sqlstate(code, message);
      },
      log: recorder().log,
      sleep: async (ms) => {
        slept.push(ms);
      },
    }).catch((error: unknown) => error);
    const { renderError } = await import('./render-error.js');
    expect(renderError(failed)).toBe(rendered);
    expect(slept).toEqual([]);
  });

  it('stops waiting when asked to (shutdown while the database is down)', async () => {
    const stop = new AbortController();
    const ready = await waitForDatabase({
      url: 'postgres://127.0.0.1:5999/x',
      probe: async () => {
        stop.abort();
        throw refused();
      },
      log: recorder().log,
      signal: stop.signal,
    });
    expect(ready).toBe(false);
  });
});

describe('flowgate worker and db migrate against a database that is not there', () => {
  it('worker: waits (logging why) instead of exiting, and stops cleanly on shutdown', async () => {
    const { lines, log } = recorder();
    let stop = () => {};
    const shutdown = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const running = runWorker(
      {},
      {
        env: { DATABASE_URL: 'postgres://flowgate@127.0.0.1:5999/flowgate', FLOWGATE_ENCRYPTION_KEY: KEY },
        cwd: '/nonexistent',
        stdout: () => {},
        stderr: () => {},
        readStdin: async () => '',
      },
      { shutdown, log },
    );
    // Still running after more than one retry: it did not exit on the first refused connection.
    await new Promise((r) => setTimeout(r, 1_800));
    stop();
    await expect(running).resolves.toBeUndefined();
    const waits = lines.filter((l) => l.level === 'warn');
    expect(waits).toEqual([
      {
        level: 'warn',
        message:
          'cannot reach the database at 127.0.0.1:5999 (ECONNREFUSED); is Postgres running and DATABASE_URL right?; retrying',
        fields: { database: '127.0.0.1:5999', reason: 'database_unreachable', attempt: 1, retryInMs: 500 },
      },
    ]);
  });

  it('db migrate says it cannot reach the database, in words', async () => {
    expect(
      await runWith(['db', 'migrate'], {
        env: { DATABASE_URL: 'postgres://flowgate@127.0.0.1:5999/flowgate' },
      }),
    ).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: database_unreachable: cannot reach the database at 127.0.0.1:5999 (ECONNREFUSED); is Postgres running and DATABASE_URL right?\n',
    });
  });

  it('serve says it cannot reach the database, in words', async () => {
    const env = { DATABASE_URL: 'postgres://flowgate@127.0.0.1:5999/flowgate', FLOWGATE_ENCRYPTION_KEY: KEY };
    expect(await runWith(['serve', '--port', '0'], { env })).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: database_unreachable: cannot reach the database at 127.0.0.1:5999 (ECONNREFUSED); is Postgres running and DATABASE_URL right?\n',
    });
  });

  it('worker: a bad configuration lists every problem at once', async () => {
    expect(await runWith(['worker'], { env: { FLOWGATE_WORKER_CONCURRENCY: 'many' } })).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: invalid_request: invalid configuration:\n' +
        '  FLOWGATE_WORKER_CONCURRENCY: Invalid input: expected number, received NaN\n' +
        '  DATABASE_URL: flowgate worker needs Postgres: the embedded database belongs to the one process that opened it, and `flowgate serve` and `flowgate dev` run their own worker\n' +
        '  FLOWGATE_ENCRYPTION_KEY is required with DATABASE_URL (32 bytes, base64 or hex)\n',
    });
  });
});

const baseUrl = process.env.DATABASE_URL;

describe.runIf(baseUrl)('flowgate worker on Postgres', () => {
  const workerEnv = (url: string) => ({
    DATABASE_URL: url,
    FLOWGATE_ENCRYPTION_KEY: KEY,
    FLOWGATE_LOG_LEVEL: 'silent',
  });

  it('started before the migrations, waits for them, then starts claiming runs', {
    timeout: 60_000,
  }, async () => {
    const database = await createEmptyTestDatabase(baseUrl as string);
    try {
      const { lines, log } = recorder();
      let stop = () => {};
      const shutdown = new Promise<void>((resolve) => {
        stop = resolve;
      });
      let started = false;
      const running = runWorker(
        {},
        {
          env: workerEnv(database.url),
          cwd: '/nonexistent',
          stdout: () => {},
          stderr: () => {},
          readStdin: async () => '',
        },
        {
          shutdown,
          log,
          onStarted: () => {
            started = true;
          },
        },
      );
      for (let i = 0; i < 100 && !lines.some((l) => l.fields.reason === 'not_migrated'); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(started).toBe(false);
      const migrator = await createDb({ url: database.url, maxConnections: 1 });
      await migrator.migrate();
      await migrator.close();
      for (let i = 0; i < 200 && !started; i++) await new Promise((r) => setTimeout(r, 50));
      expect(started).toBe(true);
      stop();
      await running;
      expect(
        lines
          .filter((l) => l.level !== 'info' || l.message === 'database ready')
          .map((l) => l.fields.reason ?? l.message),
      ).toEqual(['not_migrated', 'database ready']);
    } finally {
      await database.drop();
    }
  });

  it('gives up on a database that does not exist and on a role the server refuses', {
    timeout: 30_000,
  }, async () => {
    const url = new URL(baseUrl as string);
    const address = `${url.hostname}:${url.port || '5432'}`;
    const missing = new URL(url);
    missing.pathname = '/fg_no_such_database';
    expect(await runWith(['worker'], { env: workerEnv(missing.toString()) })).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: database_missing: database "fg_no_such_database" does not exist at ${address}; create it or fix DATABASE_URL\n`,
    });
    const stranger = new URL(url);
    stranger.username = 'fg_no_such_role';
    expect(await runWith(['worker'], { env: workerEnv(stranger.toString()) })).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: database_auth_failed: the database at ${address} refused the credentials in DATABASE_URL; check its user and password\n`,
    });
  });
});
