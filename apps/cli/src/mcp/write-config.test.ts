import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runWith } from '../testing.js';

const WS = 'ws-acme';
const API = 'https://flows.example.com';
const ENDPOINT = `${API}/api/workspaces/${WS}/mcp`;
const NAME = `flowgate-${WS}`;

let dir: string;
let home: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-mcp-init-'));
  home = join(dir, 'home');
  mkdirSync(home);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

// The shared in-process runner, with HOME and cwd in this test's temp dir and no network.
const run = (argv: string[]) =>
  runWith(['--api-url', API, ...argv], {
    env: { HOME: home },
    cwd: dir,
    fetch: async () => {
      throw new Error('no network expected');
    },
  });

const init = (provider: string, ...more: string[]) =>
  run(['mcp', 'init', '--workspace', WS, '--provider', provider, ...more]);

const files = () => readdirSync(dir).sort();
const read = (path: string) => readFileSync(path, 'utf8');

describe('mcp init', () => {
  it('without --write is mcp config: the same entry on stdout', async () => {
    const a = await init('claude');
    const b = await run(['mcp', 'config', '--workspace', WS, '--provider', 'claude']);
    expect(a).toEqual(b);
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout).mcpServers[NAME].url).toBe(ENDPOINT);
    expect(files()).toEqual(['home']);
  });

  it('--write creates a missing file (and its directory) at --file, without a backup', async () => {
    const file = join(dir, 'sub', '.mcp.json');
    const r = await init('claude', '--write', '--file', file);
    expect(r).toEqual({ code: 0, stdout: `Wrote server ${NAME} to ${file}\n`, stderr: '' });
    expect(JSON.parse(read(file))).toEqual({
      mcpServers: {
        [NAME]: { type: 'http', url: ENDPOINT, headers: { Authorization: `Bearer \${FLOWGATE_TOKEN}` } },
      },
    });
    expect(readdirSync(join(dir, 'sub'))).toEqual(['.mcp.json']);
  });

  it('merges into an existing file: other servers, keys and comments stay; a .bak holds the original', async () => {
    const file = join(dir, 'mcp.json');
    const original = `// my servers
{
  "mcpServers": {
    "github": { "url": "https://gh.example.com/mcp" }, // keep me
  },
  "other": [1, 2],
}
`;
    writeFileSync(file, original);
    const r = await init('cursor', '--write', '--file', file);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Wrote server ${NAME} to ${file} (previous file kept as ${file}.bak)\n`);
    expect(read(`${file}.bak`)).toBe(original);
    const text = read(file);
    expect(text).toContain('// my servers');
    expect(text).toContain('// keep me');
    expect(parseJsonc(text)).toEqual({
      mcpServers: {
        github: { url: 'https://gh.example.com/mcp' },
        [NAME]: { url: ENDPOINT, headers: { Authorization: `Bearer \${env:FLOWGATE_TOKEN}` } },
      },
      other: [1, 2],
    });

    // The same entry again: nothing written, no second backup.
    const again = await init('cursor', '--write', '--file', file);
    expect(again.stdout).toBe(`${file} already has server ${NAME}; nothing changed\n`);
    expect(read(file)).toBe(text);
    expect(files()).toEqual(['home', 'mcp.json', 'mcp.json.bak']);
  });

  it('refuses to replace a different entry of the same name unless --force; backups are never overwritten', async () => {
    const file = join(dir, 'mcp.json');
    const original = JSON.stringify({ mcpServers: { [NAME]: { url: 'https://elsewhere.example.com/mcp' } } });
    writeFileSync(file, original);
    const refused = await init('cursor', '--write', '--file', file);
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: conflict: not writing ${file}: it already has a different "mcpServers.${NAME}"; pass --force to replace it or --name to add another; nothing was changed\n`,
    });
    expect(read(file)).toBe(original);
    expect(files()).toEqual(['home', 'mcp.json']);

    writeFileSync(`${file}.bak`, 'an older backup');
    const forced = await init('cursor', '--write', '--file', file, '--force');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toBe(
      `Wrote server ${NAME} to ${file}, replacing mcpServers.${NAME} (previous file kept as ${file}.bak.1)\n`,
    );
    expect(read(`${file}.bak`)).toBe('an older backup');
    expect(read(`${file}.bak.1`)).toBe(original);
    expect(JSON.parse(read(file)).mcpServers[NAME].url).toBe(ENDPOINT);
  });

  it('refuses a file that does not parse, or whose servers key is not an object, changing nothing', async () => {
    const file = join(dir, 'settings.json');
    for (const [content, reason] of [
      ['{"mcpServers": {', 'it is not valid JSON (CloseBraceExpected at offset 16)'],
      ['[1, 2]', 'its top level is not a JSON object'],
      ['{"mcpServers": []}', '"mcpServers" is not an object; fix it by hand first'],
    ] as const) {
      writeFileSync(file, content);
      const r = await init('gemini', '--write', '--file', file);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: invalid_config_file: not writing ${file}: ${reason}`);
      expect(r.stderr).toContain('nothing was changed');
      expect(read(file)).toBe(content);
      expect(files()).toEqual(['home', 'settings.json']);
    }
  });

  it('vscode: adds the server and its key prompt next to existing inputs, once', async () => {
    const file = join(dir, 'mcp.json');
    writeFileSync(file, JSON.stringify({ inputs: [{ id: 'other', type: 'promptString' }], servers: {} }));
    expect((await init('vscode', '--write', '--file', file)).code).toBe(0);
    const once = read(file);
    expect((await init('vscode', '--write', '--file', file)).stdout).toContain('nothing changed');
    expect(read(file)).toBe(once);
    const doc = JSON.parse(once);
    expect(doc.inputs.map((i: { id: string }) => i.id)).toEqual(['other', `${NAME}-token`]);
    expect(doc.servers[NAME]).toMatchObject({ type: 'http', url: ENDPOINT });
  });

  it('writes to the client default without --file: project files under the cwd, user files under HOME', async () => {
    expect((await init('claude', '--write')).code).toBe(0);
    expect(JSON.parse(read(join(dir, '.mcp.json'))).mcpServers[NAME].url).toBe(ENDPOINT);
    expect((await init('gemini', '--write')).code).toBe(0);
    expect(JSON.parse(read(join(home, '.gemini', 'settings.json'))).mcpServers[NAME].httpUrl).toBe(ENDPOINT);
  });

  it('refuses TOML and YAML clients, clients without a fixed file, and --file without --write', async () => {
    const file = join(dir, 'config.toml');
    const codex = await init('codex', '--write', '--file', file);
    expect(codex.code).toBe(1);
    expect(codex.stderr).toBe(
      'error: unsupported: --write edits JSON config files only; codex uses TOML, which a rewrite would strip of ' +
        'your comments and layout. Run without --write and paste the entry into ~/.codex/config.toml.\n',
    );
    expect((await init('goose', '--write')).stderr).toContain('goose uses YAML');
    const cline = await init('cline', '--write');
    expect(cline.stderr).toContain(
      'error: invalid_request: cline has no fixed config file location; pass --file',
    );
    const stray = await init('claude', '--file', file);
    expect(stray.stderr).toBe('error: invalid_request: --file and --force go with --write\n');
    expect(existsSync(file)).toBe(false);
    expect(files()).toEqual(['home']);
    expect(readdirSync(home)).toEqual([]);
  });
});
