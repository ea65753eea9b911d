import {
  AppError,
  fromBase64,
  fromHex,
  randomBytes,
  toBase64,
  toBase64Url,
  utf8Bytes,
  utf8Text,
} from '@flowgate/core';
import { gcm } from '@noble/ciphers/aes.js';

/**
 * Connection secrets at rest: AES-256-GCM with the deployment key, a fresh 96-bit nonce per value, and the
 * owning workspace id as additional authenticated data so a ciphertext cannot be moved to another workspace.
 * Envelope: `v1.<nonce b64url>.<ciphertext b64url>.<tag b64url>`.
 *
 * The cipher is @noble/ciphers (audited, synchronous, the same on every runtime): `SecretBox` is synchronous and
 * its callers with it, which Web Crypto's `subtle` is not. The envelope is exactly what `node:crypto` wrote.
 */
export interface SecretBox {
  encrypt(plaintext: string, workspaceId: string): string;
  decrypt(envelope: string, workspaceId: string): string;
}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export function parseEncryptionKey(value: string): Uint8Array {
  const key = /^[0-9a-f]{64}$/i.test(value) ? fromHex(value) : fromBase64(value);
  if (key.length !== KEY_BYTES) {
    throw new AppError(
      'invalid_request',
      'FLOWGATE_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64',
    );
  }
  return key;
}

export function generateEncryptionKey(): string {
  return toBase64(randomBytes(KEY_BYTES));
}

export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length !== KEY_BYTES) throw new AppError('invalid_request', 'encryption key must be 32 bytes');
  return {
    encrypt(plaintext, workspaceId) {
      const nonce = randomBytes(NONCE_BYTES);
      // noble appends the tag to the ciphertext; the envelope keeps them apart.
      const sealed = gcm(key, nonce, utf8Bytes(workspaceId)).encrypt(utf8Bytes(plaintext));
      const ct = sealed.subarray(0, sealed.length - TAG_BYTES);
      const tag = sealed.subarray(sealed.length - TAG_BYTES);
      return ['v1', toBase64Url(nonce), toBase64Url(ct), toBase64Url(tag)].join('.');
    },
    decrypt(envelope, workspaceId) {
      const parts = envelope.split('.');
      if (parts.length !== 4 || parts[0] !== 'v1')
        throw new AppError('internal_error', 'stored secret has an unknown format');
      const [, nonce, ct, tag] = parts as [string, string, string, string];
      try {
        const tagBytes = fromBase64(tag);
        // Only full tags were ever written; a shorter one would weaken the authentication.
        if (tagBytes.length !== TAG_BYTES) throw new Error('truncated tag');
        const ctBytes = fromBase64(ct);
        const sealed = new Uint8Array(ctBytes.length + TAG_BYTES);
        sealed.set(ctBytes);
        sealed.set(tagBytes, ctBytes.length);
        return utf8Text(gcm(key, fromBase64(nonce), utf8Bytes(workspaceId)).decrypt(sealed));
      } catch {
        throw new AppError('internal_error', 'stored secret could not be decrypted with the configured key');
      }
    },
  };
}
