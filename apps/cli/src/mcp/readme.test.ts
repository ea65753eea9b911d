import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type ConfigInput, renderConfig } from './config.js';
import { NO_FLAGS } from './narrowing-flags.js';

/** The README's client snippets are this command's output; this keeps them from drifting apart. */

const README = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../../../README.md'), 'utf8');
const SECTION = README.slice(README.indexOf('## Connect your agent'));

const base: Omit<ConfigInput, 'provider' | 'transport'> = {
  workspaceId: 'ws-demo',
  apiUrl: 'http://127.0.0.1:8787',
  tokenEnvVar: 'FLOWGATE_TOKEN',
  narrowing: NO_FLAGS,
};
const readOnlyDiscovery = { ...NO_FLAGS, readOnly: true, toolsets: ['read', 'feedback'] };

const SNIPPETS: Array<[string, ConfigInput]> = [
  ['claude http', { ...base, provider: 'claude', transport: 'http' }],
  [
    'codex http, read-only discovery',
    { ...base, provider: 'codex', transport: 'http', narrowing: readOnlyDiscovery },
  ],
  ['cursor http', { ...base, provider: 'cursor', transport: 'http' }],
  ['vscode http', { ...base, provider: 'vscode', transport: 'http' }],
  ['windsurf http', { ...base, provider: 'windsurf', transport: 'http' }],
  ['gemini http', { ...base, provider: 'gemini', transport: 'http' }],
  ['opencode http', { ...base, provider: 'opencode', transport: 'http' }],
  ['continue http', { ...base, provider: 'continue', transport: 'http' }],
  ['goose http', { ...base, provider: 'goose', transport: 'http' }],
  [
    'claude stdio, read-only discovery',
    { ...base, provider: 'claude', transport: 'stdio', narrowing: readOnlyDiscovery },
  ],
];

describe('README "Connect your agent"', () => {
  it.each(SNIPPETS)('shows the generated %s entry verbatim', (_label, input) => {
    // TOML and YAML start with a `# file` comment; the README names the file in the text instead.
    const content = renderConfig(input)
      .content.replace(/^# .*\n/, '')
      .trimEnd();
    expect(SECTION).toContain(`\n${content}\n\`\`\``);
  });
});
