import { randomBytes } from 'node:crypto';
import { Miniflare } from 'miniflare';
import { DRAIN_PATH, DRAIN_TOKEN_BINDING } from '../src/entries/workerd-drain.js';
import { bundleWorker, COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from './workerd-bundle.js';

/**
 * `pnpm serve:workerd`: the gateway's Worker on workerd (through Miniflare), the local twin of the deployed Worker
 * (infra/cloudflare). Reads the same environment as `flowgate serve` and passes it as bindings, listens on
 * FLOWGATE_HOST/FLOWGATE_PORT (0 = any free port), prints the "listening" JSON line once /healthz answers, and stops
 * on SIGINT/SIGTERM. Runs are executed by `flowgate worker` processes on the same database.
 */

/** The variables `flowgate serve` reads; everything else in the process environment stays out of the Worker. */
const PASSED = /^(FLOWGATE_|DATABASE_URL$|REDIS_URL$|OTEL_)/;

function bindingsOf(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => PASSED.test(entry[0]) && entry[1] !== undefined,
    ),
  );
}

function fail(message: string): never {
  process.stderr.write(`flowgate: ${message}\n`);
  process.exit(1);
}

const bindings = bindingsOf(process.env);
if (!bindings.DATABASE_URL)
  fail('DATABASE_URL: required on workerd (the embedded database runs on Node only)');
const host = bindings.FLOWGATE_HOST ?? '127.0.0.1';
const port = Number(bindings.FLOWGATE_PORT ?? '8787');
if (!Number.isInteger(port) || port < 0 || port > 65_535)
  fail(`FLOWGATE_PORT: not a port: ${bindings.FLOWGATE_PORT}`);

const { code } = await bundleWorker();
const drainToken = randomBytes(32).toString('base64url');
const miniflare = new Miniflare({
  modules: [{ type: 'ESModule', path: 'worker.js', contents: code }],
  compatibilityDate: COMPATIBILITY_DATE,
  compatibilityFlags: COMPATIBILITY_FLAGS,
  bindings: { ...bindings, [DRAIN_TOKEN_BINDING]: drainToken },
  host,
  port,
});

/**
 * Waits (at most 10 s, the Worker's own bound) for the requests whose work is not written yet: disposing Miniflare
 * kills workerd, and with it a response's `waitUntil` work (its audit entries) still running.
 */
async function drained(base: string): Promise<void> {
  const res = await miniflare.dispatchFetch(`${base}${DRAIN_PATH}`, {
    headers: { authorization: `Bearer ${drainToken}` },
  });
  await res.arrayBuffer();
}

let stopping = false;
/** The Worker's address once it is ready (a stop before that has nothing to drain). */
let url: string | undefined;
const stop = (signal: string, announce = true) => {
  if (stopping) return;
  stopping = true;
  if (announce) {
    process.stdout.write(
      `${JSON.stringify({ level: 30, time: Date.now(), msg: 'flowgate shutting down', signal })}\n`,
    );
  }
  (url ? drained(url).catch(() => {}) : Promise.resolve())
    .then(() => miniflare.dispose())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
};

const ready = await miniflare.ready;
// Miniflare's own signal hook kills workerd and exits 130/143 at once; ours drains the Worker, disposes it and exits
// 0, like the other runtimes. Its `exit` hook stays, so workerd never outlives this process.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.removeAllListeners(signal);
  process.once(signal, () => stop(signal));
}
// If what started this process is killed outright (no signal reaches us), stop with it rather than leave the Worker
// serving, orphaned. Nothing is written then: the pipe our output went to may be gone with it.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop('parent exited', false);
}, 1_000).unref();
url = `http://${ready.hostname}:${ready.port}`;
// The first request builds the app (config, database client): /healthz answering means the gateway serves.
const health = await miniflare.dispatchFetch(`${url}/healthz`);
if (health.status !== 200) {
  await miniflare.dispose();
  fail(`the Worker did not start: /healthz answered ${health.status} ${await health.text()}`);
}
await health.arrayBuffer();
process.stdout.write(
  `${JSON.stringify({
    level: 30,
    time: Date.now(),
    service: 'flowgate',
    msg: 'flowgate gateway listening',
    url,
    runtime: 'workerd',
    driver: 'postgres',
    worker: false,
  })}\n`,
);
