import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Repository root; children run from here so `--import tsx` and workspace packages resolve. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Line a child prints on stdout once it is ready: `READY {json}`. */
export const READY_PREFIX = 'READY ';

export interface ChildHandle {
  label: string;
  pid: number;
  /** The JSON the child printed with its READY line. */
  ready: Record<string, unknown>;
  /** Sends a command over the IPC channel to the child's `serveControl` and resolves with its answer. */
  call<T = unknown>(cmd: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (null when killed by a signal). */
  stop(graceMs?: number): Promise<number | null>;
}

export interface SpawnOptions {
  label: string;
  /**
   * Script path, absolute or relative to the repository root: TypeScript runs through the tsx loader, a bundled
   * `.mjs` (see build.ts) under plain node.
   */
  script: string;
  args?: string[];
  env?: Record<string, string>;
  /** Extra Node flags, e.g. `--expose-gc`. */
  nodeArgs?: string[];
  readyTimeoutMs?: number;
  /**
   * Reads readiness from a line of the child's stdout other than `READY {json}` (e.g. `flowgate serve`'s
   * "listening" log line): the ready payload, or undefined for a line that is not it.
   */
  readyFrom?: (line: string) => Record<string, unknown> | undefined;
  /** stdout lines not to forward (e.g. info-level log lines a `readyFrom` child needs to print). */
  ignore?: (line: string) => boolean;
}

interface Reply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

const live = new Set<ChildProcess>();
let hooksInstalled = false;

/** Children must never outlive the benchmark: kill whatever is left on any way out. */
function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      for (const c of live) c.kill('SIGKILL');
      process.exit(130);
    });
  }
}

/**
 * The parent's environment with the child's own settings on top. `DATABASE_URL` is the child's only when it is
 * given: a benchmark of the embedded database must not turn into one of Postgres because the shell exported it.
 */
function childEnv(own: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _inherited, ...rest } = process.env;
  return { ...rest, ...own };
}

/**
 * Starts `node --import tsx <script>` (or `node <bundle>.mjs`) directly, not through the tsx CLI (which would add a
 * wrapper process), so `pid` is the process doing the work — what RSS and CPU sampling need. An IPC channel carries
 * control commands (memory figures, profiling); other stdout/stderr lines are forwarded to our stderr with the label.
 */
export function spawnTsx(options: SpawnOptions): Promise<ChildHandle> {
  installExitHooks();
  const loader = options.script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), ...loader, resolve(ROOT, options.script), ...(options.args ?? [])],
    { cwd: ROOT, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  live.add(child);
  // The channel must not keep the benchmark alive on its own.
  child.channel?.unref();
  const exited = new Promise<number | null>((res) => {
    child.once('exit', (code) => {
      live.delete(child);
      res(code);
    });
  });
  const forward = (line: string) => process.stderr.write(`  [${options.label}] ${line}\n`);
  if (child.stderr) createInterface({ input: child.stderr }).on('line', forward);

  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (raw) => {
    const reply = raw as Reply;
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (reply.ok) p.resolve(reply.result);
    else p.reject(new Error(`${options.label}: ${reply.error ?? 'command failed'}`));
  });
  void exited.then(() => {
    for (const p of pending.values()) p.reject(new Error(`${options.label}: exited`));
    pending.clear();
  });

  return new Promise<ChildHandle>((resolveReady, reject) => {
    let settled = false;
    const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`${options.label}: not ready within ${readyTimeoutMs} ms`));
    }, readyTimeoutMs);
    if (!child.stdout) throw new Error('child has no stdout');
    const readyOf = (line: string): Record<string, unknown> | undefined => {
      if (options.readyFrom) return options.readyFrom(line);
      return line.startsWith(READY_PREFIX)
        ? (JSON.parse(line.slice(READY_PREFIX.length)) as Record<string, unknown>)
        : undefined;
    };
    createInterface({ input: child.stdout }).on('line', (line) => {
      const ready = settled ? undefined : readyOf(line);
      if (!ready) {
        if (!options.ignore?.(line)) forward(line);
        return;
      }
      settled = true;
      clearTimeout(timer);
      resolveReady({
        label: options.label,
        pid: child.pid ?? -1,
        ready,
        call<T>(cmd: string, args: Record<string, unknown> = {}, timeoutMs = 60_000) {
          return new Promise<T>((res, rej) => {
            const id = nextId++;
            const t = setTimeout(() => {
              pending.delete(id);
              rej(new Error(`${options.label}: "${cmd}" got no answer within ${timeoutMs} ms`));
            }, timeoutMs);
            pending.set(id, {
              resolve: (v) => {
                clearTimeout(t);
                res(v as T);
              },
              reject: (e) => {
                clearTimeout(t);
                rej(e);
              },
            });
            child.send({ id, cmd, args });
          });
        },
        async stop(graceMs = 10_000) {
          if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
          child.kill('SIGTERM');
          const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
          const code = await exited;
          clearTimeout(t);
          return code;
        },
      });
    });
    void exited.then((code) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`${options.label}: exited with code ${code} before it was ready`));
    });
  });
}

/** For child scripts: announce readiness with a JSON payload. */
export function announceReady(payload: Record<string, unknown>): void {
  process.stdout.write(`${READY_PREFIX}${JSON.stringify(payload)}\n`);
}

/** Resident set size of a process in kB, from /proc (Linux only). */
export function readRssKb(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

let clockTicks: number | undefined;

/** User + system CPU time a process has used, in ms, from /proc/<pid>/stat (fields 14 and 15). */
export function readCpuMs(pid: number): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces; fields after it are split from the closing paren.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return ((utime + stime) * 1000) / clockTicks;
}

/**
 * Runs a bench child script (`bench/lib/<name>.ts`) under tsx with one JSON argument, to its exit, and gives the
 * JSON of the last line it printed; a non-zero exit throws with its stderr, named by `label`.
 */
export async function runJsonChild<T>(script: string, arg: unknown, label: string): Promise<T> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, script), JSON.stringify(arg)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((res) => child.once('exit', res));
  if (code !== 0) throw new Error(`${label} exited with ${code}: ${stderr.trim()}`);
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as T;
}
