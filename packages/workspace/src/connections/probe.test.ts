import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedLookup, isPrivateAddress, probe } from './probe.js';

let server: Server;
let port: number;
const seen: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    res
      .writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'text/plain' })
      .end('x'.repeat(10_000));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('outbound guard', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.2.3.4', true],
    ['169.254.169.254', true],
    ['100.64.1.1', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['64:ff9b::7f00:1', true],
    ['2002:7f00:1::', true],
    ['::7f00:1', true],
    ['fd00::1', true],
    ['8.8.8.8', false],
    ['2606:4700::1111', false],
  ])('%s private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });

  it('refuses loopback before connecting, and allows it when the deployment says so', async () => {
    const before = seen.length;
    await expect(
      probe(new URL(`http://127.0.0.1:${port}/`), { headers: {}, timeoutMs: 2_000, allowPrivate: false }),
    ).rejects.toThrow(/private or loopback/);
    await expect(
      probe(new URL(`http://localhost:${port}/`), { headers: {}, timeoutMs: 2_000, allowPrivate: false }),
    ).rejects.toThrow(/private or loopback/);
    expect(seen.length).toBe(before);
    const ok = await probe(new URL(`http://127.0.0.1:${port}/missing`), {
      headers: {},
      timeoutMs: 2_000,
      allowPrivate: true,
    });
    expect(ok.status).toBe(404);
    expect(seen.at(-1)).toBe('/missing');
  });

  it('checks names in the lookup the connection itself uses', async () => {
    const result = await new Promise<{ err: NodeJS.ErrnoException | null }>((resolve) =>
      guardedLookup(false)('localhost', { all: false }, (err) => resolve({ err })),
    );
    expect(result.err?.code).toBe('EPRIVATE');
    const allowed = await new Promise<{ address: string }>((resolve) =>
      guardedLookup(true)('localhost', { all: false }, (_err, address) =>
        resolve({ address: address as string }),
      ),
    );
    expect(isPrivateAddress(allowed.address)).toBe(true);
  });
});
