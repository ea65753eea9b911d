export { createSecretBox, generateEncryptionKey, parseEncryptionKey } from './encryption.js';
export type { SecretBox } from './encryption.js';
export { redact, redactString, isSecretKey, REDACTED } from './redact.js';
export type { RedactOptions } from './redact.js';
