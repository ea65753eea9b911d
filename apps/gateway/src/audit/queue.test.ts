import type { DbHandle } from '@flowgate/db';
import { repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditQueue } from './queue.js';

let h: DbHandle;
beforeAll(async () => {
  h = await createTestDb();
  await repos.createWorkspace(h.db, { id: 'ws-q', name: 'q' });
});
afterAll(async () => h?.close());

const base = {
  workspaceId: 'ws-q',
  principalType: 'service_account',
  principalId: 'sa_1',
  kind: 'tools/call',
  outcome: 'ok' as const,
};

describe('audit queue', () => {
  it('cleans NUL and lone surrogates so one hostile entry cannot block the others', async () => {
    const queue = createAuditQueue(h.db, pino({ level: 'silent' }), { flushIntervalMs: 60_000 });
    queue.record({ ...base, action: 'before' });
    queue.record({
      ...base,
      action: 'evil\u0000tool',
      arguments: { x: 'a\u0000b', y: '\uD800', 'k\u0000': 1 },
      reason: 'r\u0000',
    });
    queue.record({ ...base, action: 'after' });
    await queue.close();
    const rows = await repos.listAuditEntries(h.db, 'ws-q', { limit: 10 });
    expect(rows.map((r) => r.action).reverse()).toEqual(['before', 'evil\uFFFDtool', 'after']);
    expect(rows[1]?.arguments).toEqual({ x: 'a\uFFFDb', y: '\uFFFD', 'k\uFFFD': 1 });
  });

  it('bounds and redacts what it stores', async () => {
    const queue = createAuditQueue(h.db, pino({ level: 'silent' }), { flushIntervalMs: 60_000 });
    queue.record({
      ...base,
      action: 'flowgate://runs/x?token=abcdef123',
      arguments: {
        big: 'x'.repeat(100_000),
        list: Array.from({ length: 1_000 }, (_, i) => i),
        password: 'p',
      },
    });
    await queue.close();
    const [row] = await repos.listAuditEntries(h.db, 'ws-q', { limit: 1 });
    expect(row?.action).toBe('flowgate://runs/x?token=[redacted]');
    const args = row?.arguments as { big: string; list: number[]; password: string; _truncated: boolean };
    expect(args.big.length).toBeLessThanOrEqual(1_001);
    expect(args.list).toHaveLength(100);
    expect(args.password).toBe('[redacted]');
    expect(args._truncated).toBe(true);
    expect(JSON.stringify(row).length).toBeLessThan(20_000);
  });
});
