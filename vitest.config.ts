import { defineConfig } from 'vitest/config';

/**
 * `FLOWGATE_E2E_RUNTIME=bun|deno|workerd|node-process DATABASE_URL=… pnpm test` runs these end-to-end files against
 * that runtime's gateway in a child process (test/support/runtimes.ts). Each is listed because it drives the gateway
 * only over HTTP and through its own connection to the database. Left out, in-process only: mcp-waits (reads the
 * gateway's wait and run-waiter registries), runs-durability / runs-examples (wake the in-process worker),
 * runs-secrets (reads the worker's log lines in-process), the CLI and browser files (they start their own servers).
 * The in-process suite (no FLOWGATE_E2E_RUNTIME) still runs every file.
 */
export const RUNTIME_E2E_FILES = [
  'test/mcp-protocol.test.ts',
  'test/mcp-clients.test.ts',
  'test/mcp-modern.test.ts',
  'test/mcp-flows.test.ts',
  'test/mcp-flows-trust.test.ts',
  'test/mcp-runs.test.ts',
  'test/mcp-tasks.test.ts',
  'test/mcp-oauth.test.ts',
  'test/mcp-audit.test.ts',
  'test/console-sign-in.test.ts',
];

/** Files that need Postgres (several processes on one database): collected only when DATABASE_URL is set. */
const POSTGRES_ONLY_FILES = ['test/replicas.test.ts'];

const runtime = process.env.FLOWGATE_E2E_RUNTIME;

export default defineConfig({
  test: {
    include: runtime
      ? RUNTIME_E2E_FILES
      : [
          'packages/*/src/**/*.test.ts',
          'apps/*/src/**/*.test.ts',
          'test/**/*.test.ts',
          'scripts/**/*.test.ts',
        ],
    exclude: ['**/node_modules/**', 'bench/**', ...(process.env.DATABASE_URL ? [] : POSTGRES_ONLY_FILES)],
    pool: 'forks',
    maxWorkers: 2,
    // PGlite boots and migrates per test file in ~3 s on this machine; end-to-end files start real servers.
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: ['default'],
  },
});
