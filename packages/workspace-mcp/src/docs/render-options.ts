export interface DocRenderOptions {
  /** Public base URL without trailing slash, e.g. `https://flowgate.example.com`. */
  publicBaseUrl: string;
  /** The reader's workspace; `null` renders `{workspace_id}` placeholders. */
  workspaceId: string | null;
}
