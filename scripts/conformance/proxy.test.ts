import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type AuthProxy, startAuthProxy } from './proxy.js';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

let upstream: Server | undefined;
let proxy: AuthProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  await new Promise<void>((r) => (upstream ? upstream.close(() => r()) : r()));
  proxy = undefined;
  upstream = undefined;
});

/** An upstream that records what it received and answers 418 with a custom header and a JSON body. */
async function startUpstream(seen: Seen[]): Promise<string> {
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.writeHead(418, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => upstream?.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/api/workspaces/ws-a/mcp`;
}

function send(url: string, method: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => {
        text += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('auth proxy', () => {
  it('adds the bearer token and passes method, path, Host, Origin, other headers, body and the answer through', async () => {
    const seen: Seen[] = [];
    const target = await startUpstream(seen);
    proxy = await startAuthProxy({ target, token: 'fgk_abc_secret' });
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const res = await send(
      `${proxy.url}?x=1`,
      'POST',
      {
        host: 'evil.example.com',
        origin: 'http://evil.example.com',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        authorization: 'Bearer client-supplied',
      },
      body,
    );
    expect(res.status).toBe(418);
    expect(res.headers['x-upstream']).toBe('yes');
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toBe('{"ok":true}');
    expect(seen).toHaveLength(1);
    const got = seen[0]!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/api/workspaces/ws-a/mcp?x=1');
    expect(got.body).toBe(body);
    expect(got.headers.host).toBe('evil.example.com');
    expect(got.headers.origin).toBe('http://evil.example.com');
    expect(got.headers.authorization).toBe('Bearer fgk_abc_secret');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers.accept).toBe('application/json, text/event-stream');
    expect(got.headers['mcp-protocol-version']).toBe('2025-11-25');
  });

  it('forwards other methods and paths unchanged', async () => {
    const seen: Seen[] = [];
    const target = await startUpstream(seen);
    proxy = await startAuthProxy({ target, token: 't' });
    const res = await send(proxy.url.replace('/mcp', '/healthz'), 'GET', {});
    expect(res.status).toBe(418);
    expect(seen[0]?.method).toBe('GET');
    expect(seen[0]?.url).toBe('/healthz');
    expect(seen[0]?.headers.authorization).toBe('Bearer t');
  });

  it('answers 503 until pointed at a gateway, then forwards', async () => {
    const seen: Seen[] = [];
    const target = await startUpstream(seen);
    proxy = await startAuthProxy({});
    const before = await send(proxy.url, 'POST', { 'content-type': 'application/json' }, '{}');
    expect(before.status).toBe(503);
    expect(seen).toHaveLength(0);
    proxy.retarget(target, 'later');
    const after = await send(proxy.url, 'POST', { 'content-type': 'application/json' }, '{}');
    expect(after.status).toBe(418);
    expect(seen[0]?.headers.authorization).toBe('Bearer later');
  });

  it('answers 502 with a JSON error when the gateway is unreachable', async () => {
    const seen: Seen[] = [];
    const target = await startUpstream(seen);
    await new Promise<void>((r) => upstream?.close(() => r()));
    upstream = undefined;
    proxy = await startAuthProxy({ target, token: 'secret-token' });
    const res = await send(proxy.url, 'POST', { 'content-type': 'application/json' }, '{}');
    expect(res.status).toBe(502);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'bad_gateway' });
    expect(res.body).not.toContain('secret-token');
  });
});
