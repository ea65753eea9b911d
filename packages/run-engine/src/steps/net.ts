import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/**
 * Outbound address policy for steps (packages/run-engine/README.md): loopback, private, link-local, shared, reserved,
 * multicast and cloud metadata addresses are refused unless the deployment allows private networks (a dev and test
 * setting).
 *
 * The check sits in the socket's own DNS lookup, so the address that is checked is the address that is connected to — a
 * name cannot resolve to a public address for a pre-check and to 127.0.0.1 for the connection (DNS rebinding). Every
 * address a name resolves to must be allowed, not just the first. IP literals never reach a lookup and are checked
 * before the request; redirects go through the same path.
 */

export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** Thrown (as a lookup error) when a destination is refused; never retried. */
export class AddressRefusedError extends Error {
  readonly code = 'EFLOWGATE_ADDRESS_REFUSED';
  constructor(readonly host: string) {
    super(`the address of ${host} is in a private, loopback, link-local or metadata range`);
    this.name = 'AddressRefusedError';
  }
}

type Range = readonly [bytes: readonly number[], prefix: number];

const V4_BLOCKED: readonly Range[] = [
  [[0, 0, 0, 0], 8], // "this" network
  [[10, 0, 0, 0], 8], // private
  [[100, 64, 0, 0], 10], // shared (CGNAT; also Alibaba's metadata 100.100.100.200)
  [[127, 0, 0, 0], 8], // loopback
  [[169, 254, 0, 0], 16], // link-local (AWS, GCP, Azure metadata 169.254.169.254)
  [[172, 16, 0, 0], 12], // private
  [[192, 0, 0, 0], 24], // IETF protocol assignments (incl. 192.0.0.192 metadata)
  [[192, 0, 2, 0], 24], // documentation
  [[192, 88, 99, 0], 24], // 6to4 relay anycast
  [[192, 168, 0, 0], 16], // private
  [[198, 18, 0, 0], 15], // benchmarking
  [[198, 51, 100, 0], 24], // documentation
  [[203, 0, 113, 0], 24], // documentation
  [[224, 0, 0, 0], 4], // multicast
  [[240, 0, 0, 0], 4], // reserved and broadcast
];

const V6_BLOCKED: readonly Range[] = [
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64], // discard-only
  [[0x20, 0x01, 0x00, 0x00], 32], // Teredo (embeds an obfuscated IPv4 address)
  [[0x20, 0x01, 0x0d, 0xb8], 32], // documentation
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48], // local-use NAT64
  [[0xfc], 7], // unique local (incl. AWS metadata fd00:ec2::254)
  [[0xfe, 0x80], 10], // link-local
  [[0xfe, 0xc0], 10], // site-local (deprecated)
  [[0xff], 8], // multicast
];

function inRange(bytes: readonly number[], [prefixBytes, prefix]: Range): boolean {
  for (let bit = 0; bit < prefix; bit++) {
    const i = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((bytes[i] ?? 0) & mask) !== ((prefixBytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

export function parseIPv4(s: string): number[] | undefined {
  if (isIP(s) !== 4) return undefined;
  return s.split('.').map(Number);
}

/** 16 bytes of an IPv6 address (zone ids dropped, embedded IPv4 tails read), or undefined. */
export function parseIPv6(input: string): number[] | undefined {
  const s = input.replace(/%.*$/, '');
  if (isIP(s) !== 6) return undefined;
  let head = s;
  const tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  const v4 = parseIPv4(s.slice(lastColon + 1));
  if (v4) {
    head = `${s.slice(0, lastColon + 1)}0:0`;
    tail.push(...v4);
  }
  const [left = '', right] = head.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const words = [...l, ...new Array(8 - l.length - r.length).fill(0), ...r];
  const bytes = words.flatMap((w) => [(w >> 8) & 0xff, w & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes.length === 16 ? bytes : undefined;
}

function isBlockedV4(b: readonly number[]): boolean {
  return V4_BLOCKED.some((range) => inRange(b, range));
}

function isBlockedV6(b: readonly number[]): boolean {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // Unspecified, loopback, and IPv4-compatible (::a.b.c.d): judge the embedded address.
  if (zeros(0, 12)) return zeros(12, 15) ? true : isBlockedV4(b.slice(12));
  // IPv4-mapped ::ffff:a.b.c.d and NAT64 64:ff9b::a.b.c.d reach the embedded IPv4 address.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return isBlockedV4(b.slice(12));
  // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765, SIIT) translates to the embedded IPv4 address too.
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(10, 12)) return isBlockedV4(b.slice(12));
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12))
    return isBlockedV4(b.slice(12));
  // 6to4 2002:aabb:ccdd:: embeds a.b.c.d.
  if (b[0] === 0x20 && b[1] === 0x02) return isBlockedV4(b.slice(2, 6));
  return V6_BLOCKED.some((range) => inRange(b, range));
}

/** Whether an IP address may not be reached from a step. Anything that is not a valid address is refused. */
export function isBlockedAddress(address: string): boolean {
  const v4 = parseIPv4(address);
  if (v4) return isBlockedV4(v4);
  const v6 = parseIPv6(address);
  if (v6) return isBlockedV6(v6);
  return true;
}

const BLOCKED_NAMES =
  /^(localhost|.*\.localhost|metadata|metadata\.google\.internal|instance-data|instance-data\.ec2\.internal)\.?$/i;

/** The host of a URL without IPv6 brackets. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Which addresses are refused; undefined allows every address (private networks allowed). */
export type AddressPolicy = ((address: string) => boolean) | undefined;

/** Checks what can be checked before connecting: IP literals and names that always mean a local or metadata host. */
export function checkHost(host: string, isBlocked: AddressPolicy): void {
  if (!isBlocked) return;
  if (isIP(host) ? isBlocked(host) : BLOCKED_NAMES.test(host)) throw new AddressRefusedError(host);
}

/** A socket lookup that resolves every address of a name and refuses the name if any of them is blocked. */
export function guardedLookup(resolve: Resolver, isBlocked: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
          return;
        }
        if (isBlocked && addresses.some((a) => isBlocked(a.address))) {
          callback(new AddressRefusedError(hostname), '', 4);
          return;
        }
        const family = typeof options.family === 'number' ? options.family : 0;
        const usable =
          family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
        const list = usable.length > 0 ? usable : addresses;
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [...list]);
        else callback(null, (list[0] as LookupAddress).address, (list[0] as LookupAddress).family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    );
  };
}
