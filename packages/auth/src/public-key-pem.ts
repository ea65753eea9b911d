/**
 * Reads a configured public key PEM without `node:crypto` (absent off Node): which key it is, hence the one JWT
 * algorithm it implies, and the SPKI that Web Crypto (through jose's `importSPKI`) imports for verification.
 * Accepts what `createPublicKey` accepted before: an SPKI `PUBLIC KEY`, a PKCS#1 `RSA PUBLIC KEY` and an X.509
 * `CERTIFICATE` (its subject key). Only the DER structure is read here; the key material itself is checked when
 * it is imported, on the first token.
 */
import { fromBase64, toBase64 } from '@flowgate/core';

export type PublicKeyKind = 'rsa' | 'rsa-pss' | 'ed25519' | 'P-256' | 'P-384' | 'P-521' | 'other';

export interface PublicKeyPem {
  kind: PublicKeyKind;
  /** An SPKI PEM Web Crypto imports: RSA-PSS keys are restated as plain RSA keys, which Web Crypto refuses. */
  spkiPem: string;
}

const OID = {
  rsaEncryption: '2a864886f70d010101',
  rsaPss: '2a864886f70d01010a',
  ed25519: '2b6570',
  ecPublicKey: '2a8648ce3d0201',
  p256: '2a8648ce3d030107',
  p384: '2b81040022',
  p521: '2b81040023',
} as const;

const CURVES: Record<string, PublicKeyKind> = {
  [OID.p256]: 'P-256',
  [OID.p384]: 'P-384',
  [OID.p521]: 'P-521',
};

/** One DER element: its tag, where it begins (`at`, its header) and where its content lies. */
interface Element {
  tag: number;
  at: number;
  start: number;
  end: number;
}

class Unreadable extends Error {}

function element(der: Uint8Array, at: number, limit = der.length): Element {
  const tag = der[at];
  let length = der[at + 1];
  if (tag === undefined || length === undefined) throw new Unreadable();
  let start = at + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4) throw new Unreadable();
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + (der[start + i] ?? Number.NaN);
    start += octets;
  }
  const end = start + length;
  if (!(end <= limit)) throw new Unreadable();
  return { tag, at, start, end };
}

/** The elements directly inside a constructed element. */
function children(der: Uint8Array, parent: Element): Element[] {
  const out: Element[] = [];
  for (let at = parent.start; at < parent.end; ) {
    const child = element(der, at, parent.end);
    out.push(child);
    at = child.end;
  }
  return out;
}

const SEQUENCE = 0x30;
const hexOf = (der: Uint8Array, e: Element) =>
  Array.from(der.subarray(e.start, e.end), (b) => b.toString(16).padStart(2, '0')).join('');

function expectTag(e: Element | undefined, tag: number): Element {
  if (!e || e.tag !== tag) throw new Unreadable();
  return e;
}

function derLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return [0x80 | bytes.length, ...bytes];
}

const tlv = (tag: number, content: Uint8Array | number[]): number[] => [
  tag,
  ...derLength(content.length),
  ...content,
];

/** An rsaEncryption SPKI around a PKCS#1 RSAPublicKey. */
function rsaSpki(rsaPublicKey: Uint8Array): Uint8Array {
  const algorithm = tlv(SEQUENCE, [...tlv(0x06, fromHexPairs(OID.rsaEncryption)), 0x05, 0x00]);
  return Uint8Array.from(tlv(SEQUENCE, [...algorithm, ...tlv(0x03, [0x00, ...rsaPublicKey])]));
}

function fromHexPairs(hex: string): number[] {
  return Array.from({ length: hex.length / 2 }, (_, i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16));
}

function toPem(spki: Uint8Array): string {
  const body = toBase64(spki).replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN PUBLIC KEY-----\n${body}-----END PUBLIC KEY-----\n`;
}

/** Reads an SPKI (SEQUENCE { SEQUENCE { OID, params }, BIT STRING }) at `at`. */
function readSpki(der: Uint8Array, at: number): PublicKeyPem {
  const spki = expectTag(element(der, at), SEQUENCE);
  const [algorithm, key] = children(der, spki);
  const [oid, params] = children(der, expectTag(algorithm, SEQUENCE));
  const keyBits = expectTag(key, 0x03);
  const algorithmOid = hexOf(der, expectTag(oid, 0x06));
  const bytes = der.subarray(spki.at, spki.end);
  if (algorithmOid === OID.rsaEncryption) return { kind: 'rsa', spkiPem: toPem(bytes) };
  if (algorithmOid === OID.rsaPss) {
    return { kind: 'rsa-pss', spkiPem: toPem(rsaSpki(der.subarray(keyBits.start + 1, keyBits.end))) };
  }
  if (algorithmOid === OID.ed25519) return { kind: 'ed25519', spkiPem: toPem(bytes) };
  const curve =
    algorithmOid === OID.ecPublicKey && params?.tag === 0x06 ? CURVES[hexOf(der, params)] : undefined;
  return { kind: curve ?? 'other', spkiPem: toPem(bytes) };
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END \1-----/;

/** The key of a PEM block; `null` when it is not one of the accepted kinds or its structure does not read. */
export function readPublicKeyPem(pem: string): PublicKeyPem | null {
  const block = PEM_BLOCK.exec(pem);
  if (!block?.[1] || block[2] === undefined) return null;
  const der = fromBase64(block[2]);
  try {
    if (block[1] === 'PUBLIC KEY') return readSpki(der, 0);
    if (block[1] === 'RSA PUBLIC KEY') {
      const key = expectTag(element(der, 0), SEQUENCE);
      if (key.end !== der.length || children(der, key).length !== 2) return null;
      return { kind: 'rsa', spkiPem: toPem(rsaSpki(der)) };
    }
    if (block[1] === 'CERTIFICATE') {
      // Certificate { TBSCertificate { [0] version?, serial, signature, issuer, validity, subject, SPKI, … }, … }
      const tbs = expectTag(children(der, expectTag(element(der, 0), SEQUENCE))[0], SEQUENCE);
      const fields = children(der, tbs);
      const skip = fields[0]?.tag === 0xa0 ? 1 : 0;
      const spki = fields[skip + 5];
      return spki ? readSpki(der, spki.at) : null;
    }
  } catch (err) {
    if (err instanceof Unreadable) return null;
    throw err;
  }
  return null;
}
