import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { CliIo } from '../cli-io.js';
import { runCli } from '../program.js';
import { PROVIDERS, sanitizeServerName, TRANSPORTS } from './config.js';

const WS = 'ws-acme';
const API = 'https://flows.example.com/base';
const ENDPOINT = `${API}/api/workspaces/${WS}/mcp`;
const VAR = 'FG_KEY';
const SECRET_KEY = `fgk_AbCdEfGh12345678_${'Z'.repeat(43)}`;
const NARROW = ['--read-only', '--toolsets', 'read,feedback', '--exclude-tools', 'check_connections'];
const NARROW_HEADERS = {
  'X-MCP-Readonly': 'true',
  'X-MCP-Toolsets': 'read,feedback',
  'X-MCP-Exclude-Tools': 'check_connections',
};
const STDIO_ARGS = [
  'mcp',
  'stdio',
  '--workspace',
  WS,
  '--token-env-var',
  VAR,
  '--api-url',
  API,
  '--read-only',
  '--toolsets',
  'read,feedback',
  '--exclude-tools',
  'check_connections',
];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  fetchCalls: number;
}

/** The CLI in-process with the key in the environment and a fetch that records any network attempt. */
async function run(argv: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  let fetchCalls = 0;
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: { [VAR]: SECRET_KEY, FLOWGATE_TOKEN: SECRET_KEY },
    cwd: '/nonexistent-flowgate-test-cwd',
    readStdin: async () => '',
    fetch: async () => {
      fetchCalls++;
      throw new Error('no network expected');
    },
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr, fetchCalls };
}

type Doc = Record<string, unknown>;

interface Expectation {
  /** First line of stdout for formats that carry comments. */
  header?: string;
  parse(text: string): Doc;
  /** The server entry inside the parsed document. */
  entry(doc: Doc, name: string): Doc;
  /** What the config writes where the key would go. */
  ref: string;
  http(entry: Doc, ref: string): void;
  stdio(entry: Doc, ref: string): void;
}

const json = (t: string) => JSON.parse(t) as Doc;
const at = (doc: Doc, ...path: Array<string | number>): Doc => {
  let cur: unknown = doc;
  for (const p of path) cur = (cur as Record<string | number, unknown>)[p];
  return cur as Doc;
};
const bearer = (ref: string) => ({ Authorization: `Bearer ${ref}`, ...NARROW_HEADERS });

