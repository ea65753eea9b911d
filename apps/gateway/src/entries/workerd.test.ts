import { describe, expect, it } from 'vitest';
import { bundleWorker } from '../../scripts/workerd-bundle.js';

/** The Worker bundle holds what workerd can run: no embedded database, no Node telemetry SDK, no file reads. */
describe('the Worker bundle', () => {
  it('resolves @flowgate/db without PGlite and the migrations folder, telemetry without the Node SDK, Redis without ioredis', async () => {
    const { inputs, code } = await bundleWorker();
    const paths = Object.keys(inputs);
    expect(paths).toContain('apps/gateway/src/entries/workerd.ts');
    expect(paths).toContain('packages/db/src/per-request.ts');
    const forbidden = paths.filter((p) =>
      /@electric-sql\/pglite|drizzle-orm\/pglite|\/ioredis\/|packages\/db\/src\/(client|embedded)\.ts|sdk-node|node-sdk\.ts/.test(
        p,
      ),
    );
    expect(forbidden).toEqual([]);
    // Workers forbid `new Function`: no JSON Schema compiler (run inputs are checked by walking the schema).
    expect(paths.filter((p) => p.includes('node_modules/ajv/'))).toEqual([]);
    // postgres.js speaks over Workers' TCP sockets; the logger is pino's browser build.
    expect(code).toContain('cloudflare:sockets');
    expect(paths.some((p) => p.endsWith('pino/browser.js'))).toBe(true);
    // Rate limits reach Redis through the same sockets (no Node client): the RESP client of redis-socket.ts.
    expect(paths).toContain('apps/gateway/src/rate-limit/redis-socket.ts');
  }, 60_000);
});
