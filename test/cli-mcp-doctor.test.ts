import { createServer } from 'node:net';
import { runWith } from '@flowgate/cli/testing';
import { CATALOG, LATEST_PROTOCOL_VERSION, TOOL_NAMES, type Toolset } from '@flowgate/workspace-mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { leakedSecrets, startScriptedUpstream, unusedKey } from './support/stdio-bridge.js';

/**
 * `flowgate mcp doctor` against the real gateway: a good key, a key of another workspace, a key without the
 * capabilities the chosen tools need, an unknown key, a stopped server, and upstreams that misbehave.
 */

const WS = 'ws-doctor';
const OTHER_WS = 'ws-doctor-other';
let gw: TestGateway;
let full: ServiceAccountKey;
let feedbackOnly: ServiceAccountKey;
let other: ServiceAccountKey;
const outputs: string[] = [];

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS, 'Doctor Inc');
  await gw.createWorkspace(OTHER_WS, 'Other Inc');
  full = await gw.mintKey(WS, ['workspace.full'], 'doctor-full');
  feedbackOnly = await gw.mintKey(WS, ['feedback.send'], 'doctor-feedback');
  other = await gw.mintKey(OTHER_WS, ['workspace.full'], 'doctor-other');
});

afterAll(async () => {
  await gw?.close();
  // nothing any doctor run printed carries a key
  expect(leakedSecrets([full.apiKey, feedbackOnly.apiKey, other.apiKey, unusedKey()], ...outputs)).toEqual(
    [],
  );
});

interface DoctorJson {
  ok: boolean;
  endpoint: string | null;
  token: { envVar: string; kind: string | null; keyId: string | null };
  headers: Record<string, string>;
  protocolVersion: string | null;
  server: { name: string | null; version: string | null } | null;
  tools: string[];
  toolCount: number;
  policy: {
    activeToolsets: string[];
    hiddenByNarrowing: Array<{ tool: string; reasons: string[] }>;
    hiddenByKeyOrWorkspace: Array<{ tool: string; needs: string[] }>;
  } | null;
  warnings: string[];
  failure: {
    stage: string;
    httpStatus: number | null;
    code: string | number | null;
    message: string;
    hint: string;
  } | null;
}

async function doctor(apiUrl: string, key: string | undefined, args: string[] = [], json = false) {
  const argv = [
    '--api-url',
    apiUrl,
    'mcp',
    'doctor',
    '--workspace-id',
    WS,
    '--token-env-var',
    'FG_KEY',
    ...args,
  ];
  const { code, stdout, stderr } = await runWith(json ? [...argv, '--json'] : argv, {
    env: key === undefined ? {} : { FG_KEY: key },
  });
  outputs.push(stdout, stderr);
  return { code, stdout, stderr, report: json ? (JSON.parse(stdout) as DoctorJson) : null };
}

const inToolsets = (...ts: Toolset[]) => CATALOG.filter((t) => t.toolsets.some((x) => ts.includes(x)));

