import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_FILES, REPOSITORY_ROOT } from './generated-files.js';

describe('generated files', () => {
  it.each(GENERATED_FILES.map((f) => [f.path, f] as const))(
    '%s matches what `pnpm generate` writes',
    (_, file) => {
      expect(readFileSync(new URL(file.path, REPOSITORY_ROOT), 'utf8'), 'run pnpm generate').toBe(
        file.render(),
      );
    },
  );
});
