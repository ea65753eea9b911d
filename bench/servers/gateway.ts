/**
 * The real gateway in its own process, configured only from the environment (FLOWGATE_*), as `flowgate serve`
 * would be. Prints `READY {"url": …}` when listening; SIGTERM closes it gracefully. The benchmark drives
 * memory figures, CPU profiles, statement counts and the runs' timings over IPC (see ../lib/control.ts).
 */
import { createDb, schema } from '@flowgate/db';
import { databaseOptions, loadConfig, startGateway } from '@flowgate/gateway';
import { serveControl } from '../lib/control.js';
import { announceReady } from '../lib/proc.js';

const config = loadConfig(process.env);
// The database the gateway would open, opened here to see its statements: a check per statement, none on
// requests that send none.
let statements: string[] | null = null;
const db = await createDb({
  ...databaseOptions(config),
  onStatement: (text) => statements?.push(text),
});
await db.migrate();
const gateway = await startGateway({ config, db });
serveControl({
  async 'statements-start'() {
    statements = [];
    return {};
  },
  async 'statements-stop'() {
    const seen = statements ?? [];
    statements = null;
    return { statements: seen };
  },
  /** Every run's status and its database timestamps (ISO text): where a loaded call's time went. */
  async runs() {
    const rows = await db.db
      .select({
        status: schema.runs.status,
        created: schema.runs.createdAt,
        started: schema.runs.startedAt,
        finished: schema.runs.finishedAt,
      })
      .from(schema.runs);
    const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());
    return rows.map((r) => ({
      status: r.status,
      created: iso(r.created),
      started: iso(r.started),
      finished: iso(r.finished),
    }));
  },
});
announceReady({ url: gateway.url, pid: process.pid });

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void gateway
    .close()
    .then(() => db.close())
    .finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
