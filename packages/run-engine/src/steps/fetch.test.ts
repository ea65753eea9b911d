import { afterEach, describe, expect, it } from 'vitest';
import { isRunError } from '../errors.js';
import { json, startServer, type TestServer } from '../testing.js';
import { guardedFetch } from './fetch.js';
import { isBlockedAddress, systemResolver } from './net.js';

const open: TestServer[] = [];
async function server(...args: Parameters<typeof startServer>): Promise<TestServer> {
  const s = await startServer(...args);
  open.push(s);
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const loopbackAllowed = { isBlocked: undefined, resolve: systemResolver };

describe('guardedFetch', () => {
  it('sends method, headers and body and returns status, headers and the buffered body', async () => {
    const s = await server((_req, res, body) => json(res, 201, { echo: body }, { 'mcp-session-id': 's-1' }));
    let sent = 0;
    const f = guardedFetch({
      transport: loopbackAllowed,
      maxResponseBytes: 10_000,
      beforeSend: () => {
        sent++;
      },
    });
    const response = await f(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t', 'x-tenant': 'a' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('mcp-session-id')).toBe('s-1');
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ echo: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(sent).toBe(1);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]).toMatchObject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: 'Bearer t', 'x-tenant': 'a', 'content-type': 'application/json' },
    });
  });

  it('passes GET and DELETE without a body, and a 204 as a null body', async () => {
    const s = await server((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const f = guardedFetch({ transport: loopbackAllowed, maxResponseBytes: 100 });
    const got = await f(new URL(`${s.url}/a`));
    expect(got.status).toBe(204);
    expect(got.body).toBeNull();
    const deleted = await f(`${s.url}/a`, { method: 'DELETE', headers: { 'mcp-session-id': 's-1' } });
    expect(deleted.status).toBe(204);
    expect(s.requests.map((r) => [r.method, r.body, r.headers['mcp-session-id']])).toEqual([
      ['GET', '', undefined],
      ['DELETE', '', 's-1'],
    ]);
  });

  it('refuses a loopback address when private addresses are blocked, before anything is sent', async () => {
    const s = await server((_req, res) => json(res, 200, {}));
    let sent = 0;
    const f = guardedFetch({
      transport: { isBlocked: isBlockedAddress, resolve: systemResolver },
      maxResponseBytes: 100,
      beforeSend: () => {
        sent++;
      },
    });
    const error = await f(`${s.url}/mcp`, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(isRunError(error) && error.toJSON()).toEqual({
      code: 'network_address_refused',
      message:
        'refused to connect to 127.0.0.1: loopback, private, link-local and metadata addresses are not allowed',
    });
    expect(sent).toBe(0);
    expect(s.requests).toHaveLength(0);
  });

  it('caps the response size', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(5000));
    });
    const f = guardedFetch({ transport: loopbackAllowed, maxResponseBytes: 1000 });
    const error = await f(s.url).catch((e: unknown) => e);
    expect(isRunError(error) && error.code).toBe('http_response_too_large');
  });

  it('follows a redirect, counting each hop, and drops credentials when the origin changes', async () => {
    const target = await server((_req, res) => json(res, 200, { ok: true }));
    const origin = await server((_req, res) => {
      res.writeHead(307, { location: `${target.url}/next` });
      res.end();
    });
    let sent = 0;
    const f = guardedFetch({
      transport: loopbackAllowed,
      maxResponseBytes: 1000,
      credentialHeaders: ['X-Api-Key'],
      beforeSend: () => {
        sent++;
      },
    });
    const response = await f(`${origin.url}/start`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'x-api-key': 'k', 'x-tenant': 'a' },
      body: '{}',
    });
    expect(await response.json()).toEqual({ ok: true });
    expect(sent).toBe(2);
    expect(origin.requests[0]?.headers).toMatchObject({ authorization: 'Bearer t', 'x-api-key': 'k' });
    expect(target.requests[0]?.headers.authorization).toBeUndefined();
    expect(target.requests[0]?.headers['x-api-key']).toBeUndefined();
    expect(target.requests[0]?.headers['x-tenant']).toBe('a');
  });

  it('stops when beforeSend throws (the run’s HTTP-call limit)', async () => {
    const s = await server((_req, res) => json(res, 200, {}));
    const f = guardedFetch({
      transport: loopbackAllowed,
      maxResponseBytes: 100,
      beforeSend: () => {
        throw new Error('limit');
      },
    });
    await expect(f(s.url)).rejects.toThrow('limit');
    expect(s.requests).toHaveLength(0);
  });

  it('rejects with the abort reason when the signal aborts', async () => {
    const s = await server(() => {
      // never answers
    });
    const controller = new AbortController();
    const f = guardedFetch({ transport: loopbackAllowed, maxResponseBytes: 100, signal: controller.signal });
    const pending = f(s.url);
    setTimeout(() => controller.abort(new Error('stopped')), 50);
    await expect(pending).rejects.toThrow('stopped');
  });
});
