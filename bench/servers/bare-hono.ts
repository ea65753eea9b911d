/**
 * Baseline: a bare Hono route on @hono/node-server (the gateway's own stack, same versions) that parses the
 * JSON-RPC body and answers with a JSON body of the same bytes as the gateway's response, read from
 * BENCH_RESPONSE_FILE. Only the request id is spliced in, so the route costs HTTP + body parse + write and
 * nothing else. Prints `READY {"url": …}`; answers the benchmark's IPC control (GC figures) like the gateway.
 */
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { z } from 'zod';
import { serveControl } from '../lib/control.js';
import { announceReady } from '../lib/proc.js';

const file = z.string().min(1).parse(process.env.BENCH_RESPONSE_FILE);
const text = readFileSync(file, 'utf8');
z.looseObject({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number()]) }).parse(JSON.parse(text));
// The recorded answer's own text after its id (`,"result":…}`), so the route answers exactly the gateway's bytes.
const idAt = text.indexOf('"id":');
const tail = text.slice(text.indexOf(',', idAt));
const app = new Hono();
app.post('/mcp', async (c) => {
  const req = (await c.req.json()) as { id?: unknown };
  return c.body(`{"jsonrpc":"2.0","id":${JSON.stringify(req.id ?? null)}${tail}`, 200, {
    'content-type': 'application/json',
  });
});

serveControl();
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  announceReady({ url: `http://127.0.0.1:${info.port}/mcp`, pid: process.pid });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
