import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '@flowgate/core';

/**
 * The embedded database may be opened by one process only; two would corrupt it. A pid file in the data
 * directory makes a second `dev`, `serve` or `db migrate` on the same directory fail with a clear message.
 * A lock left by a dead process (or by a recycled pid 1 in a container) is taken over.
 */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, 'flowgate.lock');
  const me = String(process.pid);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, me, { flag: 'wx', mode: 0o600 });
      return () => {
        try {
          if (readFileSync(path, 'utf8') === me) unlinkSync(path);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSafe(path), 10);
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new AppError(
          'conflict',
          `another flowgate process (pid ${holder}) is using ${dir}; stop it first or set FLOWGATE_DATA_DIR`,
        );
      }
      try {
        unlinkSync(path);
      } catch {
        // raced with another process cleaning up; retry the exclusive create
      }
    }
  }
  throw new AppError('conflict', `could not lock ${dir}`);
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Resolves on the first SIGINT or SIGTERM so the caller can close gracefully; a second signal while
 * closing exits at once (the user pressed Ctrl+C twice).
 */
export function waitForShutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      const force = () => process.exit(130);
      process.once('SIGINT', force);
      process.once('SIGTERM', force);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** Maps a listen failure to a message that says what to do. */
export function describeListenError(error: unknown, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new AppError(
      'unavailable',
      `${host}:${port} is already in use; stop the other process or choose another port`,
    );
  }
  if (code === 'EACCES') return new AppError('unavailable', `not allowed to listen on ${host}:${port}`);
  return error instanceof Error ? error : new Error(String(error));
}
