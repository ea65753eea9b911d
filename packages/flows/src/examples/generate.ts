import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The example flows live as `.edn` files (readable, editable, valid on their own). The package itself must not read
 * files at runtime (the gateway also targets edge runtimes), so `index.ts` embeds them; this script regenerates it
 * and a test fails when it drifts: `pnpm --filter @flowgate/flows gen:examples`.
 */
export const EXAMPLES_DIR = dirname(fileURLToPath(import.meta.url));

export function readExampleFiles(dir: string = EXAMPLES_DIR): Record<string, string> {
  const out: Record<string, string> = {};
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.edn'))
    .sort()) {
    out[file.slice(0, -'.edn'.length)] = readFileSync(join(dir, file), 'utf8');
  }
  return out;
}

export function renderExamplesModule(files: Record<string, string>): string {
  const entries = Object.entries(files)
    .map(([name, text]) => `  ${JSON.stringify(name)}:\n    ${JSON.stringify(text)},`)
    .join('\n');
  return `// Generated from src/examples/*.edn by \`pnpm --filter @flowgate/flows gen:examples\`. Do not edit by hand.

/** Example flow definitions (file name → EDN text); each validates without errors. */
export const EXAMPLE_FLOWS: Readonly<Record<string, string>> = Object.freeze({
${entries}
});
`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(join(EXAMPLES_DIR, 'index.ts'), renderExamplesModule(readExampleFiles()));
}
