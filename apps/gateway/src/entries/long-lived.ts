import { loadConfig } from '../config.js';
import { type Listen, startGateway } from '../server.js';

/**
 * The gateway in a long-lived process on Bun or Deno: the same environment variables as `flowgate serve`, on
 * Postgres only (`DATABASE_URL`), with runs executed by `flowgate worker` processes on the same database. Returns
 * once it listens; SIGINT/SIGTERM close it gracefully.
 */
export async function serveLongLived(runtime: 'bun' | 'deno', listen: Listen): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env, {
      requireDatabaseUrl: `required on ${runtime} (the embedded database runs on Node only)`,
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  // Runs are executed by `flowgate worker` processes (Node) on the same database.
  config.worker = false;
  const gateway = await startGateway({ config, runtime, listen }).catch((error: unknown) => {
    process.stderr.write(`flowgate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
  const stop = (signal: string) => {
    gateway.deps.logger.info({ signal }, 'flowgate shutting down');
    void gateway.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
