/**
 * The real gateway in its own process, configured only from the environment (FLOWGATE_*), as `flowgate serve`
 * would be. Prints `READY {"url": …}` when listening; SIGTERM closes it gracefully. The benchmark drives
 * memory figures and CPU profiles over IPC (see ../lib/control.ts).
 */
import { loadConfig, startGateway } from '@flowgate/gateway';
import { serveControl } from '../lib/control.js';
import { announceReady } from '../lib/proc.js';

const gateway = await startGateway({ config: loadConfig(process.env) });
serveControl();
announceReady({ url: gateway.url, pid: process.pid });

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void gateway.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
