import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerRequestDb } from './per-request.js';
import { createEmptyTestDatabase } from './testing.js';

/**
 * The per-request database (Workers): one stable handle whose statements go to the client of the request they run
 * in. Outside a request it refuses without connecting (always checked); the rest needs Postgres (DATABASE_URL).
 */

it('refuses a statement outside a request, without opening anything', async () => {
  // Nothing listens on port 1: a connection attempt would fail differently (ECONNREFUSED).
  const perRequest = createPerRequestDb('postgres://nobody@127.0.0.1:1/none');
  expect(() => perRequest.handle.db.select()).toThrow(
    expect.objectContaining({ code: 'no_request_database' }) as unknown as Error,
  );
  await expect(perRequest.handle.listen('c', () => {})).rejects.toThrow(
    'no LISTEN on a per-request database',
  );
  await expect(perRequest.handle.migrate()).rejects.toThrow('migrations run from Node: flowgate db migrate');
  // A request that runs no statement connects nothing, and closes at once.
  const scope = perRequest.open();
  expect(scope.run(() => 42)).toBe(42);
  await scope.close();
});

const baseUrl = process.env.DATABASE_URL;
if (baseUrl) {
  describe('on Postgres', () => {
    let database: { url: string; drop(): Promise<void> };

    beforeAll(async () => {
      database = await createEmptyTestDatabase(baseUrl);
    });
    afterAll(async () => {
      await database?.drop();
    });

    it('gives each request its own connection through one handle, transactions included', async () => {
      const perRequest = createPerRequestDb(database.url);
      const { db } = perRequest.handle;
      const pid = async () =>
        (await db.statements.rows<{ pid: number }>(sql`select pg_backend_pid() as pid`))[0]?.pid;
      const a = perRequest.open();
      const b = perRequest.open();
      const [pa, pb] = await Promise.all([a.run(pid), b.run(pid)]);
      expect(typeof pa).toBe('number');
      expect(pa).not.toBe(pb);
      // Later statements of a request (after an await) stay on its connection.
      expect(await a.run(async () => (await pid()) === pa && (await pid()) === pa)).toBe(true);
      const inTx = await b.run(() =>
        db.transaction(
          async (tx) => (await tx.execute(sql`select 1 as one`)) as unknown as Array<{ one: number }>,
        ),
      );
      expect([...inTx]).toEqual([{ one: 1 }]);
      await Promise.all([a.close(), b.close()]);
      await expect(a.run(pid)).rejects.toThrow();
    });

    it('reads readiness from the migrations table against the shipped journal', async () => {
      const perRequest = createPerRequestDb(database.url);
      const scope = perRequest.open();
      // An empty database is not migrated.
      expect(await scope.run(() => perRequest.handle.ready())).toBe(false);
      await scope.close();
    });
  });
}
