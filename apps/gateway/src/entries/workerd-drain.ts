/**
 * The local runner's drain (serve-workerd.ts): before it stops workerd, which kills whatever still runs, it asks the
 * Worker on this path to wait for the requests whose work is not written yet (audit, key usage). Answered only with
 * the token the runner passed as the `LOCAL_DRAIN_TOKEN` binding; a deployed Worker has none, so the path is a 404.
 */
export const DRAIN_PATH = '/__flowgate/drain';
export const DRAIN_TOKEN_BINDING = 'LOCAL_DRAIN_TOKEN';
