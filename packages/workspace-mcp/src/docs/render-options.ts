import type { HiddenTools } from '../guidance.js';

export interface DocRenderOptions {
  /** Public base URL without trailing slash, e.g. `https://flowgate.example.com`. */
  publicBaseUrl: string;
  /** The reader's workspace; `null` renders `{workspace_id}` placeholders. */
  workspaceId: string | null;
  /** Tools the reader cannot see: the doc does not name them (guidance.ts). Default: none (the published docs). */
  hidden?: HiddenTools;
}
