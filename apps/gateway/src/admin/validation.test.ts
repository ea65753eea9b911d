import { AppError } from '@flowgate/core';
import { Hono } from 'hono';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { createErrorHandler } from '../middleware/errors.js';
import { jsonBody, pageParams, params } from './validation.js';

const body = z.strictObject({ name: z.string().min(1), tags: z.array(z.string()).default([]) });

function app() {
  const a = new Hono<AppEnv>();
  a.onError(createErrorHandler(pino({ level: 'silent' })));
  a.post('/things', jsonBody(body), (c) => c.json(c.req.valid('json')));
  a.post('/fails', jsonBody(body), () => {
    throw new AppError('conflict', 'already there');
  });
  a.get('/things', pageParams, (c) => c.json(c.req.valid('query')));
  a.get(
    '/things/:id',
    params(z.object({ id: z.string().regex(/^t_\d+$/) }), () => new AppError('not_found', 'no such thing')),
    (c) => c.json(c.req.valid('param')),
  );
  return a;
}

const post = (path: string, text: string, type = 'application/json') =>
  app().request(path, { method: 'POST', body: text, headers: { 'content-type': type } });

describe('jsonBody', () => {
  it('hands the parsed, defaulted body to the route', async () => {
    const res = await post('/things', '{"name":"a"}', 'application/json; charset=utf-8');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: 'a', tags: [] });
  });

  it('refuses another media type with 415, even a JSON-suffixed one', async () => {
    for (const type of ['text/plain', 'application/problem+json', '']) {
      const res = await post('/things', '{"name":"a"}', type);
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual({
        code: 'unsupported_media_type',
        message: 'Content-Type must be application/json',
      });
    }
  });

  it('refuses unparseable JSON and escaped NUL characters with 400 invalid_request', async () => {
    for (const text of ['{"name": ', '', 'nope']) {
      const res = await post('/things', text);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        code: 'invalid_request',
        message: 'request body is not valid JSON',
      });
    }
    const nul = await post('/things', '{"name":"a\\u0000b"}');
    expect(nul.status).toBe(400);
    expect(await nul.json()).toEqual({
      code: 'invalid_request',
      message: 'strings must not contain NUL (\\u0000) characters',
    });
  });

  it('lists the issues of a schema mismatch as validation_failed', async () => {
    const res = await post('/things', '{"name":"","extra":1}');
    expect(res.status).toBe(400);
    const json = await res.json();
    expect(json.code).toBe('validation_failed');
    expect(json.message).toBe('request body is invalid');
    expect(json.issues.map((i: { path: string }) => i.path).sort()).toEqual(['(root)', 'name']);
  });

  it("passes the route's own errors through unchanged", async () => {
    const res = await post('/fails', '{"name":"a"}');
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ code: 'conflict', message: 'already there' });
  });
});

describe('query and path parameters', () => {
  it('defaults and bounds the page query', async () => {
    expect(await (await app().request('/things')).json()).toEqual({ limit: 50 });
    expect(await (await app().request('/things?limit=3&cursor=abc')).json()).toEqual({
      limit: 3,
      cursor: 'abc',
    });
    for (const q of ['limit=0', 'limit=201', 'limit=x']) {
      const res = await app().request(`/things?${q}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ code: 'invalid_request', message: 'limit must be 1..200' });
    }
    const long = await app().request(`/things?cursor=${'c'.repeat(513)}`);
    expect(long.status).toBe(400);
    expect((await long.json()).code).toBe('invalid_cursor');
  });

  it('throws the given error for a bad path parameter', async () => {
    expect(await (await app().request('/things/t_1')).json()).toEqual({ id: 't_1' });
    const res = await app().request('/things/..%2Fetc');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'not_found', message: 'no such thing' });
  });
});
