import { AppError } from '@flowgate/core';
import { Hono } from 'hono';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../context.js';
import { createErrorHandler } from './errors.js';
import { requestIds } from './request-id.js';

function app() {
  const a = new Hono<AppEnv>();
  a.onError(createErrorHandler(pino({ level: 'silent' })));
  a.use('*', requestIds());
  a.get('/ok', (c) => c.json({ seen: c.get('requestId') }));
  a.get('/fails', () => {
    throw new AppError('forbidden', 'no');
  });
  a.get('/raw', () => new Response('raw'));
  return a;
}

describe('request ids', () => {
  it('makes a req_ id when none is sent, gives it to the route and echoes it', async () => {
    const res = await app().request('/ok');
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(await res.json()).toEqual({ seen: id });
  });

  it('accepts a well-formed incoming id and echoes it', async () => {
    for (const incoming of ['abc-123_X', 'trace=42', 'a'.repeat(64)]) {
      const res = await app().request('/ok', { headers: { 'x-request-id': incoming } });
      expect(res.headers.get('x-request-id')).toBe(incoming);
      expect(await res.json()).toEqual({ seen: incoming });
    }
  });

  it('replaces a malformed or overlong incoming id', async () => {
    for (const incoming of ['has space', 'a/b', '<script>', 'a'.repeat(65)]) {
      const res = await app().request('/ok', { headers: { 'x-request-id': incoming } });
      expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    }
  });

  it('is on error answers and on a Response a handler built itself', async () => {
    const failed = await app().request('/fails', { headers: { 'x-request-id': 'r-1' } });
    expect(failed.status).toBe(403);
    expect(failed.headers.get('x-request-id')).toBe('r-1');
    const raw = await app().request('/raw', { headers: { 'x-request-id': 'r-2' } });
    expect(await raw.text()).toBe('raw');
    expect(raw.headers.get('x-request-id')).toBe('r-2');
  });
});