/** Independent of the renderer: what each client's documentation asks for. */
const EXPECT: Record<(typeof PROVIDERS)[number], Expectation> = {
  codex: {
    header: '# ~/.codex/config.toml',
    parse: (t) => parseToml(t) as Doc,
    entry: (d, n) => at(d, 'mcp_servers', n),
    ref: VAR,
    http: (e) =>
      expect(e).toEqual({ url: ENDPOINT, bearer_token_env_var: VAR, http_headers: NARROW_HEADERS }),
    stdio: (e) => expect(e).toEqual({ command: 'flowgate', args: STDIO_ARGS, env_vars: [VAR] }),
  },
  claude: {
    parse: json,
    entry: (d, n) => at(d, 'mcpServers', n),
    ref: `\${${VAR}}`,
    http: (e, r) => expect(e).toEqual({ type: 'http', url: ENDPOINT, headers: bearer(r) }),
    stdio: (e, r) =>
      expect(e).toEqual({ type: 'stdio', command: 'flowgate', args: STDIO_ARGS, env: { [VAR]: r } }),
  },
  cursor: {
    parse: json,
    entry: (d, n) => at(d, 'mcpServers', n),
    ref: `\${env:${VAR}}`,
    http: (e, r) => expect(e).toEqual({ url: ENDPOINT, headers: bearer(r) }),
    stdio: (e, r) =>
      expect(e).toEqual({ type: 'stdio', command: 'flowgate', args: STDIO_ARGS, env: { [VAR]: r } }),
  },
  windsurf: {
    parse: json,
    entry: (d, n) => at(d, 'mcpServers', n),
    ref: `\${env:${VAR}}`,
    http: (e, r) => expect(e).toEqual({ serverUrl: ENDPOINT, headers: bearer(r) }),
    stdio: (e, r) => expect(e).toEqual({ command: 'flowgate', args: STDIO_ARGS, env: { [VAR]: r } }),
  },
  vscode: {
    parse: json,
    entry: (d, n) => at(d, 'servers', n),
    ref: `\${input:flowgate-ws-acme-token}`,
    http: (e, r) => expect(e).toEqual({ type: 'http', url: ENDPOINT, headers: bearer(r) }),
    stdio: (e, r) =>
      expect(e).toEqual({ type: 'stdio', command: 'flowgate', args: STDIO_ARGS, env: { [VAR]: r } }),
  },
  cline: {
    parse: json,
    entry: (d, n) => at(d, 'mcpServers', n),
    ref: `<paste the key from $${VAR} here>`,
    http: (e, r) =>
      expect(e).toEqual({ type: 'streamableHttp', url: ENDPOINT, headers: bearer(r), disabled: false }),
    stdio: (e, r) =>
      expect(e).toEqual({
        type: 'stdio',
        command: 'flowgate',
        args: STDIO_ARGS,
        env: { [VAR]: r },
        disabled: false,
      }),
  },
  roo: {
    parse: json,
    entry: (d, n) => at(d, 'mcpServers', n),
    ref: `\${env:${VAR}}`,
    http: (e, r) => expect(e).toEqual({ type: 'streamable-http', url: ENDPOINT, headers: bearer(r) }),
    stdio: (e, r) =>
      expect(e).toEqual({ type: 'stdio', command: 'flowgate', args: STDIO_ARGS, env: { [VAR]: r } }),
  },
  continue: {
    header: '# .continue/mcpServers/flowgate-ws-acme.yaml',
    parse: (t) => parseYaml(t) as Doc,
    entry: (d, n) => {
      expect(d).toMatchObject({ name: `Flowgate ${WS}`, schema: 'v1', version: '0.0.1' });
      const list = at(d, 'mcpServers') as unknown as Doc[];
      expect(list).toHaveLength(1);
      expect(list[0]?.name).toBe(n);
      return list[0] as Doc;
    },
    ref: `\${{ secrets.${VAR} }}`,
    http: (e, r) =>
      expect(e).toEqual({
        name: 'flowgate-ws-acme',
        type: 'streamable-http',
        url: ENDPOINT,
        requestOptions: { headers: bearer(r) },
      }),
    stdio: (e, r) =>
      expect(e).toEqual({
        name: 'flowgate-ws-acme',
        type: 'stdio',
        command: 'flowgate',
        args: STDIO_ARGS,
        env: { [VAR]: r },
      }),
  },
  gemini: {
    parse: json,
    entry: (d, n) => at(d, 'mcpServers', n),
    ref: `\${${VAR}}`,
    http: (e, r) => expect(e).toEqual({ httpUrl: ENDPOINT, headers: bearer(r) }),
    stdio: (e, r) => expect(e).toEqual({ command: 'flowgate', args: STDIO_ARGS, env: { [VAR]: r } }),
  },
  opencode: {
    parse: (t) => {
      const d = json(t);
      expect(d.$schema).toBe('https://opencode.ai/config.json');
      return d;
    },
    entry: (d, n) => at(d, 'mcp', n),
    ref: `{env:${VAR}}`,
    http: (e, r) => expect(e).toEqual({ type: 'remote', url: ENDPOINT, headers: bearer(r), enabled: true }),
    stdio: (e, r) =>
      expect(e).toEqual({
        type: 'local',
        command: ['flowgate', ...STDIO_ARGS],
        environment: { [VAR]: r },
        enabled: true,
      }),
  },
  goose: {
    header: '# ~/.config/goose/config.yaml',
    parse: (t) => parseYaml(t) as Doc,
    entry: (d, n) => at(d, 'extensions', n),
    ref: `\${${VAR}}`,
    http: (e, r) =>
      expect(e).toEqual({
        enabled: true,
        type: 'streamable_http',
        name: 'flowgate-ws-acme',
        description: `Flowgate workspace ${WS}`,
        uri: ENDPOINT,
        envs: {},
        env_keys: [VAR],
        headers: bearer(r),
        timeout: 300,
      }),
    stdio: (e) =>
      expect(e).toEqual({
        enabled: true,
        type: 'stdio',
        name: 'flowgate-ws-acme',
        description: `Flowgate workspace ${WS}`,
        cmd: 'flowgate',
        args: STDIO_ARGS,
        envs: {},
        env_keys: [VAR],
        timeout: 300,
      }),
  },
  zed: {
    parse: json,
    entry: (d, n) => at(d, 'context_servers', n),
    ref: `<paste the key from $${VAR} here>`,
    http: (e, r) => expect(e).toEqual({ source: 'custom', url: ENDPOINT, headers: bearer(r) }),
    stdio: (e) => expect(e).toEqual({ source: 'custom', command: 'flowgate', args: STDIO_ARGS, env: {} }),
  },
  generic: {
    parse: json,
    entry: (d, n) => at(d, 'mcpServers', n),
    ref: `\${${VAR}}`,
    http: (e, r) => expect(e).toEqual({ type: 'http', url: ENDPOINT, headers: bearer(r) }),
    stdio: (e, r) =>
      expect(e).toEqual({ type: 'stdio', command: 'flowgate', args: STDIO_ARGS, env: { [VAR]: r } }),
  },
};

