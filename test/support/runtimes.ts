import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './stdio-bridge.js';

/**
 * The runtimes the end-to-end harness can run the gateway on. `node` is the gateway in the test process (the
 * default: tests may reach its internals); every other one is that runtime's entry started as a child process,
 * exactly as its `pnpm serve:<runtime>` script starts it, on Postgres, with runs executed by a Node worker in the
 * test process. Adding a runtime is one entry in CHILD_RUNTIMES.
 */

export interface ChildRuntime {
  /**
   * The binary itself, not the node_modules/.bin shim: the shims wrap it in `sh` or `node`, and SIGTERM to the
   * wrapper would leave the gateway running.
   */
  command(): string;
  args: string[];
  /** The `runtime` its "listening" line names: the harness refuses a gateway that runs somewhere else. */
  logsRuntime: string;
  /** Added to the environment the test passes (the runtime's own switches, never gateway configuration). */
  env?: Record<string, string>;
}

const NODE_MODULES = join(ROOT, 'node_modules');
const requireFromRoot = createRequire(join(ROOT, 'package.json'));

export const CHILD_RUNTIMES = {
  /** `flowgate serve` as its own Node process: the same contract as the others, with Node's entry. */
  'node-process': {
    command: () => process.execPath,
    args: ['--import', 'tsx', 'apps/cli/src/main.ts', 'serve'],
    logsRuntime: 'node',
  },
  /** `pnpm serve:bun` */
  bun: {
    // Bun's postinstall (allowed in pnpm-workspace.yaml) puts the platform binary here.
    command: () => join(NODE_MODULES, 'bun', 'bin', 'bun.exe'),
    args: ['apps/gateway/src/entries/bun.ts'],
    logsRuntime: 'bun',
  },
  /** `pnpm serve:deno` */
  deno: {
    // Deno's own resolver: the platform package's binary, linked into the package on first use (its postinstall
    // does not run here).
    command: () => (requireFromRoot('deno/install_api.cjs') as { runInstall(): string }).runInstall(),
    args: [
      'run',
      '--allow-all',
      '--sloppy-imports',
      '--unstable-no-legacy-abort',
      'apps/gateway/src/entries/deno.ts',
    ],
    logsRuntime: 'deno',
    env: { DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' },
  },
  /** `pnpm serve:workerd`: the Worker on workerd through Miniflare, with the same environment as bindings. */
  workerd: {
    // Node itself, not pnpm: SIGTERM must reach the runner, which disposes Miniflare (and workerd) and exits 0.
    command: () => process.execPath,
    args: ['--import', 'tsx', 'apps/gateway/scripts/serve-workerd.ts'],
    logsRuntime: 'workerd',
  },
} satisfies Record<string, ChildRuntime>;

export type ChildRuntimeName = keyof typeof CHILD_RUNTIMES;
export type E2eRuntime = 'node' | ChildRuntimeName;

export function isChildRuntime(name: string): name is ChildRuntimeName {
  return Object.hasOwn(CHILD_RUNTIMES, name);
}

/** FLOWGATE_E2E_RUNTIME: unset (or `node`) runs the gateway in-process; an unknown name fails the run. */
export function e2eRuntime(value = process.env.FLOWGATE_E2E_RUNTIME): E2eRuntime {
  if (!value || value === 'node') return 'node';
  if (isChildRuntime(value)) return value;
  throw new Error(
    `FLOWGATE_E2E_RUNTIME=${value} is not a runtime the harness knows (node, ${Object.keys(CHILD_RUNTIMES).join(', ')})`,
  );
}

/** Environment variables of the test process a runtime needs to start at all; nothing of Flowgate's. */
const PASSED_THROUGH = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'DENO_DIR', 'XDG_CACHE_HOME'];

const INFO = 30;
const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: INFO, warn: 40, error: 50, fatal: 60 };

export interface ChildGateway {
  url: string;
  port: number;
  child: ChildProcessWithoutNullStreams;
  /** SIGTERM, then waits for the graceful exit (SIGKILL after `graceMs`); resolves to the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts `runtime`'s gateway with `env` (FLOWGATE_PORT=0 on loopback) and resolves once it logs its "listening"
 * line. The child logs at `info` at least, to say where it listens; `logLines` receives the lines at the level the
 * test asked for, as the in-process logger would have written them.
 */
export async function spawnChildGateway(
  runtime: ChildRuntimeName,
  env: Record<string, string>,
  options: { logLines?: string[]; startTimeoutMs?: number } = {},
): Promise<ChildGateway> {
  const spec: ChildRuntime = CHILD_RUNTIMES[runtime];
  const asked = env.FLOWGATE_LOG_LEVEL ?? 'info';
  const threshold = LEVELS[asked] ?? Number.POSITIVE_INFINITY;
  const base: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = process.env[name];
    if (value !== undefined) base[name] = value;
  }
  const child = spawn(spec.command(), spec.args, {
    cwd: ROOT,
    env: {
      ...base,
      DO_NOT_TRACK: '1',
      ...spec.env,
      ...env,
      FLOWGATE_HOST: '127.0.0.1',
      FLOWGATE_PORT: '0',
      FLOWGATE_LOG_LEVEL: threshold < INFO ? asked : 'info',
    },
    stdio: 'pipe',
  });
  // A test process that dies must not leave gateways behind.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      process.off('exit', reap);
      resolve(code);
    }),
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let pending = '';
  let onListening: (said: { url: string; runtime: unknown }) => void = () => {};
  const listening = new Promise<{ url: string; runtime: unknown }>((resolve) => {
    onListening = resolve;
  });
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString();
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let parsed: { msg?: unknown; url?: unknown; level?: unknown; runtime?: unknown } | null = null;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = null;
      }
      if (parsed?.msg === 'flowgate gateway listening' && typeof parsed.url === 'string')
        onListening({ url: parsed.url, runtime: parsed.runtime });
      if (options.logLines && typeof parsed?.level === 'number' && parsed.level >= threshold)
        options.logLines.push(`${line}\n`);
    }
  });
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  const url = await Promise.race([
    listening.then((said) => {
      started = true;
      if (said.runtime !== spec.logsRuntime)
        throw new Error(
          `the ${runtime} gateway says it runs on ${String(said.runtime)}, not ${spec.logsRuntime}`,
        );
      return said.url;
    }),
    exited.then((code) => {
      // After it listened, an exit is what stop() reports, not a start failure.
      if (started) return new Promise<never>(() => {});
      throw new Error(`the ${runtime} gateway exited (${code}) before listening:\n${stderr.slice(-4000)}`);
    }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `the ${runtime} gateway did not listen within ${timeoutMs} ms:\n${stderr.slice(-4000)}`,
            ),
          ),
        timeoutMs,
      );
    }),
  ])
    .catch((err: unknown) => {
      child.kill('SIGKILL');
      throw err;
    })
    .finally(() => clearTimeout(timer));
  let stopping: Promise<number | null> | null = null;
  return {
    url,
    port: Number(new URL(url).port),
    child,
    stop(graceMs = 15_000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        try {
          return await exited;
        } finally {
          clearTimeout(killer);
        }
      })();
      return stopping;
    },
  };
}
