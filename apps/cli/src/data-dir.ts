import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppError, randomBase62 } from '@flowgate/core';
import { z } from 'zod';

/**
 * The local data directory of `flowgate dev`: the embedded database (`pgdata/`), the encryption key the
 * gateway keeps for it (`encryption.key`, shared with `flowgate serve` on the same directory) and two
 * private files of the CLI — `dev-secrets.json` (the operator token, reused across runs) and
 * `demo-credentials.json` (the demo keys, shown once on the first run).
 */

export const DEV_SECRETS_FILE = 'dev-secrets.json';
export const DEMO_CREDENTIALS_FILE = 'demo-credentials.json';

export function resolveDataDir(env: Record<string, string | undefined>, cwd: string): string {
  return resolve(cwd, env.FLOWGATE_DATA_DIR || '.flowgate');
}

/** Creates the directory if needed and makes it owner-only: it holds the database and secrets. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Writes via a temp file and rename so a crash never leaves a half-written secrets file. */
export function writePrivateFile(path: string, content: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

const devSecretsSchema = z.object({ adminToken: z.string().min(32) });
export type DevSecrets = z.infer<typeof devSecretsSchema>;

/** Absent → undefined; present but unreadable → an error rather than silently replacing the token. */
export function readDevSecrets(dir: string): DevSecrets | undefined {
  const path = join(dir, DEV_SECRETS_FILE);
  if (!existsSync(path)) return undefined;
  const secrets = readJsonFile(path, devSecretsSchema);
  if (!secrets)
    throw new AppError(
      'invalid_request',
      `${path} is not valid; fix or remove it (a new operator token is then generated)`,
    );
  return secrets;
}

export function loadOrCreateDevSecrets(dir: string): { secrets: DevSecrets; created: boolean } {
  const existing = readDevSecrets(dir);
  if (existing) return { secrets: existing, created: false };
  const secrets: DevSecrets = { adminToken: `fga_${randomBase62(43)}` };
  writePrivateFile(join(dir, DEV_SECRETS_FILE), `${JSON.stringify(secrets, null, 2)}\n`);
  return { secrets, created: true };
}

const demoAccountSchema = z.object({
  name: z.string(),
  serviceAccountId: z.string(),
  capabilities: z.array(z.string()),
  keyId: z.string(),
  apiKey: z.string(),
});
const demoCredentialsSchema = z.object({
  workspaceId: z.string(),
  mcpUrl: z.string(),
  accounts: z.array(demoAccountSchema),
});
export type DemoAccount = z.infer<typeof demoAccountSchema>;
export type DemoCredentials = z.infer<typeof demoCredentialsSchema>;

export function demoCredentialsPath(dir: string): string {
  return join(dir, DEMO_CREDENTIALS_FILE);
}

/** Where the embedded database lives inside a data directory (the gateway opens the same path). */
export function embeddedDbDir(dataDir: string): string {
  return join(dataDir, 'pgdata');
}

export function readDemoCredentials(dir: string): DemoCredentials | undefined {
  return readJsonFile(demoCredentialsPath(dir), demoCredentialsSchema);
}

export function writeDemoCredentials(dir: string, credentials: DemoCredentials): void {
  writePrivateFile(demoCredentialsPath(dir), `${JSON.stringify(credentials, null, 2)}\n`);
}

/** A missing or unreadable file reads as absent. */
function readJsonFile<T>(path: string, schema: z.ZodType<T>): T | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
