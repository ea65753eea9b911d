import { randomBase62 } from '@flowgate/core';
import postgres from 'postgres';
import { createDb, type DbHandle, type DbOptions } from './client.js';
import type { NewRun } from './repos/runs.js';

export interface TestDbOptions {
  /** Sees the text of every statement sent, migrations included (tests count statements with it). */
  onStatement?: DbOptions['onStatement'];
}

/**
 * A fresh, migrated database for one test file: PGlite in memory by default, or a throwaway database on
 * the server named by `DATABASE_URL` (dropped on close) so the same tests run against real Postgres.
 */
export async function createTestDb(options: TestDbOptions = {}): Promise<DbHandle> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    const handle = await createDb({ onStatement: options.onStatement });
    await handle.migrate();
    return handle;
  }
  const database = await createEmptyTestDatabase(baseUrl);
  const handle = await createDb({ url: database.url, maxConnections: 4, onStatement: options.onStatement });
  await handle.migrate();
  const close = handle.close;
  handle.close = async () => {
    await close();
    await database.drop();
  };
  return handle;
}

/** A queued run of a stand-in flow `f` (version 1, live) for run-queue tests; `overrides` set what a test is about. */
export function testRun(workspaceId: string, id: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id,
    flowId: 'f',
    flowSlug: 'f',
    definitionWorkspaceId: workspaceId,
    installationId: null,
    version: 1,
    target: 'live',
    draftLiteral: null,
    toolName: null,
    invocation: 'default',
    input: {},
    secretInputs: [],
    concurrencyKey: null,
    principalType: null,
    principalId: null,
    idempotencyKey: null,
    deadlineAt: null,
    ...overrides,
  };
}

/**
 * A throwaway, unmigrated database on the Postgres server at `baseUrl`: for tests of what happens before
 * migrations (a worker that waits for them). `drop` removes it, closing any connection left to it.
 */
export async function createEmptyTestDatabase(
  baseUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `fg_test_${randomBase62(10).toLowerCase()}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  try {
    // Two files creating databases at the same instant contend for template1 (55006): retry with backoff.
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.unsafe(`create database ${name}`);
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== '55006' || attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = postgres(baseUrl, { max: 1, onnotice: () => {} });
      await dropper.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await dropper.end();
    },
  };
}
