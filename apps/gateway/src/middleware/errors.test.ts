import { Writable } from 'node:stream';
import { AppError } from '@flowgate/core';
import { Hono } from 'hono';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../context.js';
import { createErrorHandler } from './errors.js';

function app(logged: string[] = []) {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  const a = new Hono<AppEnv>();
  a.onError(createErrorHandler(pino({ level: 'info' }, sink)));
  a.get('/challenge', () => {
    throw new AppError('invalid_token', 'token expired', undefined, {
      headers: { 'WWW-Authenticate': 'Bearer realm="flowgate", error="invalid_token"' },
    });
  });
  a.get('/issues', () => {
    throw new AppError('validation_failed', 'request body is invalid', [
      { path: 'name', message: 'required' },
    ]);
  });
  a.get('/boom', () => {
    throw new Error('database password=hunter2 refused');
  });
  return a;
}

describe('the error handler', () => {
  it('renders an AppError as {code, message} with its status and the headers it carries', async () => {
    const res = await app().request('/challenge');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="flowgate", error="invalid_token"');
    expect(await res.json()).toEqual({ code: 'invalid_token', message: 'token expired' });
    const issues = await app().request('/issues');
    expect(issues.status).toBe(400);
    expect(await issues.json()).toEqual({
      code: 'validation_failed',
      message: 'request body is invalid',
      issues: [{ path: 'name', message: 'required' }],
    });
  });

  it('turns anything else into a generic 500 and logs it without a stack', async () => {
    const logged: string[] = [];
    const res = await app(logged).request('/boom');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      code: 'internal_error',
      message: 'internal error; the request id identifies it in the logs',
    });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('"code":"internal_error"');
    expect(logged[0]).not.toContain('at ');
  });
});
