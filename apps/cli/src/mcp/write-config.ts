/**
 * `flowgate mcp init --write`: merges a rendered server entry into the client's own config file. JSON files are
 * edited in place with jsonc-parser, so comments, order and every other server survive (VS Code and Zed files are
 * JSON with comments). TOML and YAML clients are refused: rewriting `~/.codex/config.toml` or Goose's config through
 * a serialiser would drop the user's comments and layout, so those entries are printed to paste instead.
 */
import { constants, copyFile, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { applyEdits, modify, type ParseError, parse, printParseErrorCode } from 'jsonc-parser';
import { CliError } from '../cli-io.js';
import type { RenderedConfig } from './config.js';
import type { Provider } from './providers.js';

/** Where `--write` goes without `--file`: the project file where a client has one, else its user file. */
const DEFAULT_FILES: Partial<Record<Provider, string>> = {
  claude: '.mcp.json',
  cursor: '.cursor/mcp.json',
  windsurf: '~/.codeium/windsurf/mcp_config.json',
  vscode: '.vscode/mcp.json',
  roo: '.roo/mcp.json',
  gemini: '~/.gemini/settings.json',
  opencode: 'opencode.json',
  zed: '~/.config/zed/settings.json',
};

export interface WriteResult {
  file: string;
  serverName: string;
  /** False when the file already held exactly this entry: nothing was written. */
  changed: boolean;
  /** The copy of the previous file, when there was one. */
  backup: string | null;
  /** Entries of the same name that were replaced (only with `force`). */
  replaced: string[];
}

export function defaultConfigFile(provider: Provider, env: Record<string, string | undefined>, cwd: string) {
  const rel = DEFAULT_FILES[provider];
  if (rel === undefined) return null;
  if (rel.startsWith('~/')) return join(env.HOME || homedir(), rel.slice(2));
  return resolve(cwd, rel);
}

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } } as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Key order and nesting ignored: an entry read back from the file equals the rendered one. */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return a === b;
}

/**
 * The new text of a JSON config: each top-level map of the rendered document (the client's servers, e.g.
 * `mcpServers`) gets the one new entry; arrays (VS Code's `inputs`) get items by `id`; scalars (`$schema`) are
 * set only when absent. A same-named entry that differs is refused unless `force`.
 */
export function mergeJsonConfig(
  existing: string,
  rendered: Record<string, unknown>,
  force: boolean,
): { text: string; replaced: string[] } {
  let text = existing.trim() === '' ? '{}\n' : existing;
  const errors: ParseError[] = [];
  const current: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const first = errors[0] as ParseError;
    throw new CliError(
      'invalid_config_file',
      `it is not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset}); fix it or pass --file`,
    );
  }
  if (!isRecord(current)) throw new CliError('invalid_config_file', 'its top level is not a JSON object');
  const replaced: string[] = [];
  const edit = (path: Array<string | number>, value: unknown) => {
    text = applyEdits(text, modify(text, path, value, FORMAT));
  };
  for (const [key, value] of Object.entries(rendered)) {
    const have = current[key];
    if (isRecord(value)) {
      if (have !== undefined && !isRecord(have)) {
        throw new CliError('invalid_config_file', `"${key}" is not an object; fix it by hand first`);
      }
      for (const [name, entry] of Object.entries(value)) {
        const old = have?.[name];
        if (old !== undefined && sameJson(old, entry)) continue;
        if (old !== undefined) {
          if (!force) {
            throw new CliError(
              'conflict',
              `it already has a different "${key}.${name}"; pass --force to replace it or --name to add another`,
            );
          }
          replaced.push(`${key}.${name}`);
        }
        edit([key, name], entry);
      }
    } else if (Array.isArray(value)) {
      if (have !== undefined && !Array.isArray(have)) {
        throw new CliError('invalid_config_file', `"${key}" is not an array; fix it by hand first`);
      }
      const list: unknown[] = have ?? [];
      if (have === undefined) edit([key], []);
      for (const item of value) {
        const id = isRecord(item) ? item.id : undefined;
        const at = list.findIndex((x) => isRecord(x) && id !== undefined && x.id === id);
        if (at >= 0 && sameJson(list[at], item)) continue;
        // -1 appends; an existing item with the same id is ours to update (VS Code's key prompt).
        edit([key, at >= 0 ? at : -1], item);
      }
    } else if (have === undefined) {
      edit([key], value);
    }
  }
  return { text: text.endsWith('\n') ? text : `${text}\n`, replaced };
}

/** `<file>.bak`, or `<file>.bak.N` when earlier backups are there: none is overwritten. */
async function freeBackupPath(file: string): Promise<string> {
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? `${file}.bak` : `${file}.bak.${n}`;
    try {
      await stat(candidate);
    } catch {
      return candidate;
    }
  }
}

export async function writeClientConfig(
  rendered: RenderedConfig,
  target: { file: string | undefined; env: Record<string, string | undefined>; cwd: string; force: boolean },
): Promise<WriteResult> {
  if (rendered.format !== 'json') {
    throw new CliError(
      'unsupported',
      `--write edits JSON config files only; ${rendered.provider} uses ${rendered.format.toUpperCase()}, which a ` +
        'rewrite would strip of your comments and layout. Run without --write and paste the entry into ' +
        `${rendered.file}.`,
    );
  }
  const file =
    target.file !== undefined
      ? isAbsolute(target.file)
        ? target.file
        : resolve(target.cwd, target.file)
      : defaultConfigFile(rendered.provider, target.env, target.cwd);
  if (file === null) {
    throw new CliError(
      'invalid_request',
      `${rendered.provider} has no fixed config file location; pass --file <path> (${rendered.file})`,
    );
  }
  let existing: string | null = null;
  let mode: number | undefined;
  try {
    existing = await readFile(file, 'utf8');
    mode = (await stat(file)).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new CliError('invalid_config_file', `cannot read ${file}: ${(error as Error).message}`);
    }
  }
  let merged: { text: string; replaced: string[] };
  try {
    merged = mergeJsonConfig(
      existing ?? '',
      JSON.parse(rendered.content) as Record<string, unknown>,
      target.force,
    );
  } catch (error) {
    if (error instanceof CliError) {
      throw new CliError(error.code, `not writing ${file}: ${error.message}; nothing was changed`);
    }
    throw error;
  }
  const base = { file, serverName: rendered.serverName, replaced: merged.replaced };
  if (existing !== null && merged.text === existing) return { ...base, changed: false, backup: null };

  await mkdir(dirname(file), { recursive: true });
  let backup: string | null = null;
  if (existing !== null) {
    backup = await freeBackupPath(file);
    await copyFile(file, backup, constants.COPYFILE_EXCL);
  }
  // Written beside the file and renamed over it, so a crash leaves the old file or the new one, never half of one.
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, merged.text, { mode: mode ?? 0o644, flag: 'wx' });
  await rename(temp, file);
  return { ...base, changed: true, backup };
}
