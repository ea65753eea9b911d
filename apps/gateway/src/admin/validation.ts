import { AppError, zodIssues } from '@flowgate/core';
import { zValidator } from '@hono/zod-validator';
import { HTTPException } from 'hono/http-exception';
import type { z } from 'zod';
import { invalidCursor } from './cursor.js';
import { pageQuery } from './schemas.js';

const JSON_TYPE = /^application\/json\s*(;|$)/i;
// Postgres cannot store NUL in text; refuse it here with a clear error instead of failing at the database.
const ESCAPED_NUL = /\\u0000/i;

/**
 * Validates a JSON body against `schema` for `c.req.valid('json')`: 415 for another media type, 400
 * `invalid_request` for unreadable JSON or a NUL character, 400 `validation_failed` with the issues for a mismatch.
 */
export function jsonBody<S extends z.ZodType>(schema: S) {
  const validate = zValidator('json', schema, (result) => {
    if (!result.success)
      throw new AppError('validation_failed', 'request body is invalid', zodIssues(result.error));
  });
  const guarded: typeof validate = async (c, next) => {
    if (!JSON_TYPE.test(c.req.header('content-type') ?? '')) {
      throw new AppError('unsupported_media_type', 'Content-Type must be application/json');
    }
    let text: string;
    try {
      // Cached by Hono: the validator parses this same text.
      text = await c.req.text();
    } catch (err) {
      if ((err as { status?: number }).status === 413) throw err;
      throw new AppError('invalid_request', 'request body could not be read');
    }
    if (ESCAPED_NUL.test(text))
      throw new AppError('invalid_request', 'strings must not contain NUL (\\u0000) characters');
    let validated = false;
    try {
      return await validate(c, async () => {
        validated = true;
        await next();
      });
    } catch (err) {
      // Hono's validator reports unparseable JSON as an HTTPException; anything the route throws passes through.
      if (!validated && err instanceof HTTPException && err.status === 400)
        throw new AppError('invalid_request', 'request body is not valid JSON');
      throw err;
    }
  };
  return guarded;
}

/**
 * Validates the query string against `schema` for `c.req.valid('query')`; a mismatch throws `fail()`, except that a
 * cursor no list could have issued is the cursor's fault (400 `invalid_cursor`), whatever else is wrong.
 */
export function query<S extends z.ZodType>(schema: S, fail: () => AppError) {
  return zValidator('query', schema, (result) => {
    if (result.success) return;
    if (result.error.issues.some((i) => i.path[0] === 'cursor')) throw invalidCursor();
    throw fail();
  });
}

/** Validates path parameters against `schema` for `c.req.valid('param')`; a mismatch throws `fail()`. */
export function params<S extends z.ZodType>(schema: S, fail: () => AppError) {
  return zValidator('param', schema, (result) => {
    if (!result.success) throw fail();
  });
}

/** `?limit&cursor` of every admin list. */
export const pageParams = query(pageQuery, () => new AppError('invalid_request', 'limit must be 1..200'));
