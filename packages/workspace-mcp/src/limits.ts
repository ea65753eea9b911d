/**
 * Size limits of what an agent may send and receive through the workspace tools. The input schemas are
 * built from these numbers and `get_workspace_context` reports them, so the two can never disagree.
 */
export const LIMITS = Object.freeze({
  listConnectionsDefaultLimit: 25,
  listConnectionsMaxLimit: 100,
  checkConnectionsDefaultLimit: 10,
  checkConnectionsMaxLimit: 20,
  checkConnectionsMaxIds: 20,
  connectionIdMaxChars: 128,
  cursorMaxChars: 1024,
  feedbackSummaryMaxChars: 200,
  feedbackDetailsMaxChars: 4000,
  feedbackContextMaxKeys: 20,
  feedbackContextKeyMaxChars: 64,
  feedbackContextValueMaxChars: 1000,
  resourceUriMaxChars: 2048,
  reasonMaxChars: 500,
  listPageSize: 50,
  searchFlowsDefaultLimit: 10,
  searchFlowsMaxLimit: 50,
  searchFlowToolsDefaultLimit: 20,
  searchFlowToolsMaxLimit: 50,
  searchQueryMaxChars: 200,
  installationIdMaxChars: 128,
  /** A definition is at most 150 KB (spec 7.1); counted in characters here, in bytes by the validator. */
  flowLiteralMaxChars: 153_600,
  releaseNoteMaxChars: 1000,
  flowVersionMax: 1_000_000,
});

export type Limits = typeof LIMITS;
