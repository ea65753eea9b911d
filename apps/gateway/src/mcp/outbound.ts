import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from '@flowgate/core';

/**
 * Outbound requests to addresses configured by users (connection health checks, later HTTP steps) must not
 * reach the deployment's own network: loopback, private, link-local and cloud metadata ranges are refused
 * unless the deployment allows them (a dev and test setting).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 0) return true;
  return blocked.check(address, v === 4 ? 'ipv4' : 'ipv6');
}

/** Throws unless every address the URL's host resolves to is public (or private networks are allowed). */
export async function assertPublicUrl(url: URL, allowPrivate: boolean): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('invalid_request', 'only http and https URLs can be called');
  }
  if (allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) throw new AppError('invalid_request', `cannot resolve ${host}`);
  if (addresses.some(isPrivateAddress)) {
    throw new AppError('forbidden', `${host} resolves to a private or loopback address, which this deployment does not allow`);
  }
}
