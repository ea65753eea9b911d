import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createDb } from './client.js';
import { embeddedSettings, initEmbeddedDataDir } from './embedded.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setting(name: string, options: Parameters<typeof createDb>[0]): Promise<string> {
  const h = await createDb(options);
  try {
    const rows = await h.db.execute(sql.raw(`show ${name}`));
    const list = (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows) as Array<
      Record<string, string>
    >;
    return Object.values(list[0] ?? {})[0] ?? '';
  } finally {
    await h.close();
  }
}

describe('embedded database memory bound', () => {
  it('lists the settings that bound its memory', () => {
    expect(embeddedSettings(24)).toEqual([
      'shared_buffers=24MB',
      'work_mem=2MB',
      'maintenance_work_mem=16MB',
      'temp_buffers=2MB',
      'wal_buffers=1MB',
    ]);
  });

  it('starts with 16 MB of shared buffers unless told otherwise (PGlite alone would take 128 MB)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fg-embedded-'));
    dirs.push(dir);
    expect(await setting('shared_buffers', { dataDir: join(dir, 'pgdata') })).toBe('16MB');
    expect(
      await setting('shared_buffers', { dataDir: join(dir, 'pgdata'), embeddedSharedBuffersMb: 48 }),
    ).toBe('48MB');
    expect(await setting('work_mem', {})).toBe('2MB');
  });

  it('creates a new data directory in a child process, and leaves an existing one alone', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'fg-embedded-')), 'pgdata');
    dirs.push(dir);
    await initEmbeddedDataDir(dir);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
    const h = await createDb({ dataDir: dir });
    await h.migrate();
    await h.db.execute(sql`create table kept (n int)`);
    await h.close();
    await initEmbeddedDataDir(dir);
    const again = await createDb({ dataDir: dir });
    try {
      const rows = await again.db.execute(sql`select count(*)::int as n from kept`);
      const list = (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows) as Array<{ n: number }>;
      expect(list[0]?.n).toBe(0);
    } finally {
      await again.close();
    }
  });
});
