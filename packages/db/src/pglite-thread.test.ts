import { messages } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from './client.js';
import { embeddedSettings } from './embedded.js';
import { EmbeddedDatabaseStopped, PgliteThread } from './pglite-thread.js';
import { TEXT_TYPES } from './postgres.js';

const start = () => PgliteThread.start({ postgresqlconf: embeddedSettings(16), textTypes: TEXT_TYPES });

/** Resolves after `ms` with `value`, to tell a statement that waits from one that answered. */
const after = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

describe('the embedded database on its own thread', () => {
  let thread: PgliteThread;
  beforeAll(async () => {
    thread = await start();
    await thread.exec(
      'create table t (id int primary key, v text not null, at timestamptz not null default now(), doc jsonb)',
    );
  });
  afterAll(async () => {
    await thread.close();
  });

  it('answers queries with PGlite result shapes, identity parsers by type id', async () => {
    await thread.query('insert into t (id, v, doc) values ($1, $2, $3)', [
      1,
      'one',
      JSON.stringify({ a: 1 }),
    ]);
    const byName = await thread.query<{ id: number; v: string; doc: unknown }>(
      'select id, v, doc from t where id = $1',
      [1],
    );
    expect(byName.rows).toEqual([{ id: 1, v: 'one', doc: { a: 1 } }]);
    expect(byName.fields.map((f) => f.name)).toEqual(['id', 'v', 'doc']);
    const asArrays = await thread.query<unknown[]>('select id, at from t where id = 1', [], {
      rowMode: 'array',
      parsers: { 1184: (v: string) => v },
    });
    expect(asArrays.rows[0]?.[0]).toBe(1);
    // timestamptz stays text with the identity parser; PGlite's default would make it a Date.
    expect(typeof asArrays.rows[0]?.[1]).toBe('string');
    expect((await thread.query<{ at: unknown }>('select at from t where id = 1')).rows[0]?.at).toBeInstanceOf(
      Date,
    );
    await expect(
      thread.query('select 1', [], { parsers: { 1184: (v: string) => new Date(v) } }),
    ).rejects.toThrow('the embedded database thread takes only identity parsers (type 1184)');
    // rows(): TEXT_TYPES as text; prepared(): the same rows through a named statement, twice (parsed once).
    expect(await thread.rows<{ id: number; at: unknown }>('select id, at from t where id = $1', [1])).toEqual(
      [{ id: 1, at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/) }],
    );
    for (let i = 0; i < 2; i++) {
      expect(
        await thread.prepared<{ v: string }>('select v from t where id = $1', 'fg_test_v', ['1']),
      ).toEqual([{ v: 'one' }]);
    }
  });

  it('parses a data statement once and runs it by name after, surviving a rollback; DDL and a changed table as before', async () => {
    const named = async () =>
      (
        await thread.query<{ n: number }>(
          "select count(*)::int as n from pg_prepared_statements where name like 'fg_q%'",
        )
      ).rows[0]?.n ?? -1;
    await thread.exec('create table named_t (id int primary key, v text)');
    await thread.query('insert into named_t (id, v) values ($1, $2), ($3, $4)', [1, 'one', 2, 'two']);
    const before = await named();
    for (const [id, v] of [
      [1, 'one'],
      [2, 'two'],
      [3, undefined],
    ] as const) {
      const rows = (await thread.query<{ v: string }>('select v from named_t where id = $1', [id])).rows;
      expect(rows).toEqual(v === undefined ? [] : [{ v }]);
    }
    expect(await named()).toBe(before + 1);

    // Parameters are serialised by the types Postgres inferred, as PGlite's own query does.
    const at = new Date('2026-01-02T03:04:05.678Z');
    const typed = await thread.query<{ at: Date; b: boolean; a: number[]; n: null; j: unknown }>(
      'select $1::timestamptz as at, $2::boolean as b, $3::int[] as a, $4::text as n, $5::jsonb as j',
      [at, true, [1, 2], null, JSON.stringify({ k: [1] })],
    );
    expect(typed.rows).toEqual([{ at, b: true, a: [1, 2], n: null, j: { k: [1] } }]);

    // A statement first parsed inside a transaction that rolls back is still there afterwards.
    await expect(
      thread.transaction(async (tx) => {
        expect((await tx.query('select id from named_t where v = $1', ['two'])).rows).toEqual([{ id: 2 }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await thread.query('select id from named_t where v = $1', ['one'])).rows).toEqual([{ id: 1 }]);
    expect(await named()).toBe(before + 3);

    // DDL is not kept by name; a table that changed shape gets the statement parsed again.
    expect((await thread.query('select * from named_t where id = $1', [1])).rows).toEqual([
      { id: 1, v: 'one' },
    ]);
    await thread.query('alter table named_t add column w text');
    expect(await named()).toBe(before + 4);
    expect((await thread.query('select * from named_t where id = $1', [1])).rows).toEqual([
      { id: 1, v: 'one', w: null },
    ]);
    // A failed run by name leaves the statement usable.
    await expect(
      thread.query('insert into named_t (id, v) values ($1, $2)', [1, 'dup']),
    ).rejects.toMatchObject({
      code: '23505',
    });
    await thread.query('insert into named_t (id, v) values ($1, $2)', [4, 'four']);
    expect((await thread.query('select v from named_t where id = $1', [4])).rows).toEqual([{ v: 'four' }]);

    // Raw statements too, their text types left as text.
    const beforeRows = await named();
    for (let i = 0; i < 2; i++) {
      expect(await thread.rows('select $1::timestamptz as at', [at])).toEqual([
        { at: expect.stringMatching(/^2026-01-02 03:04:05\.678/) },
      ]);
    }
    expect(await named()).toBe(beforeRows + 1);

    // At most 256 texts stay named: the least recently used is closed for a new one, and parsed again when it returns.
    for (let i = 0; i < 300; i++) {
      expect((await thread.query<{ n: number }>(`select $1::int + ${i} as n`, [1])).rows).toEqual([
        { n: 1 + i },
      ]);
    }
    expect(await named()).toBe(256);
    expect((await thread.query<{ n: number }>('select $1::int + 0 as n', [2])).rows).toEqual([{ n: 2 }]);
    expect(await named()).toBe(256);
  });

  it('carries a Postgres error across with its fields, as PGlite’s DatabaseError', async () => {
    const error = await thread
      .query('insert into t (id, v) values (1, $1)', ['again'])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(messages.DatabaseError);
    expect(error).toMatchObject({
      code: '23505',
      constraint: 't_pkey',
      table: 't',
      severity: 'ERROR',
      detail: 'Key (id)=(1) already exists.',
      message: 'duplicate key value violates unique constraint "t_pkey"',
    });
    const notNull = await thread.rows('insert into t (id, v) values (2, null)', []).catch((e: unknown) => e);
    expect(notNull).toMatchObject({ code: '23502', column: 'v' });
    const syntax = await thread.prepared('selec 1', 'fg_test_bad', []).catch((e: unknown) => e);
    expect(syntax).toMatchObject({ code: '42601' });
    // The thread still answers after errors, and the failed statement left nothing behind.
    expect((await thread.query<{ n: number }>('select count(*)::int as n from t')).rows).toEqual([{ n: 1 }]);
  });

  it('holds a transaction open across calls: others wait behind it, then see what it committed', async () => {
    const order: string[] = [];
    let outside: Promise<unknown> | undefined;
    await thread.transaction(async (tx) => {
      await tx.query('insert into t (id, v) values (10, $1)', ['in tx']);
      outside = thread.query<{ v: string }>('select v from t where id = 10').then((r) => {
        order.push('outside answered');
        return r.rows;
      });
      // The statement outside waits for the transaction, however long it stays open.
      expect(await Promise.race([outside, after(150, 'still waiting')])).toBe('still waiting');
      await tx.query('update t set v = $1 where id = 10', ['committed']);
      order.push('transaction ends');
    });
    expect(await outside).toEqual([{ v: 'committed' }]);
    expect(order).toEqual(['transaction ends', 'outside answered']);
  });

  it('rolls back when the function throws, and says why with the caller’s error', async () => {
    const boom = new Error('boom');
    await expect(
      thread.transaction(async (tx) => {
        await tx.query('insert into t (id, v) values (11, $1)', ['rolled back']);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect((await thread.query('select 1 from t where id = 11')).rows).toEqual([]);
    // A failed statement aborts the transaction: committing it is an error, and nothing of it stays.
    await expect(
      thread.transaction(async (tx) => {
        await tx.query('insert into t (id, v) values (12, $1)', ['aborted']);
        await tx.query('insert into t (id, v) values (1, $1)', ['dup']).catch(() => {});
      }),
    ).rejects.toThrow('Transaction was rolled back instead of committed');
    expect((await thread.query('select 1 from t where id = 12')).rows).toEqual([]);
  });

  it('forwards notifications to the listener until it unsubscribes', async () => {
    const got: string[] = [];
    const unsubscribe = await thread.listen('thread_test', (payload) => got.push(payload));
    await thread.query('select pg_notify($1, $2)', ['thread_test', 'first']);
    await thread.query('select pg_notify($1, $2)', ['other_channel', 'not mine']);
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['first']);
    await unsubscribe();
    await thread.query('select pg_notify($1, $2)', ['thread_test', 'second']);
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['first']);
  });

  it('answers the statement that notified before its listener hears of it; notifications keep their order', async () => {
    const seen: string[] = [];
    const unsubscribe = await thread.listen('thread_order', (payload) => seen.push(`heard ${payload}`));
    const answered = (name: string) => () => {
      seen.push(`answered ${name}`);
    };
    // Whatever runs right after a statement's answer (as the in-process worker reporting the run it just ended)
    // comes before the echo of its own NOTIFY.
    await Promise.all([
      thread.query('select pg_notify($1, $2)', ['thread_order', 'a']).then(answered('a')),
      thread.query('select pg_notify($1, $2)', ['thread_order', 'b']).then(answered('b')),
    ]);
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.filter((e) => e.startsWith('heard'))).toEqual(['heard a', 'heard b']);
    for (const name of ['a', 'b']) {
      expect(seen.indexOf(`answered ${name}`)).toBeLessThan(seen.indexOf(`heard ${name}`));
    }
    await unsubscribe();
  });
});

describe('the query builder on the thread (createDb without a URL)', () => {
  it('commits, rolls back and nests transactions as savepoints', async () => {
    const handle = await createDb();
    try {
      const { db } = handle;
      await db.execute(sql`create table n (id int primary key)`);
      await db.transaction(async (tx) => {
        await tx.execute(sql`insert into n values (1)`);
        await expect(
          tx.transaction(async (inner) => {
            await inner.execute(sql`insert into n values (2)`);
            throw new Error('inner fails');
          }),
        ).rejects.toThrow('inner fails');
        await tx.transaction(async (inner) => {
          await inner.execute(sql`insert into n values (3)`);
        });
      });
      await expect(
        db.transaction(async (tx) => {
          await tx.execute(sql`insert into n values (4)`);
          tx.rollback();
        }),
      ).rejects.toThrow('Rollback');
      expect(await db.statements.rows(sql`select id from n order by id`)).toEqual([{ id: 1 }, { id: 3 }]);
      // A unique violation inside a transaction reaches the caller with its code (drizzle wraps it, as in-thread).
      const dup = await db
        .transaction(async (tx) => {
          await tx.execute(sql`insert into n values (1)`);
        })
        .catch((e: unknown) => e);
      expect(dup).toMatchObject({ cause: { code: '23505', constraint: 'n_pkey' } });
      expect((dup as Error).cause).toBeInstanceOf(messages.DatabaseError);
      // drizzle's notify/listen path on the handle.
      const got: string[] = [];
      const unsubscribe = await handle.listen('handle_test', (p) => got.push(p));
      await handle.notify('handle_test', 'hello');
      await new Promise((r) => setTimeout(r, 20));
      expect(got).toEqual(['hello']);
      await unsubscribe();
    } finally {
      await handle.close();
    }
  });
});

describe('the end of the thread', () => {
  it('close flushes and ends the thread; calls after it fail clearly; closing twice is fine', async () => {
    const thread = await start();
    const exited = new Promise<number>((r) => thread.worker.once('exit', r));
    await thread.query('select 1');
    await thread.close();
    expect(await exited).toBe(0);
    await thread.close();
    const error = await thread.query('select 1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddedDatabaseStopped);
    expect(error).toMatchObject({
      code: 'embedded_database_stopped',
      message: 'the embedded database is closed',
    });
  });

  it('a crash of the thread rejects the calls waiting on it and every later one', async () => {
    const thread = await start();
    let waiting: Promise<unknown> | undefined;
    const held = thread
      .transaction(async (tx) => {
        await tx.query('select 1');
        waiting = thread.query('select 2').catch((e: unknown) => e);
        // An uncaught error on the database thread, as a fault in the database would raise.
        thread.worker.postMessage({ id: 0, op: 'crash' });
        await new Promise((r) => thread.worker.once('exit', r));
      })
      .catch((e: unknown) => e);
    await held;
    const error = await waiting;
    expect(error).toBeInstanceOf(EmbeddedDatabaseStopped);
    expect((error as Error).message).toBe(
      'the embedded database thread failed: embedded database thread crashed on request',
    );
    await expect(thread.query('select 3')).rejects.toBe(error);
    // Nothing left to close.
    await thread.close();
  });

  it('a thread stopped from outside rejects pending calls with its exit code', async () => {
    const thread = await start();
    const pending = thread.query('select pg_sleep(0.5)').catch((e: unknown) => e);
    await thread.worker.terminate();
    const error = await pending;
    expect(error).toBeInstanceOf(EmbeddedDatabaseStopped);
    expect((error as Error).message).toBe('the embedded database thread stopped unexpectedly (exit code 1)');
  });
});
