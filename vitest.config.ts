import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'apps/*/src/**/*.test.ts',
      'test/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', 'bench/**'],
    pool: 'forks',
    maxWorkers: 2,
    // PGlite boots and migrates per test file in ~3 s on this machine; end-to-end files start real servers.
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: ['default'],
  },
});
