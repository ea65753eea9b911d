import { createTestDb } from '@flowgate/db/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyUsageTracker } from './key-usage.js';

describe('key usage without a timer (Workers)', () => {
  const statements: string[] = [];
  let db: Awaited<ReturnType<typeof createTestDb>>;
  beforeAll(async () => {
    db = await createTestDb({ onStatement: (text) => statements.push(text) });
  }, 60_000);
  afterAll(() => db.close());

  it('writes at most once per interval however many responses flush', async () => {
    let clock = 1_000_000;
    const usage = createKeyUsageTracker(db.db, pino({ level: 'silent' }), {
      timer: false,
      intervalMs: 5_000,
      now: () => clock,
    });
    const writes = () => statements.filter((s) => /update "api_keys"/i.test(s)).length;
    statements.length = 0;
    for (let i = 0; i < 20; i++) {
      usage.used('key_a');
      clock += 200;
      await usage.flushDue();
    }
    // 20 responses over 4 s: none is due yet.
    expect(writes()).toBe(0);
    clock += 1_000;
    usage.used('key_b');
    await usage.flushDue();
    expect(writes()).toBe(1);
    // Nothing seen since: no write even when due.
    clock += 10_000;
    await usage.flushDue();
    expect(writes()).toBe(1);
    usage.used('key_a');
    await usage.close();
    expect(writes()).toBe(2);
  });
});