const CASES = PROVIDERS.flatMap((p) => TRANSPORTS.map((t) => [p, t] as const));

describe('mcp config: every provider × transport parses back with a real parser', () => {
  it.each(CASES)('%s over %s', async (provider, transport) => {
    const r = await run([
      '--api-url',
      `${API}/`,
      'mcp',
      'config',
      '--workspace',
      WS,
      '--provider',
      provider,
      '--transport',
      transport,
      '--token-env-var',
      VAR,
      ...NARROW,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.fetchCalls).toBe(0);
    const ex = EXPECT[provider];
    if (ex.header) expect(r.stdout.split('\n')[0]).toBe(ex.header);
    else expect(r.stdout.trimStart().startsWith('{')).toBe(true);
    const doc = ex.parse(r.stdout);
    const entry = ex.entry(doc, 'flowgate-ws-acme');
    if (transport === 'http') ex.http(entry, ex.ref);
    else ex.stdio(entry, ex.ref);
    // the file hint and notes go to stderr, so stdout stays the config alone
    expect(r.stderr).toMatch(/^# file: \S/);
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toContain(SECRET_KEY);
      expect(text).not.toContain('Z'.repeat(43));
    }
  });

  it('VS Code declares the prompted input the reference points at, as a password', async () => {
    const r = await run(['mcp', 'config', '--workspace', WS, '--provider', 'vscode']);
    const doc = JSON.parse(r.stdout) as { inputs: unknown[] };
    expect(doc.inputs).toEqual([
      {
        type: 'promptString',
        id: 'flowgate-ws-acme-token',
        description: `Flowgate API key for workspace ${WS}`,
        password: true,
      },
    ]);
  });

  it('defaults: http, FLOWGATE_TOKEN, the local dev URL, no narrowing headers', async () => {
    const r = await run(['mcp', 'config', '--workspace', WS, '--provider', 'codex']);
    expect(r.code).toBe(0);
    expect(parseToml(r.stdout)).toEqual({
      mcp_servers: {
        'flowgate-ws-acme': {
          url: `http://127.0.0.1:8787/api/workspaces/${WS}/mcp`,
          bearer_token_env_var: 'FLOWGATE_TOKEN',
        },
      },
    });
  });

  it('--json wraps content, file, format and notes for tools that install configs', async () => {
    const r = await run(['mcp', 'config', '--workspace', WS, '--provider', 'cline', '--json']);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      provider: 'cline',
      transport: 'http',
      format: 'json',
      serverName: 'flowgate-ws-acme',
      file: 'cline_mcp_settings.json (Cline: MCP Servers → Configure MCP Servers)',
    });
    expect(JSON.parse(out.content as string)).toHaveProperty(['mcpServers', 'flowgate-ws-acme', 'url']);
    expect((out.notes as string[]).join(' ')).toContain('Cline does not expand environment variables');
  });

  it('clients without env expansion get a note and a placeholder that the bridge would refuse as a key', async () => {
    for (const provider of ['cline', 'zed']) {
      const r = await run(['mcp', 'config', '--workspace', WS, '--provider', provider]);
      expect(r.stderr).toContain('does not expand environment variables');
      expect(r.stdout).toContain('Bearer <paste the key from $FLOWGATE_TOKEN here>');
    }
  });

  it('warns when the key would travel over plain http:// to another machine', async () => {
    const insecure = ['--api-url', 'http://flows.internal:8787'];
    const http = await run([...insecure, 'mcp', 'config', '--workspace', WS, '--provider', 'claude']);
    expect(http.stderr).toContain(
      '# The URL is plain http:// to another machine: the client would send the key unencrypted. Use https://.',
    );
    const stdio = await run([
      ...insecure,
      'mcp',
      'config',
      '--workspace',
      WS,
      '--provider',
      'claude',
      '--transport',
      'stdio',
    ]);
    expect(stdio.stderr).toContain('the bridge refuses to send the key there');
    const local = await run(['mcp', 'config', '--workspace', WS, '--provider', 'claude']);
    expect(local.stderr).not.toContain('plain http://');
  });

  it('credentials, query and fragment of --api-url never reach a config', async () => {
    const r = await run([
      '--api-url',
      'https://user:hunter2@flows.example.com/gw/?token=abc#frag',
      'mcp',
      'config',
      '--workspace',
      WS,
      '--provider',
      'claude',
    ]);
    expect(at(JSON.parse(r.stdout) as Doc, 'mcpServers', 'flowgate-ws-acme').url).toBe(
      `https://flows.example.com/gw/api/workspaces/${WS}/mcp`,
    );
    expect(r.stdout).not.toContain('hunter2');
    expect(r.stdout).not.toContain('token=abc');
  });

  it('--command changes what stdio entries start', async () => {
    const r = await run([
      'mcp',
      'config',
      '--workspace',
      WS,
      '--provider',
      'claude',
      '--transport',
      'stdio',
      '--command',
      '/opt/flowgate/bin/flowgate',
    ]);
    expect(at(JSON.parse(r.stdout) as Doc, 'mcpServers', 'flowgate-ws-acme').command).toBe(
      '/opt/flowgate/bin/flowgate',
    );
  });
});

