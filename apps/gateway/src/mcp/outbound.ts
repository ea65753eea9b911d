import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { AppError } from '@flowgate/core';

/**
 * Outbound requests to addresses configured by users (connection health checks, later HTTP steps) must not
 * reach the deployment's own network: loopback, private, link-local, metadata and translation ranges are
 * refused unless the deployment allows them (a dev and test setting). The check runs inside the connection's
 * own DNS lookup, so the address checked is the address connected to (no rebinding between check and use).
 */
// Separate lists: Node also matches IPv4 addresses against IPv6 rules (as ::ffff:a.b.c.d), which would make
// the IPv4-mapped range below swallow every IPv4 address.
const blocked = new BlockList();
const blocked6 = new BlockList();
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
  ['::', 96], // unspecified, loopback and IPv4-compatible
  ['::ffff:0:0', 96], // IPv4-mapped
  ['64:ff9b::', 96], // NAT64
  ['2002::', 16], // 6to4
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked6.addSubnet(net, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 0) return true;
  return v === 4 ? blocked.check(address, 'ipv4') : blocked6.check(address, 'ipv6');
}

const LOOKUP_TIMEOUT_MS = 3_000;

/** A `lookup` for node:http that resolves, refuses private answers, and gives up after a bounded wait. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    let done = false;
    const finish = (
      err: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      callback(err, address as string, family);
    };
    const timer = setTimeout(() => {
      const err: NodeJS.ErrnoException = new Error(
        `could not resolve ${hostname} within ${LOOKUP_TIMEOUT_MS} ms`,
      );
      err.code = 'ETIMEOUT';
      finish(err, '');
    }, LOOKUP_TIMEOUT_MS);
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err) return finish(err, '');
      const list = addresses as LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0 || (!allowPrivate && usable.length !== list.length)) {
        const refused: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to a private or loopback address, which this deployment does not allow`,
        );
        refused.code = 'EPRIVATE';
        return finish(refused, '');
      }
      const first = usable[0] as LookupAddress;
      if (options.all) finish(null, usable);
      else finish(null, first.address, first.family);
    });
  };
}

export interface ProbeResult {
  status: number;
  latencyMs: number;
}

/**
 * One bounded GET whose body is discarded (health checks). No redirects are followed. Literal IP hosts are
 * checked before connecting; names are checked in the lookup.
 */
export function probe(
  url: URL,
  options: { headers: Record<string, string>; timeoutMs: number; allowPrivate: boolean },
): Promise<ProbeResult> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new AppError('invalid_request', 'only http and https URLs can be called'));
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (
    !options.allowPrivate &&
    (isIP(host) ? isPrivateAddress(host) : host === 'localhost' || host.endsWith('.localhost'))
  ) {
    return Promise.reject(
      new AppError(
        'forbidden',
        `${host} is a private or loopback address, which this deployment does not allow`,
      ),
    );
  }
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'GET',
        headers: options.headers,
        lookup: guardedLookup(options.allowPrivate),
        timeout: options.timeoutMs,
        signal: AbortSignal.timeout(options.timeoutMs),
      },
      (res) => {
        res.resume();
        res.destroy();
        resolve({ status: res.statusCode ?? 0, latencyMs: Math.round(performance.now() - started) });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPRIVATE') reject(new AppError('forbidden', err.message));
      else if (err.name === 'TimeoutError' || err.name === 'AbortError' || err.code === 'ETIMEOUT') {
        reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));
      } else reject(err);
    });
    req.end();
  });
}
