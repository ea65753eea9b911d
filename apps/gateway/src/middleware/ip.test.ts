import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { RuntimeBindings } from '../context.js';
import { clientIp, ipAllowed } from './ip.js';

/** The address each runtime's entry hands the app, read the same way whatever the runtime. */
async function seen(bindings: RuntimeBindings | undefined, trustedHops = 0, forwarded?: string) {
  const app = new Hono<{ Bindings: RuntimeBindings }>();
  app.get('/', (c) => c.text(clientIp(c, trustedHops) ?? 'none'));
  const headers: Record<string, string> = forwarded ? { 'x-forwarded-for': forwarded } : {};
  return (await app.fetch(new Request('http://gw/', { headers }), bindings)).text();
}

describe('clientIp', () => {
  it('reads the address Bun, Deno and Workers entries pass as a binding', async () => {
    expect(await seen({ remoteAddress: '198.51.100.4' })).toBe('198.51.100.4');
  });

  it("reads Node's socket address", async () => {
    expect(await seen({ incoming: { socket: { remoteAddress: '::ffff:10.0.0.9' } } })).toBe(
      '::ffff:10.0.0.9',
    );
  });

  it('is unknown when the runtime gave none', async () => {
    expect(await seen(undefined)).toBe('none');
    expect(await seen({})).toBe('none');
  });

  it('takes the N-th forwarded entry from the right behind N trusted proxies, never a spoofed left one', async () => {
    const peer = { remoteAddress: '127.0.0.1' };
    expect(await seen(peer, 1, '6.6.6.6, 203.0.113.9')).toBe('203.0.113.9');
    expect(await seen(peer, 2, '6.6.6.6, 203.0.113.9')).toBe('6.6.6.6');
    expect(await seen(peer, 0, '6.6.6.6')).toBe('127.0.0.1');
    expect(await seen(peer, 1, 'not-an-ip')).toBe('none');
  });
});

describe('ipAllowed', () => {
  it('matches addresses and ranges of both families, IPv4-mapped IPv6 as IPv4', () => {
    const rules = ['10.1.0.0/16', '2001:db8::/32', '192.0.2.7'];
    expect(ipAllowed('10.1.200.3', rules)).toBe(true);
    expect(ipAllowed('::ffff:10.1.0.1', rules)).toBe(true);
    expect(ipAllowed('2001:db8:1::5', rules)).toBe(true);
    expect(ipAllowed('192.0.2.7', rules)).toBe(true);
    expect(ipAllowed('192.0.2.8', rules)).toBe(false);
    expect(ipAllowed('10.2.0.1', rules)).toBe(false);
    expect(ipAllowed('garbage', rules)).toBe(false);
  });
});
