/**
 * Byte encodings without `Buffer`, which only Node (and Bun) have: the gateway also runs on Deno and workerd. Each
 * function spells exactly what `Buffer` spelled for the same bytes, so stored values and wire formats do not change.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 bytes; a lone surrogate becomes U+FFFD, as `Buffer.from(text)` makes it. */
export const utf8Bytes = (text: string): Uint8Array => encoder.encode(text);

/** UTF-8 text; invalid sequences become U+FFFD, as `buffer.toString('utf8')` makes them. */
export const utf8Text = (bytes: Uint8Array): string => decoder.decode(bytes);

/** UTF-8 length without allocating, as `Buffer.byteLength(text, 'utf8')` (a lone surrogate counts 3, as U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

export const toHex = (bytes: Uint8Array): string => bytesToHex(bytes);

/** Strict: throws on anything but an even number of hex digits. */
export const fromHex = (hex: string): Uint8Array => hexToBytes(hex);

const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function encode(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  const at = (sextet: number) => alphabet.charAt(sextet);
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += at(n >>> 18) + at((n >>> 12) & 63) + at((n >>> 6) & 63) + at(n & 63);
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] as number) << 16;
    out += at(n >>> 18) + at((n >>> 12) & 63) + (pad ? '==' : '');
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out += at(n >>> 18) + at((n >>> 12) & 63) + at((n >>> 6) & 63) + (pad ? '=' : '');
  }
  return out;
}

/** Standard base64 with padding (`buffer.toString('base64')`). */
export const toBase64 = (bytes: Uint8Array): string => encode(bytes, STANDARD, true);

/** URL-safe base64 without padding (`buffer.toString('base64url')`). */
export const toBase64Url = (bytes: Uint8Array): string => encode(bytes, URL_SAFE, false);

// Both alphabets decode, as in Node: '+' and '-' are 62, '/' and '_' are 63.
const SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  SEXTET[STANDARD.charCodeAt(i)] = i;
  SEXTET[URL_SAFE.charCodeAt(i)] = i;
}

/**
 * Decodes base64 or base64url leniently, byte for byte as `Buffer.from(text, 'base64' | 'base64url')`: either
 * alphabet, padding optional, decoding stops at the first '=', other characters are skipped, and trailing bits that
 * do not make a whole byte are dropped. Lenient because an operator's key may carry a newline or padding.
 */
export function fromBase64(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let length = 0;
  let bits = 0;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 61) break; // '='
    const sextet = code < 128 ? (SEXTET[code] as number) : -1;
    if (sextet < 0) continue;
    bits = ((bits << 6) | sextet) & 0xffffff;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out[length++] = (bits >>> count) & 0xff;
    }
  }
  return out.subarray(0, length);
}
