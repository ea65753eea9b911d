import { fork } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Default shared buffers of the embedded database, in MB (PGlite's own default is 128). */
export const DEFAULT_EMBEDDED_SHARED_BUFFERS_MB = 16;

/**
 * Server settings of the embedded database. PGlite's WebAssembly memory grows to fit what Postgres allocates and
 * never shrinks, so Postgres's memory settings are the process's memory bound: 128 MB of shared buffers alone
 * cost ≈ 120 MB of resident memory. The gateway's working set (policies, keys, catalogs, a search index of a few
 * thousand flows) fits in a small buffer pool, and pages outside it are one file read away.
 */
export function embeddedSettings(sharedBuffersMb: number): string[] {
  return [
    `shared_buffers=${sharedBuffersMb}MB`,
    'work_mem=2MB',
    'maintenance_work_mem=16MB',
    'temp_buffers=2MB',
    'wal_buffers=1MB',
  ];
}

/**
 * Creates the cluster of a new data directory in a short-lived child process. `initdb` runs in a WebAssembly
 * instance of its own whose memory (≈ 150 MB resident) stays with the process that ran it, so running it here
 * would leave a first start of `flowgate serve` that much larger than every later one.
 */
export async function initEmbeddedDataDir(dataDir: string): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  const script = new URL('./embedded-init.mjs', import.meta.url);
  await new Promise<void>((resolve, reject) => {
    const child = fork(script, [dataDir], {
      // Plain JavaScript: no loader flags needed, and none of the parent's (e.g. --inspect) wanted.
      execArgv: [],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`creating the embedded database in ${dataDir} failed (exit ${code})`)),
    );
  });
}
