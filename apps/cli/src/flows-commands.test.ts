import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DbHandle } from '@flowgate/db';
import { repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { EXAMPLE_FLOWS } from '@flowgate/flows';
import { loadConfig, type RunningGateway, startGateway } from '@flowgate/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import { formatDiagnostics, slugOf } from './flows-commands.js';
import { DEMO_SECRET, seedDemo } from './seed.js';
import { runWith } from './testing.js';

// The real gateway on loopback (PGlite, or Postgres when DATABASE_URL is set); the CLI runs in-process against it.
const TOKEN = `op_${randomBytes(24).toString('hex')}`;
let db: DbHandle;
let gateway: RunningGateway;
let client: AdminClient;
let dir: string;
let env: Record<string, string>;

const ENRICH = EXAMPLE_FLOWS['enrich-company'] as string;

function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}

const cli = (...argv: string[]) => runWith(argv, { env, cwd: dir });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fg-flows-cli-'));
  db = await createTestDb();
  const config = loadConfig({
    FLOWGATE_PORT: '0',
    FLOWGATE_ADMIN_TOKEN: TOKEN,
    FLOWGATE_DATA_DIR: dir,
    FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    FLOWGATE_LOG_LEVEL: 'silent',
  });
  gateway = await startGateway({ config, db });
  client = new AdminClient({ apiUrl: gateway.url, token: TOKEN });
  env = { FLOWGATE_API_URL: gateway.url, FLOWGATE_ADMIN_TOKEN: TOKEN };
  for (const id of ['ws-cli', 'ws-cli-installer']) await client.createWorkspace({ id, name: id });
});

afterAll(async () => {
  await gateway?.close();
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('flowgate flows push|release', () => {
  it('pushes a file under the slug it declares and releases it', async () => {
    const pushed = await cli('flows', 'push', file('enrich.edn', ENRICH), '--workspace', 'ws-cli');
    expect(pushed).toEqual({ code: 0, stdout: 'Saved draft of enrich-company in ws-cli\n', stderr: '' });

    const r1 = await cli('flows', 'release', 'enrich-company', '--workspace', 'ws-cli', '--note', 'first');
    expect(r1).toEqual({ code: 0, stdout: 'enrich-company is live at version 1\n', stderr: '' });
    const again = await cli('flows', 'release', 'enrich-company', '--workspace', 'ws-cli');
    expect(again.stdout).toBe(
      'enrich-company is live at version 1 (unchanged draft: existing version reused)\n',
    );

    await cli('flows', 'push', file('enrich2.edn', `;; second\n${ENRICH}`), '--workspace', 'ws-cli');
    expect((await cli('flows', 'release', 'enrich-company', '--workspace', 'ws-cli')).stdout).toBe(
      'enrich-company is live at version 2\n',
    );
    expect(
      (await cli('flows', 'release', 'enrich-company', '--workspace', 'ws-cli', '--version', '1')).stdout,
    ).toBe('enrich-company is live at version 1\n');
    const json = await cli(
      '--json',
      'flows',
      'release',
      'enrich-company',
      '--workspace',
      'ws-cli',
      '--version',
      '2',
    );
    expect(JSON.parse(json.stdout)).toEqual({
      flowSlug: 'enrich-company',
      version: 2,
      created: false,
      previousLiveVersion: 1,
      releaseNote: null,
    });

    const list = await cli('flows', 'list', '--workspace', 'ws-cli');
    expect(list.stdout).toMatch(
      /^SLUG +LIVE +LATEST +DRAFT +PUBLIC +NAME\nenrich-company +2 +2 +yes +yes +Enrich company\n$/,
    );
    const missing = await cli(
      'flows',
      'release',
      'enrich-company',
      '--workspace',
      'ws-cli',
      '--version',
      '7',
    );
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: not_found: flow enrich-company has no version 7\n',
    });
  });

  it('prints the server diagnostics with file:line:column and exits 1 when the definition is invalid', async () => {
    const text =
      '{:slug :broken\n :invocations {:default {:inputs []}}\n :interfaces {:mcp [{:tool-name "has spaces" :invocation :default}]}\n :flow (flow/input)}';
    const r = await cli('flows', 'push', file('broken.edn', text), '--workspace', 'ws-cli');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('Draft of broken not saved: the definition is invalid\n');
    expect(r.stderr).toContain(
      'broken.edn:3:33: error invalid_tool_name: tool name "has spaces" is not valid\n  at :interfaces :mcp 0 :tool-name\n  hint: ',
    );
    expect(await repos.getFlow(db.db, 'ws-cli', 'broken')).toBeNull();

    const json = await cli('--json', 'flows', 'push', 'broken.edn', '--workspace', 'ws-cli');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      flowSlug: 'broken',
      valid: false,
      diagnostics: [{ code: 'invalid_tool_name' }],
    });
  });

  it('reports an unreadable file locally, with positions, without calling the server', async () => {
    const r = await cli(
      'flows',
      'push',
      file('unreadable.edn', '{:slug :x\n :flow (do [1 2)}'),
      '--workspace',
      'ws-cli',
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^unreadable\.edn:2:16: error edn_mismatched_delimiter: /);
    expect(await repos.getFlow(db.db, 'ws-cli', 'x')).toBeNull();

    const absent = await cli('flows', 'push', 'nope.edn', '--workspace', 'ws-cli');
    expect(absent).toEqual({ code: 1, stdout: '', stderr: 'error: invalid_request: cannot read nope.edn\n' });
    const big = await cli(
      'flows',
      'push',
      file('big.edn', `;; ${'x'.repeat(160 * 1024)}\n${ENRICH}`),
      '--workspace',
      'ws-cli',
    );
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(
      /^error: payload_too_large: big\.edn is \d+ bytes; a flow definition is at most 153600\n$/,
    );
    const badSlug = await cli('flows', 'release', '../etc', '--workspace', 'ws-cli');
    expect(badSlug.code).toBe(1);
    expect(badSlug.stderr).toContain('a flow slug is letters');
  });

  it('formats diagnostics without a position as file-level lines', () => {
    expect(
      formatDiagnostics('f.edn', [
        {
          severity: 'error',
          code: 'definition_too_large',
          message: 'too big',
          path: '',
          line: null,
          column: null,
          hint: '',
        },
      ]),
    ).toBe('f.edn: error definition_too_large: too big\n');
    expect(slugOf('{:slug :ok :flow (flow/input)}')).toBe('ok');
    expect(slugOf('{:slug "not-a-keyword"}')).toBeUndefined();
    expect(slugOf('{:slug :../x}')).toBeUndefined();
  });
});

