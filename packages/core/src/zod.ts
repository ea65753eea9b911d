import type { z } from 'zod';
import type { ErrorIssue } from './errors.js';

/** Flattens zod issues into `{path, message}` pairs that are safe to return to callers (no input values). */
export function zodIssues(error: z.core.$ZodError): ErrorIssue[] {
  return error.issues.slice(0, 20).map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
  }));
}
