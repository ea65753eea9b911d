import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface CapturedProcess {
  child: ChildProcessWithoutNullStreams;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Everything written so far. */
  out(): { stdout: string; stderr: string };
}

/** A child process whose output is kept, for tests that read its log lines and its exit. */
export function spawnCaptured(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined> },
): CapturedProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, out: () => ({ stdout, stderr }) };
}