describe('flowgate flows bindings set and installations', () => {
  it("binds a slot, installs the public flow elsewhere, binds the installer's connection and enables it", async () => {
    const conn = await client.createConnection('ws-cli', {
      name: 'crm',
      type: 'http-api',
      baseUrl: 'https://api.example.test',
      auth: { type: 'none' },
    });
    const bound = await cli(
      'flows',
      'bindings',
      'set',
      'enrich-company',
      '--workspace',
      'ws-cli',
      '--slot',
      `crm=${conn.connectionId}`,
    );
    expect(bound).toEqual({
      code: 0,
      stdout: `Bindings of enrich-company (live)\ncrm: ${conn.connectionId}\n`,
      stderr: '',
    });
    const badForm = await cli(
      'flows',
      'bindings',
      'set',
      'enrich-company',
      '--workspace',
      'ws-cli',
      '--slot',
      'crm',
    );
    expect(badForm.code).toBe(1);
    const wrongSlot = await cli(
      'flows',
      'bindings',
      'set',
      'enrich-company',
      '--workspace',
      'ws-cli',
      '--slot',
      `mail=${conn.connectionId}`,
    );
    expect(wrongSlot.code).toBe(1);
    expect(wrongSlot.stderr).toContain('slots.mail: the flow does not require a slot mail; it requires: crm');

    const created = await cli(
      '--json',
      'installations',
      'create',
      '--workspace',
      'ws-cli-installer',
      '--source-workspace',
      'ws-cli',
      '--flow',
      'enrich-company',
    );
    expect(created.code).toBe(0);
    const inst = JSON.parse(created.stdout);
    expect(inst).toMatchObject({
      flowSlug: 'enrich-company',
      enabled: false,
      missingSlots: ['crm'],
      versionPolicy: 'track-latest',
    });
    const human = await cli('installations', 'list', '--workspace', 'ws-cli-installer');
    expect(human.stdout).toContain(`${inst.installationId}  ws-cli/enrich-company  track-latest  no`);

    const early = await cli(
      'installations',
      'update',
      inst.installationId,
      '--workspace',
      'ws-cli-installer',
      '--enable',
    );
    expect(early).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('bind every required slot before enabling: crm'),
    });
    // the source workspace's connection is not the installer's
    const foreign = await cli(
      'installations',
      'update',
      inst.installationId,
      '--workspace',
      'ws-cli-installer',
      '--slot',
      `crm=${conn.connectionId}`,
    );
    expect(foreign.code).toBe(1);

    const own = await client.createConnection('ws-cli-installer', {
      name: 'crm',
      type: 'http-api',
      baseUrl: 'https://api.example.test',
      auth: { type: 'none' },
    });
    const enabled = await cli(
      'installations',
      'update',
      inst.installationId,
      '--workspace',
      'ws-cli-installer',
      '--slot',
      `crm=${own.connectionId}`,
      '--enable',
      '--pin',
      '1',
    );
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toContain(`Updated installation ${inst.installationId}`);
    expect(enabled.stdout).toMatch(/pinned v1 +yes +no/);
    const nothing = await cli(
      'installations',
      'update',
      inst.installationId,
      '--workspace',
      'ws-cli-installer',
    );
    expect(nothing).toMatchObject({ code: 1, stderr: expect.stringContaining('nothing to update') });
  });
});

