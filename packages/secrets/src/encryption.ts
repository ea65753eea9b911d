import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppError } from '@flowgate/core';

/**
 * Connection secrets at rest: AES-256-GCM with the deployment key, a fresh 96-bit nonce per value, and the
 * owning workspace id as additional authenticated data so a ciphertext cannot be moved to another workspace.
 * Envelope: `v1.<nonce b64url>.<ciphertext b64url>.<tag b64url>`.
 */
export interface SecretBox {
  encrypt(plaintext: string, workspaceId: string): string;
  decrypt(envelope: string, workspaceId: string): string;
}

export function parseEncryptionKey(value: string): Buffer {
  const key = Buffer.from(value, /^[0-9a-f]{64}$/i.test(value) ? 'hex' : 'base64');
  if (key.length !== 32) {
    throw new AppError(
      'invalid_request',
      'FLOWGATE_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64',
    );
  }
  return key;
}

export function generateEncryptionKey(): string {
  return randomBytes(32).toString('base64');
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new AppError('invalid_request', 'encryption key must be 32 bytes');
  return {
    encrypt(plaintext, workspaceId) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(workspaceId, 'utf8'));
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return ['v1', nonce.toString('base64url'), ct.toString('base64url'), tag.toString('base64url')].join(
        '.',
      );
    },
    decrypt(envelope, workspaceId) {
      const parts = envelope.split('.');
      if (parts.length !== 4 || parts[0] !== 'v1')
        throw new AppError('internal_error', 'stored secret has an unknown format');
      const [, nonce, ct, tag] = parts as [string, string, string, string];
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(workspaceId, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new AppError('internal_error', 'stored secret could not be decrypted with the configured key');
      }
    },
  };
}
