import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, readCpuMs } from './proc.js';

/**
 * A server child on any runtime (node, bun, deno, a workerd runner): started from a shell command in its own
 * process group, so stopping it reaches whatever it started (workerd under Miniflare, a wrapper's child), and
 * its CPU time is that of the whole process tree.
 */
export interface ServerProc {
  label: string;
  pid: number;
  ready: Record<string, unknown>;
  /** User + system CPU of the process and all its descendants, in ms. */
  cpuMs(): number;
  /** SIGTERM to the group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServerProcOptions {
  label: string;
  /** A shell command line, run as `sh -c 'exec <command>'` from the repository root. */
  command: string;
  env?: Record<string, string>;
  /** The ready payload from a stdout line, or undefined for a line that is not it. */
  readyFrom(line: string): Record<string, unknown> | undefined;
  /** Also polled every 250 ms when given: a payload once the server answers (e.g. /healthz on a known port). */
  readyPoll?: () => Promise<Record<string, unknown> | undefined>;
  readyTimeoutMs?: number;
}

const live = new Set<ChildProcess>();
let hooked = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function installExitHooks(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const c of live) killGroup(c, 'SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      for (const c of live) killGroup(c, 'SIGKILL');
      process.exit(130);
    });
  }
}

/** The pids of `root` and all its descendants, from /proc (Linux). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

export function treeCpuMs(root: number): number {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      total += readCpuMs(pid);
    } catch {
      // exited between listing and reading
    }
  }
  return total;
}

/**
 * CPU (ms) by pid of the Postgres backends serving database `name` (`postgres: <user> <name> <client> …` in their
 * command line): what the requests cost on the database side, on the same cores. Empty when /proc does not show them.
 */
export function postgresBackends(name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmd.startsWith('postgres: ') || !cmd.split(' ').includes(name)) continue;
      out.set(Number(entry), readCpuMs(Number(entry)));
    } catch {
      // exited, or not ours to read
    }
  }
  return out;
}

/**
 * What the backends of `name` spent between two readings, and how many connections were opened in between. A backend
 * that both started and ended between the readings is not seen: with connections per request the CPU is a floor.
 */
export function postgresDelta(
  before: Map<number, number>,
  after: Map<number, number>,
): { cpuMs: number; opened: number } {
  let cpuMs = 0;
  let opened = 0;
  for (const [pid, ms] of after) {
    const was = before.get(pid);
    if (was === undefined) opened++;
    cpuMs += ms - (was ?? 0);
  }
  return { cpuMs, opened };
}

/** A loopback port free right now (the server binds it a moment later; nothing else here races for ports). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A directory of links to the real `bun` and `deno` executables, put first on the children's PATH: the npm
 * packages' `.bin` entries are wrappers (a shell script that does not exec; a Node script that spawns deno and
 * waits), which would add a process to each server and keep SIGTERM from reaching the runtime.
 */
function runtimeBinDir(): string {
  const dir = join(ROOT, '.tmp', 'bench-bin');
  mkdirSync(dir, { recursive: true });
  const link = (name: string, target: string | undefined) => {
    const path = join(dir, name);
    if (target && existsSync(target) && !existsSync(path)) symlinkSync(target, path);
  };
  const require = createRequire(join(ROOT, 'package.json'));
  const pkg = (name: string) => {
    try {
      return dirname(require.resolve(`${name}/package.json`));
    } catch {
      return undefined;
    }
  };
  const bun = pkg('bun');
  link('bun', bun && join(bun, 'bin', 'bun.exe'));
  const deno = pkg('deno');
  if (deno) {
    const own = join(deno, 'deno');
    let target: string | undefined = existsSync(own) ? own : undefined;
    if (!target) {
      try {
        const fromDeno = createRequire(join(deno, 'package.json'));
        target = join(dirname(fromDeno.resolve(`@deno/${platform()}-${arch()}-glibc/package.json`)), 'deno');
      } catch {
        target = undefined;
      }
    }
    link('deno', target);
  }
  return dir;
}

let binDir: string | undefined;

export function childPath(): string {
  binDir ??= runtimeBinDir();
  return [binDir, join(ROOT, 'node_modules', '.bin'), process.env.PATH ?? ''].join(':');
}

/** The command line of a package.json script (`pnpm <name>` without pnpm's own process), or undefined. */
export function packageScript(name: string): string | undefined {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  return pkg.scripts?.[name];
}

export function spawnServer(options: ServerProcOptions): Promise<ServerProc> {
  installExitHooks();
  // DATABASE_URL and REDIS_URL only when given: a shell export must not pick the database or the rate-limit store
  // behind a benchmark's back.
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...rest } = process.env;
  const child = spawn('sh', ['-c', `exec ${options.command}`], {
    cwd: ROOT,
    env: { ...rest, PATH: childPath(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  const exited = new Promise<void>((res) =>
    child.once('exit', () => {
      live.delete(child);
      res();
    }),
  );
  const forward = (line: string) => process.stderr.write(`  [${options.label}] ${line}\n`);
  createInterface({ input: child.stderr! }).on('line', forward);
  return new Promise<ServerProc>((resolve, reject) => {
    let settled = false;
    const timeoutMs = options.readyTimeoutMs ?? 120_000;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poller);
      killGroup(child, 'SIGKILL');
      reject(err);
    };
    const timer = setTimeout(
      () => fail(new Error(`${options.label}: not ready within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const succeed = (ready: Record<string, unknown>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poller);
      resolve({
        label: options.label,
        pid: child.pid ?? -1,
        ready,
        cpuMs: () => treeCpuMs(child.pid ?? -1),
        async stop(graceMs = 10_000) {
          if (child.exitCode !== null || child.signalCode !== null) return;
          killGroup(child, 'SIGTERM');
          const t = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
          await exited;
          clearTimeout(t);
          // What the runtime left behind in its group (e.g. workerd under a runner that exited first).
          killGroup(child, 'SIGKILL');
        },
      });
    };
    let polling = false;
    const poller = setInterval(() => {
      if (!options.readyPoll || polling || settled) return;
      polling = true;
      options
        .readyPoll()
        .then((ready) => ready && succeed(ready))
        .catch(() => {})
        .finally(() => {
          polling = false;
        });
    }, 250);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const ready = settled ? undefined : options.readyFrom(line);
      if (ready) succeed(ready);
      else forward(line);
    });
    void exited.then(() =>
      fail(new Error(`${options.label}: exited (${child.exitCode ?? child.signalCode}) before it was ready`)),
    );
  });
}