describe('demo seeding of sample flows', () => {
  it('pushes, releases and binds every sample flow once; a second run changes nothing', async () => {
    const mcpUrl = `${gateway.url}/api/workspaces/ws-demo/mcp`;
    const first = await seedDemo(client, { mcpUrl, demoApiUrl: 'http://127.0.0.1:5001' });
    const expected = Object.values(EXAMPLE_FLOWS).map((edn) => slugOf(edn));
    expect(first.flows).toEqual(expected);
    const versionsAfterFirst: Record<string, unknown> = {};
    for (const slug of first.flows) {
      const flow = await client.getFlow('ws-demo', slug);
      // The demo's own flows are trusted at seed time, so agents see their descriptions.
      expect(flow).toMatchObject({ liveVersion: 1, latestVersion: 1, trustMetadata: true });
      const requires = (await repos.getDefinition(db.db, 'ws-demo', slug, 'live'))?.model.requires ?? [];
      expect(Object.keys((flow.bindings as { live: Record<string, string> }).live).sort()).toEqual(
        requires.map((r) => r.slot).sort(),
      );
      versionsAfterFirst[slug] = flow.versions;
    }
    const connections = await client.listConnections('ws-demo');
    expect(connections.items.every((c) => c.name.startsWith('demo-'))).toBe(true);
    expect(
      connections.items.every((c) => (c as { auth?: { hasSecret?: boolean } }).auth?.hasSecret === true),
    ).toBe(true);
    expect(JSON.stringify(connections)).not.toContain(DEMO_SECRET);
    const targets = (items: typeof connections.items) =>
      Object.fromEntries(items.map((c) => [c.name, [c.baseUrl, c.model]]));
    expect(targets(connections.items)).toEqual({
      'demo-crm': ['http://127.0.0.1:5001/crm', null],
      'demo-docs': ['http://127.0.0.1:5001/docs/mcp', null],
      'demo-fulfilment': ['http://127.0.0.1:5001/fulfilment', null],
      'demo-helpdesk': ['http://127.0.0.1:5001/helpdesk', null],
      'demo-llm': ['http://127.0.0.1:5001/llm/v1', 'demo-model'],
      'demo-mailer': ['http://127.0.0.1:5001/mailer', null],
      'demo-sales': ['http://127.0.0.1:5001/sales', null],
    });

    // A later run's stand-in listens elsewhere: the demo connections follow it, nothing else changes.
    const second = await seedDemo(client, {
      mcpUrl,
      demoApiUrl: 'http://127.0.0.1:5002',
      existing: first.credentials,
    });
    expect(second.flows).toEqual(first.flows);
    for (const slug of second.flows) {
      expect((await client.getFlow('ws-demo', slug)).versions).toEqual(versionsAfterFirst[slug]);
    }
    const moved = (await client.listConnections('ws-demo')).items;
    expect(moved).toHaveLength(connections.items.length);
    expect(targets(moved)['demo-crm']).toEqual(['http://127.0.0.1:5002/crm', null]);
    expect(targets(moved)['demo-docs']).toEqual(['http://127.0.0.1:5002/docs/mcp', null]);
    expect(moved.map((c) => c.connectionId).sort()).toEqual(
      connections.items.map((c) => c.connectionId).sort(),
    );
    // the demo's read-only key finds the sample flow tools
    const tools = await repos.searchFlowTools(db.db, 'ws-demo', { limit: 50 });
    expect(tools.items.map((t) => t.toolName).sort()).toEqual(
      [
        'answer_from_docs',
        'daily_sales_report',
        'enrich_company',
        'forward_order',
        'start_trial_follow_up',
        'summarize_text',
        'triage_ticket',
      ].sort(),
    );
  });
});
