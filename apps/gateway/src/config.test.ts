import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('loadConfig', () => {
  it('lists every problem at once: malformed values and missing companions together', () => {
    expect(() =>
      loadConfig({
        FLOWGATE_PORT: 'eighty',
        FLOWGATE_LOG_LEVEL: 'loud',
        DATABASE_URL: 'postgres://db.internal/flowgate',
        FLOWGATE_JWT_SECRET: 'short',
      }),
    ).toThrow(
      'invalid configuration:\n' +
        '  FLOWGATE_PORT: Invalid input: expected number, received NaN\n' +
        '  FLOWGATE_LOG_LEVEL: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"\n' +
        '  FLOWGATE_JWT_SECRET: must be at least 32 characters\n' +
        '  FLOWGATE_JWT_ISSUER is required when JWT auth is configured\n' +
        '  FLOWGATE_JWT_AUDIENCE is required when JWT auth is configured\n' +
        '  FLOWGATE_ENCRYPTION_KEY is required with DATABASE_URL (32 bytes, base64 or hex)',
    );
  });

  it('names a variable a caller cannot run without (the worker and DATABASE_URL) next to the other problems', () => {
    expect(() =>
      loadConfig({ FLOWGATE_WORKER_CONCURRENCY: '0' }, { requireDatabaseUrl: 'the worker needs Postgres' }),
    ).toThrow(
      'invalid configuration:\n' +
        '  FLOWGATE_WORKER_CONCURRENCY: Too small: expected number to be >=1\n' +
        '  DATABASE_URL: the worker needs Postgres\n' +
        '  FLOWGATE_ENCRYPTION_KEY is required with DATABASE_URL (32 bytes, base64 or hex)',
    );
  });

  it('a good configuration loads', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://db/x',
      FLOWGATE_ENCRYPTION_KEY: 'k',
      FLOWGATE_PORT: '9000',
    });
    expect(config).toMatchObject({ port: 9000, databaseUrl: 'postgres://db/x', encryptionKey: 'k' });
  });
});

describe('usage metering settings', () => {
  it('meter by default and keep 400 days; off and a retention are read; bad values are refused', () => {
    const base = loadConfig({});
    expect([base.usageMetering, base.usageRetentionDays]).toEqual([true, 400]);
    const off = loadConfig({ FLOWGATE_USAGE_METERING: 'off', FLOWGATE_USAGE_RETENTION_DAYS: '30' });
    expect([off.usageMetering, off.usageRetentionDays]).toEqual([false, 30]);
    expect(() => loadConfig({ FLOWGATE_USAGE_RETENTION_DAYS: '-1' })).toThrow(
      /FLOWGATE_USAGE_RETENTION_DAYS/,
    );
    expect(() => loadConfig({ FLOWGATE_USAGE_METERING: 'sometimes' })).toThrow(/FLOWGATE_USAGE_METERING/);
  });
});
