export { authHeaders, type ConnectionAuth, FIXED_HEADER_PREFIX, fixedHeaders } from './connection-auth.js';
export type { SecretBox } from './encryption.js';
export { createSecretBox, generateEncryptionKey, parseEncryptionKey } from './encryption.js';
export type { RedactOptions } from './redact.js';
export { isSecretKey, REDACTED, redact, redactString } from './redact.js';
export { displayUrl, isSecretLookingSegment, urlCredentialProblem } from './url.js';