describe('mcp config: hostile names stay inert', () => {
  const INJECTION = 'x"]\n[evil]\nkey="1';

  it('sanitises to [A-Za-z0-9_-], bounded, with the default when nothing is left', () => {
    expect(sanitizeServerName(INJECTION, WS)).toBe('x-evil-key-1');
    expect(sanitizeServerName('  My Server!  ', WS)).toBe('My-Server');
    expect(sanitizeServerName('"]}{[', WS)).toBe('flowgate-ws-acme');
    expect(sanitizeServerName(undefined, WS)).toBe('flowgate-ws-acme');
    expect(sanitizeServerName('a'.repeat(200), WS)).toBe('a'.repeat(64));
    expect(sanitizeServerName(`${'a'.repeat(63)}--b`, WS)).toBe('a'.repeat(63));
  });

  it.each(CASES)('%s over %s: the injection adds no key, table or line', async (provider, transport) => {
    const r = await run([
      'mcp',
      'config',
      '--workspace',
      WS,
      '--provider',
      provider,
      '--transport',
      transport,
      '--name',
      INJECTION,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('[evil]');
    expect(r.stdout).not.toContain('key="1');
    const ex = EXPECT[provider];
    const doc = ex.parse(r.stdout);
    const entry = ex.entry(doc, 'x-evil-key-1');
    expect(entry).toBeTypeOf('object');
    // nothing else appeared at the top level
    const topKeys: Record<string, string[]> = {
      codex: ['mcp_servers'],
      vscode: ['inputs', 'servers'],
      continue: ['name', 'version', 'schema', 'mcpServers'],
      opencode: ['$schema', 'mcp'],
      goose: ['extensions'],
      zed: ['context_servers'],
    };
    expect(Object.keys(doc)).toEqual(topKeys[provider] ?? ['mcpServers']);
  });
});

describe('mcp config: refusals', () => {
  it('an unknown toolset or tool is refused with the valid names, before rendering anything', async () => {
    const r = await run([
      'mcp',
      'config',
      '--workspace',
      WS,
      '--provider',
      'codex',
      '--toolsets',
      'read,nope',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--toolsets: unknown "nope"; valid: all, context, read, search, run');
    const t = await run([
      'mcp',
      'config',
      '--workspace',
      WS,
      '--provider',
      'codex',
      '--tools',
      'drop_tables',
    ]);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain('--tools: unknown "drop_tables"; valid: get_workspace_context');
  });

  it('a variable name that could inject config is refused', async () => {
    const r = await run([
      'mcp',
      'config',
      '--workspace',
      WS,
      '--provider',
      'claude',
      '--token-env-var',
      'X}"\n',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--token-env-var must be an environment variable name');
  });

  it('an unknown provider or transport lists the choices', async () => {
    const r = await run(['mcp', 'config', '--workspace', WS, '--provider', 'emacs']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'Allowed choices are codex, claude, cursor, windsurf, vscode, cline, roo, continue, gemini, opencode, goose, zed, generic',
    );
    const t = await run(['mcp', 'config', '--workspace', WS, '--provider', 'claude', '--transport', 'sse']);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain('Allowed choices are http, stdio');
  });

  it('a bad workspace id is refused', async () => {
    const r = await run(['mcp', 'config', '--workspace', 'WS_ACME', '--provider', 'claude']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('workspace id must match');
  });
});
