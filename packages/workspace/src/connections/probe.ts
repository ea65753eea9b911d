import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { AppError } from '@flowgate/core';
import {
  AddressRefusedError,
  checkHost,
  guardedLookup as engineLookup,
  isBlockedAddress,
  type Resolver,
  systemResolver,
} from '@flowgate/run-engine';

/**
 * Outbound requests to addresses configured by users (connection health checks) follow the same address policy
 * as the run engine's HTTP steps: one list of refused ranges and one check inside the connection's own DNS
 * lookup (so the address checked is the address connected to). This module adds what a health check needs on
 * top: a bounded DNS wait and messages written for the admin reading the check.
 */
export function isPrivateAddress(address: string): boolean {
  return isBlockedAddress(address);
}

const LOOKUP_TIMEOUT_MS = 3_000;

/** The system resolver, but giving up after a bounded wait. */
const boundedResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        Object.assign(new Error(`could not resolve ${hostname} within ${LOOKUP_TIMEOUT_MS} ms`), {
          code: 'ETIMEOUT',
        }),
      );
    }, LOOKUP_TIMEOUT_MS);
    systemResolver(hostname).then(
      (addresses) => {
        clearTimeout(timer);
        resolve(addresses);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });

/** A `lookup` for node:http that resolves, refuses private answers, and gives up after a bounded wait. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  const lookup = engineLookup(boundedResolver, allowPrivate ? undefined : isBlockedAddress);
  return (hostname, options, callback) =>
    lookup(hostname, options, (err, address, family) => {
      if (err instanceof AddressRefusedError) {
        const refused: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to a private or loopback address, which this deployment does not allow`,
        );
        refused.code = 'EPRIVATE';
        callback(refused, '', family);
      } else callback(err, address as string, family);
    });
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
  // IP literals and local or metadata names never reach a lookup: check them before connecting.
  let refusedBeforeConnect = false;
  try {
    checkHost(host, options.allowPrivate ? undefined : isBlockedAddress);
  } catch {
    refusedBeforeConnect = true;
  }
  if (refusedBeforeConnect) {
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
