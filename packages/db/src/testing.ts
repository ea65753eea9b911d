import { type ConnectionType, randomBase62 } from '@flowgate/core';
import { type FlowModel, validateFlow } from '@flowgate/flows';
import postgres from 'postgres';
import { expect } from 'vitest';
import { createDb, type Database, type DbHandle, type DbOptions } from './client.js';
import * as repos from './repos/index.js';
import type { NewRun } from './repos/runs.js';

export interface TestDbOptions {
  /** Sees the text of every statement sent, migrations included (tests count statements with it). */
  onStatement?: DbOptions['onStatement'];
}

/**
 * A fresh, migrated database for one test file: PGlite in memory by default, or a throwaway database on
 * the server named by `DATABASE_URL` (dropped on close) so the same tests run against real Postgres.
 */
export async function createTestDb(options: TestDbOptions = {}): Promise<DbHandle> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    const handle = await createDb({ onStatement: options.onStatement });
    await handle.migrate();
    return handle;
  }
  const database = await createEmptyTestDatabase(baseUrl);
  const handle = await createDb({ url: database.url, maxConnections: 4, onStatement: options.onStatement });
  await handle.migrate();
  const close = handle.close;
  handle.close = async () => {
    await close();
    await database.drop();
  };
  return handle;
}

/** A queued run of a stand-in flow `f` (version 1, live) for run-queue tests; `overrides` set what a test is about. */
export function testRun(workspaceId: string, id: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id,
    flowId: 'f',
    flowSlug: 'f',
    definitionWorkspaceId: workspaceId,
    installationId: null,
    version: 1,
    target: 'live',
    draftLiteral: null,
    toolName: null,
    invocation: 'default',
    input: {},
    secretInputs: [],
    concurrencyKey: null,
    principalType: null,
    principalId: null,
    idempotencyKey: null,
    deadlineAt: null,
    ...overrides,
  };
}

/**
 * A throwaway, unmigrated database on the Postgres server at `baseUrl`: for tests of what happens before
 * migrations (a worker that waits for them). `drop` removes it, closing any connection left to it.
 */
export async function createEmptyTestDatabase(
  baseUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `fg_test_${randomBase62(10).toLowerCase()}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  try {
    // Two files creating databases at the same instant contend for template1 (55006): retry with backoff.
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.unsafe(`create database ${name}`);
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== '55006' || attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = postgres(baseUrl, { max: 1, onnotice: () => {} });
      await dropper.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await dropper.end();
    },
  };
}

// ---- flow fixtures for the repository tests ---------------------------------------------------------------

/** What a test flow declares; `testFlowLiteral` writes it as EDN. */
export interface TestFlowSpec {
  slug: string;
  name?: string;
  description?: string;
  tags?: string[];
  tools?: Array<{ name: string; description?: string }>;
  requires?: Array<{ slot: string; type: ConnectionType }>;
  public?: boolean;
  comment?: string;
}

/** A valid definition literal for `spec`, with a comment line when `spec.comment` is set. */
export function testFlowLiteral(spec: TestFlowSpec): string {
  const q = (s: string) => JSON.stringify(s);
  const requires = spec.requires ?? [];
  const tools = spec.tools ?? [];
  const body = requires.length
    ? `(do ${requires.map((r) => `(flow/step :http :call-${r.slot} {:connection :${r.slot} :path "/x"})`).join(' ')})`
    : '(flow/input)';
  return [
    spec.comment ? `;; ${spec.comment}` : '',
    `{:slug :${spec.slug}`,
    spec.name ? ` :name ${q(spec.name)}` : '',
    spec.description ? ` :description ${q(spec.description)}` : '',
    ` :tags [${(spec.tags ?? []).map(q).join(' ')}]`,
    requires.length
      ? ` :requires [${requires.map((r) => `{:slot :${r.slot} :type :${r.type}}`).join(' ')}]`
      : '',
    ' :invocations {:default {:inputs [{:name :x :type :string}]}}',
    ` :interfaces {:mcp [${tools
      .map(
        (t) =>
          `{:tool-name ${q(t.name)}${t.description ? ` :description ${q(t.description)}` : ''} :invocation :default}`,
      )
      .join(' ')}]}`,
    ` :discover {:public ${spec.public ? 'true' : 'false'}}`,
    ` :flow ${body}}`,
  ]
    .filter(Boolean)
    .join('\n');
}

/** `testFlowLiteral` with the model the validator builds from it (what the repositories store). */
export function testFlowDraft(spec: TestFlowSpec): { literal: string; model: FlowModel } {
  const literal = testFlowLiteral(spec);
  const result = validateFlow(literal);
  if (!result.valid || !result.model)
    throw new Error(`test flow invalid: ${JSON.stringify(result.diagnostics)}`);
  return { literal, model: result.model };
}

/** A connection without a secret in workspace `ws`. */
export async function createTestConnection(
  db: Database,
  ws: string,
  id: string,
  type: ConnectionType = 'http-api',
): Promise<void> {
  await repos.createConnection(db, ws, {
    id,
    name: id,
    type,
    baseUrl: 'https://api.example.test',
    authType: 'none',
    secretCiphertext: null,
    config: {},
  });
}

/** Every page of a tool search as `[installation/]slug:source:tool` names, checking each cursor survives JSON. */
export async function allToolPages(
  db: Database,
  ws: string,
  options: Omit<repos.ToolSearchOptions, 'after'>,
): Promise<string[]> {
  const names: string[] = [];
  let after: repos.ToolSearchPosition | undefined;
  for (let i = 0; i < 1000; i++) {
    const page = await repos.searchFlowTools(db, ws, { ...options, after });
    names.push(
      ...page.items.map(
        (t) =>
          `${t.origin === 'installation' ? `${t.installationId}/` : ''}${t.flowSlug}:${t.source}:${t.toolName}`,
      ),
    );
    if (!page.next) return names;
    expect(repos.isToolSearchPosition(JSON.parse(JSON.stringify(page.next)))).toBe(true);
    after = page.next;
  }
  throw new Error('pagination did not end');
}
