/**
 * The console's typed view of the admin API: the client type (`hc<AdminApi>`), the answers pages share, and the
 * reading of a refusal. Paths, bodies and answers are the routes' own types, so a changed route breaks the build here.
 */
import type { hc, InferRequestType, InferResponseType } from 'hono/client';
import { z } from 'zod';
import type { AdminApi } from '../admin/routes.js';

export type AdminClient = ReturnType<typeof hc<AdminApi>>;
type Ws = AdminClient['api']['workspaces'][':ws'];

export type ServiceAccount = InferResponseType<Ws['service-accounts']['$get'], 200>['items'][number];
export type Connection = InferResponseType<Ws['connections']['$get'], 200>['items'][number];
export type ConnectionCheck = InferResponseType<Ws['connections'][':id']['check']['$post'], 200>;
export type Installation = InferResponseType<Ws['installations']['$get'], 200>['items'][number];
export type InstallationPatch = InferRequestType<Ws['installations'][':id']['$patch']>['json'];

/** A refused admin call as a page shows it: the status to answer with and the API's message. */
export interface Refusal {
  status: number;
  message: string;
}

// The API's error body (`middleware/errors.ts`); read defensively all the same, since it is shown to the user.
const errorBody = z.object({
  message: z.string(),
  issues: z.array(z.unknown()).optional(),
});
const issue = z.object({ path: z.string(), message: z.string() });

/** The API's error message, with its validation issues (`path: message`) so a form says which field was wrong. */
export async function refusal(res: { status: number; json(): Promise<unknown> }): Promise<Refusal> {
  let parsed: z.infer<typeof errorBody> | null = null;
  try {
    const body = errorBody.safeParse(await res.json());
    parsed = body.success ? body.data : null;
  } catch {
    parsed = null;
  }
  if (!parsed) return { status: res.status, message: `request failed (${res.status})` };
  const issues = (parsed.issues ?? []).flatMap((i) => {
    const x = issue.safeParse(i);
    return x.success ? [`${x.data.path}: ${x.data.message}`] : [];
  });
  return {
    status: res.status,
    message: issues.length > 0 ? `${parsed.message}: ${issues.join('; ')}` : parsed.message,
  };
}

/**
 * What a form sent, as the body of the route it goes to. The console passes the values on as typed, like any other
 * client, so that the API's own validation answers (and the page shows it) rather than a second check here.
 */
export function formBody<T>(values: object): T {
  return values as T;
}