describe('mcp doctor against a live gateway', () => {
  it('a good key: exit 0, endpoint, negotiated version, every tool by name', async () => {
    const r = await doctor(gw.url, full.apiKey);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`endpoint          ${gw.mcpUrl(WS)}`);
    expect(r.stdout).toContain(`token             $FG_KEY (API key id ${full.keyId})`);
    expect(r.stdout).toContain(`protocol version  ${LATEST_PROTOCOL_VERSION}`);
    expect(r.stdout).toContain(`tools (${TOOL_NAMES.length})`);
    expect(r.stdout).toContain(TOOL_NAMES.join(', '));
    expect(r.stdout).toContain(`OK: a client with these settings sees ${TOOL_NAMES.length} tools`);

    const j = await doctor(gw.url, full.apiKey, [], true);
    expect(j.code).toBe(0);
    expect(j.report).toMatchObject({
      ok: true,
      endpoint: gw.mcpUrl(WS),
      token: { envVar: 'FG_KEY', kind: 'api-key', keyId: full.keyId },
      protocolVersion: LATEST_PROTOCOL_VERSION,
      tools: TOOL_NAMES,
      toolCount: TOOL_NAMES.length,
      headers: {},
      warnings: [],
      failure: null,
    });
    expect(j.report?.policy?.hiddenByNarrowing).toEqual([]);
    expect(j.report?.policy?.hiddenByKeyOrWorkspace).toEqual([]);
  });

  it('narrowing flags: the headers sent, the narrowed list, and why the rest is hidden', async () => {
    const j = await doctor(gw.url, full.apiKey, ['--read-only', '--toolsets', 'read,feedback'], true);
    expect(j.code).toBe(0);
    const expected = inToolsets('read', 'feedback')
      .filter((t) => !t.mutating || t.readOnlyExempt)
      .map((t) => t.name);
    expect(j.report?.tools).toEqual(expected);
    expect(j.report?.headers).toEqual({ 'X-MCP-Readonly': 'true', 'X-MCP-Toolsets': 'read,feedback' });
    const hidden = j.report?.policy?.hiddenByNarrowing ?? [];
    expect(hidden.map((h) => h.tool)).toEqual(TOOL_NAMES.filter((n) => !expected.includes(n)));
    for (const h of hidden) {
      const def = CATALOG.find((t) => t.name === h.tool);
      if (def?.mutating && !def.readOnlyExempt) expect(h.reasons).toContain('read_only_policy');
      if (!def?.toolsets.some((ts) => ts === 'read' || ts === 'feedback'))
        expect(h.reasons).toContain('toolset_policy');
    }
  });

  it('a key of another workspace: exit 1 at initialize with 403 and a wrong-workspace hint', async () => {
    const r = await doctor(gw.url, other.apiKey);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'FAILED at stage initialize (HTTP 403): initialize: upstream answered 403: forbidden',
    );
    expect(r.stdout).toContain(`hint: the key does not grant access to workspace ${WS}`);
    const j = await doctor(gw.url, other.apiKey, [], true);
    expect(j.report?.failure).toMatchObject({ stage: 'initialize', httpStatus: 403, code: 'forbidden' });
    expect(j.report?.ok).toBe(false);
  });

  it('an unknown key: exit 1 at initialize with 401 and a hint naming the variable', async () => {
    const j = await doctor(gw.url, unusedKey(), [], true);
    expect(j.code).toBe(1);
    expect(j.report?.failure).toMatchObject({ stage: 'initialize', httpStatus: 401, code: 'invalid_token' });
    expect(j.report?.failure?.hint).toContain('check the key in $FG_KEY');
  });

  it('a key missing capabilities: the ungated tools are listed and the rest explained; exit 0', async () => {
    const j = await doctor(gw.url, feedbackOnly.apiKey, [], true);
    expect(j.code).toBe(0);
    const allowed = CATALOG.filter((t) => t.capabilities.every((c) => c === 'feedback.send')).map(
      (t) => t.name,
    );
    expect(allowed).toContain('get_workspace_context');
    expect(allowed).toContain('send_feedback');
    expect(j.report?.tools).toEqual(allowed);
    expect(j.report?.policy?.hiddenByKeyOrWorkspace).toEqual(
      CATALOG.filter((t) => !allowed.includes(t.name)).map((t) => ({
        tool: t.name,
        needs: [...t.capabilities],
      })),
    );
    expect(j.report?.warnings[0]).toMatch(/^hidden by the key's capabilities or workspace policy: /);
  });

  it('a key missing the capability every selected tool needs: nothing visible, exit 1 at stage list', async () => {
    const setup = inToolsets('setup');
    expect(setup.length).toBeGreaterThan(0);
    const r = await doctor(gw.url, feedbackOnly.apiKey, ['--toolsets', 'setup']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('tools (0)');
    expect(r.stdout).toContain('FAILED at stage list: tools/list answered with no tools');
    const needs = [...new Set(setup.flatMap((t) => t.capabilities))];
    expect(r.stdout).toContain(
      `hint: the key lacks the capabilities the selected tools need (${needs.join(', ')})`,
    );
  });

  it('a stopped server: exit 1 at stage connect with a connection hint', async () => {
    const port = await closedPort();
    const j = await doctor(`http://127.0.0.1:${port}`, full.apiKey, [], true);
    expect(j.code).toBe(1);
    expect(j.report?.failure).toMatchObject({ stage: 'connect', httpStatus: null, code: 'network' });
    expect(j.report?.failure?.message).toContain(
      `cannot reach the Flowgate API at http://127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(j.report?.failure?.hint).toContain('start the gateway');
  });
});

describe('mcp doctor: configuration problems and misbehaving upstreams', () => {
  it('an unknown toolset fails at stage config with the valid names, before any request', async () => {
    const upstream = await startScriptedUpstream((_b, res) => res.end());
    try {
      const r = await doctor(upstream.url, full.apiKey, ['--toolsets', 'reed']);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('FAILED at stage config: unknown narrowing names:');
      expect(r.stdout).toContain('--toolsets: unknown "reed"; valid: all, context, read, search, run, setup');
      const missing = await doctor(upstream.url, undefined, [], true);
      expect(missing.report?.failure).toMatchObject({ stage: 'config', httpStatus: null });
      expect(missing.report?.failure?.message).toBe(
        '$FG_KEY is not set or empty: export the workspace API key (fgk_…) or a JWT in it',
      );
      expect(upstream.bodies).toEqual([]);
    } finally {
      await upstream.close();
    }
  });

  it('an HTML 502 from a proxy fails at initialize with the status; a hang fails at connect after --timeout', async () => {
    const bad = await startScriptedUpstream((_b, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><title>502 Bad Gateway</title></html>');
    });
    const hang = await startScriptedUpstream(() => undefined);
    try {
      const r = await doctor(bad.url, full.apiKey, [], true);
      expect(r.report?.failure).toMatchObject({
        stage: 'initialize',
        httpStatus: 502,
        message: 'initialize: upstream answered 502: 502 Bad Gateway',
      });
      const started = Date.now();
      const h = await doctor(hang.url, full.apiKey, ['--timeout', '300'], true);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(h.code).toBe(1);
      expect(h.report?.failure).toMatchObject({ stage: 'connect', code: 'timeout', httpStatus: null });
      expect(h.report?.failure?.message).toBe(`no answer from ${hang.url} within 300 ms (--timeout)`);
      // doctor only ever sent initialize, never a tool call
      for (const body of [...bad.bodies, ...hang.bodies]) expect(JSON.parse(body).method).toBe('initialize');
    } finally {
      await bad.close();
      await hang.close();
    }
  });

  it('never calls a tool: the audit log of the live run holds no tools/call', async () => {
    await doctor(gw.url, full.apiKey);
    // the audit queue flushes every 250 ms; a marker entry written after the doctor run proves the flush
    await gw.setPolicy(WS, { readOnly: false });
    const audit = await gw.waitForAudit(WS, (items) =>
      items.some((i) => i.kind === 'admin' && i.action.includes('polic')),
    );
    expect(audit.filter((a) => a.kind === 'tools/call')).toEqual([]);
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
