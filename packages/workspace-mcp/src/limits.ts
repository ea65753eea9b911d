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
  /**
   * A definition is at most 150 KB (docs/flows.md, "Definition"); counted in characters here, in bytes by the
   * validator.
   */
  flowLiteralMaxChars: 153_600,
  releaseNoteMaxChars: 1000,
  flowVersionMax: 1_000_000,
  /** call_flow_tool waits at most this long for a run to finish before answering with its id. */
  callFlowToolMaxWaitMs: 20_000,
  runIdMaxChars: 64,
  stepIdMaxChars: 300,
  idempotencyKeyMaxChars: 200,
  inputKeyMaxChars: 128,
  inputMaxKeys: 200,
  runEventsPageSize: 50,
  /** A run result or step result at most this long (as JSON text) is returned inline; longer ones are previewed. */
  resultInlineMaxChars: 8_000,
  resultPreviewChars: 2_000,
  /** Step ids listed in an inspect_run_step summary. */
  stepIdsListed: 100,
});

export type Limits = typeof LIMITS;
