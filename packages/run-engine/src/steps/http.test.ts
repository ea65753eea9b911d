import { gzipSync } from 'node:zlib';
import { readEdn } from '@flowgate/flows';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunOutcome, runBody } from '../interpreter.js';
import type { RunLimits } from '../limits.js';
import type { StepEvent } from '../ports.js';
import { json, modelOf, startServer, type TestServer } from '../testing.js';
import type { ResolvedConnection } from './common.js';
import { createStepRunner } from './index.js';
import type { Resolver } from './net.js';
import { send } from './transport.js';

const SECRET = 'tok_9f8e7d6c5b4a39281706';

let server: TestServer;
let failuresLeft = 0;

beforeAll(async () => {
  server = await startServer(async (req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/v1/json':
        json(
          res,
          200,
          { hello: 'world', n: [1, 2] },
          { 'set-cookie': 'sid=abc', 'x-api-key': 'k-123456', 'x-trace': 't1' },
        );
        return;
      case '/v1/text':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('plain text');
        return;
      case '/v1/bad-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{not json');
        return;
      case '/v1/echo':
        json(
          res,
          201,
          {
            method: req.method,
            query: Object.fromEntries(url.searchParams),
            body,
            contentType: req.headers['content-type'] ?? null,
            note: req.headers['x-note'] ?? null,
            auth: req.headers.authorization ?? null,
          },
          { 'x-echo-auth': String(req.headers.authorization ?? '') },
        );
        return;
      case '/v1/flaky':
        if (failuresLeft > 0) {
          failuresLeft--;
          json(res, 503, { error: 'busy' });
        } else json(res, 200, { ok: true });
        return;
      case '/v1/missing':
        json(res, 404, { error: 'no such thing' });
        return;
      case '/v1/hang':
        return; // never answers
      case '/v1/huge':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(1_048_577));
        return;
      case '/v1/bomb':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.alloc(5_000_000, 'a')));
        return;
      case '/v1/gzip':
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ zipped: true })));
        return;
      case '/v1/redirect':
        res.writeHead(302, { location: '/v1/json' });
        res.end();
        return;
      default:
        json(res, 404, {});
    }
  });
});

afterAll(async () => {
  await server.close();
});

interface HttpRun {
  outcome: RunOutcome;
  events: StepEvent[];
}

async function http(
  config: string,
  options: {
    allowPrivateNetwork?: boolean;
    resolve?: Resolver;
    connection?: Partial<ResolvedConnection>;
    limits?: Partial<RunLimits>;
    /** Skip the validator, for configs only a hand-made tree can hold. */
    raw?: boolean;
  } = {},
): Promise<HttpRun> {
  const requires = ':requires [{:slot :api :type :http-api}]';
  let model = modelOf(`(flow/step :http :call ${options.raw ? '{:connection :api}' : config})`, requires);
  if (options.raw) {
    const read = readEdn(`(flow/step :http :call ${config})`);
    if (!read.ok) throw new Error('unreadable');
    model = { ...model, flow: read.value };
  }
  const events: StepEvent[] = [];
  const connection: ResolvedConnection = {
    baseUrl: `${server.url}/v1`,
    headers: { authorization: `Bearer ${SECRET}` },
    knownSecrets: [SECRET],
    ...options.connection,
  };
  const outcome = await runBody(
    model,
    {},
    {
      steps: createStepRunner({
        connections: {
          resolve: async (slot) => {
            if (slot !== 'api') throw new Error('unbound');
            return connection;
          },
        },
        kv: { get: async () => undefined, put: async () => undefined, delete: async () => undefined },
        allowPrivateNetwork: options.allowPrivateNetwork ?? true,
        ...(options.resolve ? { resolve: options.resolve } : {}),
      }),
      onEvent: (e) => {
        events.push(e);
      },
      ...(options.limits ? { limits: options.limits } : {}),
    },
  );
  return { outcome, events };
}

function result(r: HttpRun): { status: number; headers: Record<string, string>; body: unknown } {
  if (r.outcome.status !== 'completed') throw new Error(`not completed: ${JSON.stringify(r.outcome)}`);
  return r.outcome.result.json as { status: number; headers: Record<string, string>; body: unknown };
}

