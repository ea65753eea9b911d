// Child process of `initEmbeddedDataDir` (embedded.ts): creates the cluster in argv[2], then exits, taking
// initdb's memory with it. Plain JavaScript so it runs under any loader (tsx, vitest, a compiled build).
// Its extensions must match pglite-worker.mjs (the flow-search migration creates them; PGlite can only create the
// ones it was started with).
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

const dataDir = process.argv[2];
if (!dataDir) process.exit(2);
const client = new PGlite(dataDir, { extensions: { pg_trgm, btree_gin } });
await client.waitReady;
await client.close();
process.exit(0);
