import { AppError, zodIssues } from '@flowgate/core';
import type { Context } from 'hono';
import type { z } from 'zod';

/** Reads a JSON body and validates it: 415 for another media type, 400 for bad JSON or a schema mismatch. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new AppError('unsupported_media_type', 'Content-Type must be application/json');
  }
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    if ((err as { status?: number }).status === 413) throw err;
    throw new AppError('invalid_request', 'request body could not be read');
  }
  // Postgres cannot store NUL in text; refuse it here with a clear error instead of failing at the database.
  if (/\\u0000/i.test(text))
    throw new AppError('invalid_request', 'strings must not contain NUL (\\u0000) characters');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new AppError('invalid_request', 'request body is not valid JSON');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new AppError('validation_failed', 'request body is invalid', zodIssues(parsed.error));
  return parsed.data;
}
