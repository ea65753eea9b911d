import { Writable } from 'node:stream';
import { Hono } from 'hono';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../context.js';
import { requestIds } from './request-id.js';
import { requestLog } from './request-log.js';

describe('request log', () => {
  it('writes one line per request with the id, method, path without query, status and duration', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const app = new Hono<AppEnv>();
    app.use('*', requestIds(), requestLog(pino({ level: 'info' }, sink)));
    app.get('/things/:id', (c) => c.json({ ok: true }, 201));
    await app.request('/things/7?access_token=secret', { headers: { 'x-request-id': 'r-9' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ requestId: 'r-9', method: 'GET', path: '/things/7', status: 201 });
    expect(typeof lines[0]?.ms).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('secret');
  });
});