describe(':http through a connection on a real local server', () => {
  it('GETs JSON; drops cookies and secret-looking response headers', async () => {
    const r = result(await http('{:connection :api :path "/json"}'));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ hello: 'world', n: [1, 2] });
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-trace']).toBe('t1');
    expect(Object.keys(r.headers)).not.toContain('set-cookie');
    expect(Object.keys(r.headers)).not.toContain('x-api-key');
  });

  it('reads text by content type, or as asked', async () => {
    expect(result(await http('{:connection :api :path "/text"}')).body).toBe('plain text');
    expect(result(await http('{:connection :api :path "/json" :response-as :text}')).body).toBe(
      '{"hello":"world","n":[1,2]}',
    );
    expect((await http('{:connection :api :path "/text" :response-as :json}')).outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'http_response_invalid',
        message: 'the response (status 200) is not valid JSON',
        stepId: 'call',
      },
    });
    // :auto falls back to text when a JSON content type carries something else.
    expect(result(await http('{:connection :api :path "/bad-json"}')).body).toBe('{not json');
  });

  it('sends method, path, query, headers and a JSON body, with the connection’s credentials', async () => {
    const r = result(
      await http(`{:connection :api :method :post :path "/echo"
                   :query {:q "a b" :n 2 :skip nil :tags ["x" "y"]}
                   :headers {"X-Note" "hi" "Authorization" "Bearer forged"}
                   :json {:name "Ann" :tags [:a :b]}}`),
    );
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      method: 'POST',
      query: { q: 'a b', n: '2', tags: 'y' },
      body: '{"name":"Ann","tags":["a","b"]}',
      contentType: 'application/json',
      note: 'hi',
      auth: 'Bearer [redacted]',
    });
    const last = server.requests[server.requests.length - 1];
    expect(last?.url).toBe('/v1/echo?q=a+b&n=2&tags=x&tags=y');
    // The connection's credentials win over a header written in the flow.
    expect(last?.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it('sends a raw :body and HEAD answers without a body', async () => {
    const r = result(await http('{:connection :api :method :put :path "/echo" :body "raw text"}'));
    expect(r.body).toMatchObject({ method: 'PUT', body: 'raw text', contentType: null });
    const head = result(await http('{:connection :api :method :head :path "/json"}'));
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
  });

  it('decompresses gzip', async () => {
    expect(result(await http('{:connection :api :path "/gzip"}')).body).toEqual({ zipped: true });
  });

  it('follows redirects on the same origin', async () => {
    expect(result(await http('{:connection :api :path "/redirect"}')).body).toEqual({
      hello: 'world',
      n: [1, 2],
    });
  });

  it('retries 503 with backoff, reporting each retry, then succeeds', async () => {
    failuresLeft = 2;
    const before = server.requests.length;
    const run = await http('{:connection :api :path "/flaky" :retry {:max-attempts 3 :backoff-ms 5}}');
    expect(result(run)).toMatchObject({ status: 200, body: { ok: true } });
    expect(server.requests.length - before).toBe(3);
    expect(run.outcome.usage).toEqual({ steps: 1, httpCalls: 3, llmTokens: 0 });
    expect(run.events.filter((e) => e.type === 'step_retrying').map((e) => e.detail)).toEqual([
      { attempt: 1, delayMs: 5, reason: 'status 503' },
      { attempt: 2, delayMs: 10, reason: 'status 503' },
    ]);
  });

  it('returns the last 503 as the result once attempts are used up, and never retries a 404', async () => {
    failuresLeft = 5;
    expect(
      result(await http('{:connection :api :path "/flaky" :retry {:max-attempts 2 :backoff-ms 1}}')).status,
    ).toBe(503);
    failuresLeft = 0;
    const before = server.requests.length;
    expect(
      result(await http('{:connection :api :path "/missing" :retry {:max-attempts 3 :backoff-ms 1}}')).status,
    ).toBe(404);
    expect(server.requests.length - before).toBe(1);
  });

  it('retries network errors and then fails the step', async () => {
    const closed = await startServer(() => undefined);
    await closed.close();
    const run = await http(`{:url "${closed.url}/x" :retry {:max-attempts 2 :backoff-ms 1}}`);
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: {
        code: 'http_request_failed',
        message: 'network error (ECONNREFUSED) (2 attempts)',
        stepId: 'call',
      },
      usage: { httpCalls: 2 },
    });
  });

  it('times out per attempt', async () => {
    const started = Date.now();
    const run = await http(
      '{:connection :api :path "/hang" :timeout-ms 100 :retry {:max-attempts 2 :backoff-ms 1}}',
    );
    expect(run.outcome).toMatchObject({
      status: 'failed',
      error: { code: 'http_timeout', message: 'the request timed out after 100 ms (2 attempts)' },
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('caps the response size, also after decompression', async () => {
    for (const path of ['/huge', '/bomb']) {
      const run = await http(`{:connection :api :path "${path}"}`);
      expect(run.outcome, path).toMatchObject({
        status: 'failed',
        error: { code: 'http_response_too_large', message: 'the response is larger than 1048576 bytes' },
      });
    }
  });

  it('never lets the connection secret into the result or the events', async () => {
    const run = await http('{:connection :api :method :post :path "/echo" :json {:x 1}}');
    const r = result(run);
    expect(r.headers['x-echo-auth']).toBe('Bearer [redacted]');
    expect(JSON.stringify(run)).not.toContain(SECRET);
    expect(JSON.stringify(run.events)).not.toContain(SECRET);
    expect(run.events.map((e) => e.type)).toEqual(['step_started', 'step_completed']);
  });

  it('refuses bad configs clearly', async () => {
    for (const [config, message] of [
      [
        '{:connection :api :path "/json" :url "http://a.example"}',
        'an :http step needs exactly one of :connection or :url',
      ],
      ['{:connection :api :path "no-slash"}', ':path must start with "/"'],
      ['{:connection :api :json 1 :body "x"}', 'an :http step takes only one of :json or :body'],
      ['{:connection :api :surprise 1}', ':http step: the config: Unrecognized key: "surprise"'],
      ['{:connection :api :path "/json" :headers {"Host" "evil"}}', 'the host header is set by the engine'],
      [
        '{:connection :api :path "/json" :headers {"X-A" (str "a\\r\\nb")}}',
        'a header value contains a line break',
      ],
      ['{:connection :api :path "/json" :headers {"bad name" "x"}}', '"bad name" is not a valid header name'],
      [
        '{:connection :api :path "/json" :headers {"X-Price" "5 €"}}',
        'the request could not be built: a header has an invalid character',
      ],
      ['{:url "ftp://x.example/"}', 'the request URL must be an http or https URL on the base URL’s host'],
      ['{:url "http://user:pw@x.example/"}', 'credentials in the URL are not allowed; use a connection'],
      [
        '{:connection :api :timeout-ms 1000000}',
        ':http step: :timeout-ms: Too big: expected number to be <=60000',
      ],
    ] as const) {
      const run = await http(config, { raw: true });
      expect(run.outcome, config).toMatchObject({
        status: 'failed',
        error: { code: 'step_config_invalid', message },
      });
    }
    const unbound = await http('{:connection :api :path "/json"}', {
      connection: { baseUrl: 'not a url' },
    });
    expect(unbound.outcome).toMatchObject({
      error: { code: 'step_config_invalid', message: 'the connection base URL is not a valid URL' },
    });
  });
});

describe(':http address policy (private networks not allowed)', () => {
  const refused = (host: string) => ({
    status: 'failed',
    error: {
      code: 'network_address_refused',
      message: `refused to connect to ${host}: loopback, private, link-local and metadata addresses are not allowed`,
    },
  });

  it('refuses loopback, metadata and local names without sending anything', async () => {
    const before = server.requests.length;
    expect(
      (await http(`{:url "${server.url}/v1/json"}`, { allowPrivateNetwork: false })).outcome,
    ).toMatchObject(refused('127.0.0.1'));
    expect(
      (await http('{:url "http://169.254.169.254/latest/meta-data/"}', { allowPrivateNetwork: false }))
        .outcome,
    ).toMatchObject(refused('169.254.169.254'));
    expect(
      (await http(`{:url "http://localhost:${server.port}/v1/json"}`, { allowPrivateNetwork: false }))
        .outcome,
    ).toMatchObject(refused('localhost'));
    expect(
      (await http(`{:url "http://[::1]:${server.port}/"}`, { allowPrivateNetwork: false })).outcome,
    ).toMatchObject(refused('::1'));
    expect(
      (await http(`{:url "http://2130706433:${server.port}/"}`, { allowPrivateNetwork: false })).outcome,
    ).toMatchObject(refused('127.0.0.1'));
    expect(server.requests.length).toBe(before);
  });

  it('refuses a name that resolves to loopback, checked at connection time', async () => {
    const before = server.requests.length;
    const resolve: Resolver = async (host) =>
      host === 'rebind.example.test'
        ? [{ address: '127.0.0.1', family: 4 }]
        : [{ address: '93.184.216.34', family: 4 }];
    const run = await http(`{:url "http://rebind.example.test:${server.port}/v1/json"}`, {
      allowPrivateNetwork: false,
      resolve,
    });
    expect(run.outcome).toMatchObject(refused('rebind.example.test'));
    expect(run.outcome.usage.httpCalls).toBe(1);
    expect(server.requests.length).toBe(before);
  });

  it('refuses a connection whose base URL is private', async () => {
    const run = await http('{:connection :api :path "/json"}', { allowPrivateNetwork: false });
    expect(run.outcome).toMatchObject(refused('127.0.0.1'));
  });
});

describe('redirects (transport)', () => {
  // Only 127.0.0.1 counts as public here, so a redirect to 127.0.0.2 stands for one into a private network.
  const onlyLoopbackOne = {
    isBlocked: (a: string) => a !== '127.0.0.1',
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
  };
  const request = (url: string, headers: Record<string, string> = {}, method = 'GET', body?: Buffer) =>
    send(
      {
        url: new URL(url),
        method,
        headers,
        ...(body ? { body } : {}),
        credentialHeaders: new Set(['authorization']),
        maxResponseBytes: 1_000_000,
        signal: AbortSignal.timeout(5000),
        beforeSend: () => undefined,
      },
      onlyLoopbackOne,
    );

  let hop: TestServer;
  let other: TestServer;
  beforeAll(async () => {
    other = await startServer((req, res) =>
      json(res, 200, { auth: req.headers.authorization ?? null, method: req.method }),
    );
    hop = await startServer((req, res) => {
      const target = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
      const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 302);
      if ((req.url ?? '').startsWith('/final')) {
        json(res, 200, { auth: req.headers.authorization ?? null, method: req.method });
        return;
      }
      res.writeHead(status, { location: target });
      res.end();
    });
  });
  afterAll(async () => {
    await hop.close();
    await other.close();
  });

  it('re-checks every hop: a redirect into a private address is refused', async () => {
    await expect(
      request(`${hop.url}/r?to=${encodeURIComponent(`http://127.0.0.2:${other.port}/`)}`),
    ).rejects.toMatchObject({
      code: 'network_address_refused',
    });
    await expect(
      request(`${hop.url}/r?to=${encodeURIComponent(`http://localhost:${other.port}/`)}`),
    ).rejects.toMatchObject({
      code: 'network_address_refused',
    });
  });

  it('keeps credentials on the same origin and drops them across origins', async () => {
    const same = await request(`${hop.url}/r?to=/final`, { authorization: 'Bearer same-origin-token' });
    expect(JSON.parse(same.body.toString())).toEqual({ auth: 'Bearer same-origin-token', method: 'GET' });
    const cross = await request(`${hop.url}/r?to=${encodeURIComponent(`${other.url}/`)}`, {
      authorization: 'Bearer x-origin-token',
    });
    expect(JSON.parse(cross.body.toString())).toEqual({ auth: null, method: 'GET' });
  });

  it('turns POST into GET on 303, keeps it on 307, and stops after five redirects', async () => {
    const seeOther = await request(`${hop.url}/r?status=303&to=/final`, {}, 'POST', Buffer.from('x'));
    expect(JSON.parse(seeOther.body.toString())).toMatchObject({ method: 'GET' });
    const temporary = await request(`${hop.url}/r?status=307&to=/final`, {}, 'POST', Buffer.from('x'));
    expect(JSON.parse(temporary.body.toString())).toMatchObject({ method: 'POST' });
    await expect(request(`${hop.url}/r?to=${encodeURIComponent('/r?to=/r')}`)).rejects.toMatchObject({
      code: 'http_request_failed',
      message: 'more than 5 redirects',
    });
    await expect(
      request(`${hop.url}/r?to=${encodeURIComponent('file:///etc/passwd')}`),
    ).rejects.toMatchObject({
      code: 'http_request_failed',
      message: 'a redirect pointed to a URL that is not http or https',
    });
  });
});
