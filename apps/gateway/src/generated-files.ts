import { renderAssetHashesModule } from './console/asset-hashes.js';
import { renderRegistryManifest, renderServerCard } from './discovery/documents.js';

/**
 * Every file `pnpm generate` writes, so the app imports documents as modules instead of reading or computing them
 * at run time. Build-time only: the app never imports this module. `generated-files.test.ts` fails when a
 * committed file differs from what its render would write.
 */
export interface GeneratedFile {
  /** Path relative to the repository root. */
  path: string;
  render: () => string;
}

export const GENERATED_FILES: readonly GeneratedFile[] = [
  { path: 'apps/gateway/src/discovery/server-card.json', render: renderServerCard },
  { path: 'server.json', render: renderRegistryManifest },
  { path: 'apps/gateway/src/console/asset-hashes.generated.ts', render: renderAssetHashesModule },
];

/** The repository root, which every `GeneratedFile.path` is relative to. */
export const REPOSITORY_ROOT = new URL('../../../', import.meta.url);
