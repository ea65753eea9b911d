import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BRIDGE_ERRORS, MAX_LINE_BYTES, StdioBridge } from './bridge.js';
import { type FakeUpstream, sendJson, startUpstream } from './test-upstream.js';

const KEY_ID = 'AbCdEfGh12345678';
const KEY_SECRET = 'S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3tX';
const KEY = `fgk_${KEY_ID}_${KEY_SECRET}`;

interface RpcLine {
  jsonrpc: string;
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

let up: FakeUpstream;
/** Everything any bridge in this file wrote, scanned for the key once all tests ran. */
const printed: string[] = [];
afterAll(() => {
  expectNoSecret(...printed);
});
beforeEach(async () => {
  up = await startUpstream();
});
afterEach(async () => {
  await up.close();
});

function bridgeFor(
  options: { timeoutMs?: number; maxLineBytes?: number; headers?: Record<string, string> } = {},
) {
  const input = new PassThrough();
  const lines: string[] = [];
  const logs: string[] = [];
  const bridge = new StdioBridge(
    {
      endpoint: `${up.url}/api/workspaces/ws-acme/mcp`,
      token: KEY,
      tokenEnvVar: 'FG_KEY',
      workspaceId: 'ws-acme',
      headers: options.headers ?? {},
      timeoutMs: options.timeoutMs ?? 5_000,
      fetch,
    },
    {
      input,
      writeLine: (l) => {
        lines.push(l);
        printed.push(l);
      },
      log: (t) => {
        logs.push(t);
        printed.push(t);
      },
    },
    options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {},
  );
  const done = bridge.run();
  return {
    lines,
    logs,
    send(message: unknown) {
      input.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
    },
    write(raw: string | Buffer) {
      input.write(raw);
    },
    async end() {
      input.end();
      await done;
    },
    parsed: () => lines.map((l) => JSON.parse(l) as RpcLine),
    async waitFor(n: number, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (lines.length < n) {
        if (Date.now() > deadline)
          throw new Error(`expected ${n} lines, got ${lines.length}: ${lines.join('\n')}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return lines.map((l) => JSON.parse(l) as RpcLine);
    },
  };
}

function expectNoSecret(...texts: string[]) {
  for (const t of texts) {
    expect(t).not.toContain(KEY);
    expect(t).not.toContain(KEY_SECRET);
  }
}

const initialize = (id: number, protocolVersion = '2025-06-18') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'test-client\u0007', version: '2.0' } },
});

describe('stdio bridge: the happy path', () => {
  it('posts each line with the bearer, media types and narrowing headers, and carries the negotiated version', async () => {
    const b = bridgeFor({ headers: { 'X-MCP-Readonly': 'true', 'X-MCP-Toolsets': 'read,feedback' } });
    b.send(initialize(1));
    await b.waitFor(1);
    b.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    b.send({ jsonrpc: '2.0', id: 'two', method: 'tools/list' });
    await b.end();

    expect(b.parsed()).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          serverInfo: { name: 'fake', version: '1' },
        },
      },
      { jsonrpc: '2.0', id: 'two', result: { echo: 'tools/list' } },
    ]);
    expect(up.requests).toHaveLength(3);
    for (const req of up.requests) {
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/api/workspaces/ws-acme/mcp');
      expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers.accept).toBe('application/json, text/event-stream');
      expect(req.headers['x-mcp-readonly']).toBe('true');
      expect(req.headers['x-mcp-toolsets']).toBe('read,feedback');
    }
    // initialize negotiates; everything after it carries the version the server chose
    expect(up.requests[0]?.headers['mcp-protocol-version']).toBeUndefined();
    expect(up.requests[1]?.headers['mcp-protocol-version']).toBe('2025-06-18');
    expect(up.requests[2]?.headers['mcp-protocol-version']).toBe('2025-06-18');
    // the client's name (control characters dropped) identifies the caller in the server's audit log
    expect(up.requests[2]?.headers['user-agent']).toBe('test-client/2.0 flowgate-mcp-stdio');
    // the body is forwarded byte for byte
    expect(JSON.parse(up.requests[2]?.body ?? '')).toEqual({
      jsonrpc: '2.0',
      id: 'two',
      method: 'tools/list',
    });
    expect(b.logs).toEqual([]);
  });

  it('sends the 2026-07-28 headers implied by a request envelope, with no initialize before it', async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } });
    await b.waitFor(1);
    b.send({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'flowgate://ü', _meta: meta } });
    await b.end();
    expect(up.requests[0]?.headers).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'server/discover',
    });
    expect(up.requests[0]?.headers['mcp-name']).toBeUndefined();
    expect(up.requests[1]?.headers).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'resources/read',
      'mcp-name': `=?base64?${Buffer.from('flowgate://ü').toString('base64')}?=`,
    });
  });

  it('prints nothing for notifications (202) and for client responses', async () => {
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    b.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
    b.send({ jsonrpc: '2.0', id: 99, result: {} });
    await b.end();
    expect(up.requests).toHaveLength(3);
    expect(b.lines).toEqual([]);
    expect(b.logs).toEqual([]);
  });

  it('decodes an SSE answer into one JSON line per event, multi-line data included', async () => {
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        ': keep-alive comment\n' +
          'event: message\n' +
          'data: {"jsonrpc":"2.0","method":"notifications/progress",\n' +
          'data:  "params":{"progress":1}}\n\n' +
          'id: 7\r\n' +
          'data: {"jsonrpc":"2.0","id":5,"result":{"ok":true}}\r\n\r\n',
      );
    });
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'x' } });
    await b.end();
    expect(b.lines).toEqual([
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}',
      '{"jsonrpc":"2.0","id":5,"result":{"ok":true}}',
    ]);
  });

  it('re-serialises a pretty-printed answer onto a single line', async () => {
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "result": {\n    "text": "a\\nb"\n  }\n}\n');
    });
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await b.end();
    expect(b.lines).toEqual(['{"jsonrpc":"2.0","id":1,"result":{"text":"a\\nb"}}']);
  });

  it('forwards a batch and writes the batch answer as one line', async () => {
    up.handle((req, res) => {
      const batch = JSON.parse(req.body) as Array<{ id?: number }>;
      sendJson(
        res,
        200,
        batch.filter((m) => m.id !== undefined).map((m) => ({ jsonrpc: '2.0', id: m.id, result: {} })),
      );
    });
    const b = bridgeFor();
    b.send([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    await b.end();
    expect(b.lines).toEqual(['[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]']);
  });

  it('gives an id-less server error the id of the one request it answers', async () => {
    up.handle((_req, res) =>
      sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } }),
    );
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 41, method: 'server/discover' });
    await b.end();
    expect(b.parsed()).toEqual([
      { jsonrpc: '2.0', id: 41, error: { code: -32600, message: 'Invalid Request' } },
    ]);
  });

  it('runs requests concurrently: a fast answer is not held behind a slow one', async () => {
    up.handle((req, res) => {
      const msg = JSON.parse(req.body) as { id: number; method: string };
      const delay = msg.method === 'slow' ? 400 : 0;
      setTimeout(() => sendJson(res, 200, { jsonrpc: '2.0', id: msg.id, result: { m: msg.method } }), delay);
    });
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 1, method: 'slow' });
    b.send({ jsonrpc: '2.0', id: 2, method: 'fast' });
    await b.end();
    expect(b.parsed().map((m) => m.id)).toEqual([2, 1]);
  });

  it('keeps every line whole under many concurrent answers, and waits for all of them at end of input', async () => {
    up.handle((req, res) => {
      const msg = JSON.parse(req.body) as { id: number };
      setTimeout(
        () =>
          sendJson(res, 200, { jsonrpc: '2.0', id: msg.id, result: { pad: 'x'.repeat(20_000 + msg.id) } }),
        Math.random() * 30,
      );
    });
    const b = bridgeFor();
    for (let i = 1; i <= 60; i++) b.send({ jsonrpc: '2.0', id: i, method: 'ping' });
    await b.end();
    const ids = b.parsed().map((m) => m.id);
    expect(ids.sort((x, y) => Number(x) - Number(y))).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    for (const m of b.parsed()) expect(String(m.result?.pad).length).toBe(20_000 + Number(m.id));
  });
});

describe('stdio bridge: hostile input', () => {
  it('answers garbage lines with -32700 (id null) and non-messages with -32600, and keeps going', async () => {
    const b = bridgeFor();
    b.send('this is not json');
    b.send('{"jsonrpc":"2.0","id":1,');
    b.send('\u0000\u0001\u00ff');
    b.send('42');
    b.send('[]');
    b.send('"a string"');
    b.write('\n\r\n   \n'); // blank lines are skipped
    b.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
    await b.end();
    const parsed = b.parsed();
    expect(parsed.slice(0, 3)).toEqual(
      Array(3).fill({
        jsonrpc: '2.0',
        id: null,
        error: { code: BRIDGE_ERRORS.parse, message: 'Parse error: the input line is not valid JSON' },
      }),
    );
    expect(parsed.slice(3, 6).map((m) => [m.id, m.error?.code])).toEqual([
      [null, -32600],
      [null, -32600],
      [null, -32600],
    ]);
    expect(parsed[6]).toEqual({ jsonrpc: '2.0', id: 7, result: { echo: 'ping' } });
    // only the valid request reached the server
    expect(up.requests).toHaveLength(1);
  });

  it('drops a 5 MB line as it streams in, answers with the id it starts with, and continues', async () => {
    const b = bridgeFor();
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 'big-1',
      method: 'tools/call',
      params: { name: 'send_feedback', arguments: { summary: 'x'.repeat(5 * 1024 * 1024) } },
    });
    // fed in 64 KiB chunks, as a pipe delivers it
    for (let i = 0; i < huge.length; i += 65_536) b.write(huge.slice(i, i + 65_536));
    b.write('\n');
    b.write(`${'y'.repeat(5 * 1024 * 1024)}\n`);
    b.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    await b.end();
    const parsed = b.parsed();
    expect(parsed).toEqual([
      {
        jsonrpc: '2.0',
        id: 'big-1',
        error: {
          code: BRIDGE_ERRORS.invalidRequest,
          message: 'Invalid Request: the line exceeds 1 MiB and was dropped',
        },
      },
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: BRIDGE_ERRORS.invalidRequest,
          message: 'Invalid Request: the line exceeds 1 MiB and was dropped',
        },
      },
      { jsonrpc: '2.0', id: 8, result: { echo: 'ping' } },
    ]);
    expect(up.requests).toHaveLength(1);
  });

  it('refuses lines over 1 MiB, the gateway body limit, and sends one just under it', async () => {
    expect(MAX_LINE_BYTES).toBe(1024 * 1024);
    const line = (id: string, size: number) => {
      const head = `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"x","arguments":{"s":"`;
      const tail = '"}}}';
      return `${head}${'z'.repeat(size - head.length - tail.length)}${tail}`;
    };
    const b = bridgeFor();
    b.write(`${line('over', 2 * 1024 * 1024)}\n`);
    b.write(`${line('under', MAX_LINE_BYTES)}\n`);
    await b.end();
    expect(b.parsed()).toEqual([
      {
        jsonrpc: '2.0',
        id: 'over',
        error: {
          code: BRIDGE_ERRORS.invalidRequest,
          message: 'Invalid Request: the line exceeds 1 MiB and was dropped',
        },
      },
      { jsonrpc: '2.0', id: 'under', result: { echo: 'tools/call' } },
    ]);
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]?.body.length).toBe(MAX_LINE_BYTES);
  });

  it('names a smaller line limit in KiB', async () => {
    const b = bridgeFor({ maxLineBytes: 64 * 1024 });
    b.write(`{"jsonrpc":"2.0","id":1,"method":"${'m'.repeat(70_000)}"}\n`);
    await b.end();
    expect(b.parsed()[0]?.error?.message).toBe('Invalid Request: the line exceeds 64 KiB and was dropped');
  });

  it('accepts a last line without a trailing newline, and CRLF line ends', async () => {
    const b = bridgeFor();
    b.write('{"jsonrpc":"2.0","id":1,"method":"a"}\r\n{"jsonrpc":"2.0","id":2,"method":"b"}');
    await b.end();
    expect(b.parsed().map((m) => m.result?.echo)).toEqual(['a', 'b']);
  });

  it('reassembles lines and multi-byte characters split across chunks', async () => {
    const b = bridgeFor();
    const line = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"é☃"}\n', 'utf8');
    for (const byte of line) b.write(Buffer.from([byte]));
    await b.end();
    expect(b.parsed()).toEqual([{ jsonrpc: '2.0', id: 1, result: { echo: 'é☃' } }]);
  });
});

describe('stdio bridge: upstream failures become JSON-RPC errors with the request id', () => {
  it('an HTML 502 from a proxy: status, page title and a retry hint', async () => {
    up.handle((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(
        `<html><head><title>502 Bad Gateway</title><style>body{}</style></head><body><h1>Bad Gateway</h1><p>${KEY}</p></body></html>`,
      );
    });
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    await b.end();
    expect(b.parsed()).toEqual([
      {
        jsonrpc: '2.0',
        id: 3,
        error: {
          code: BRIDGE_ERRORS.upstream,
          message:
            'upstream answered 502: 502 Bad Gateway — the gateway or a proxy in front of it failed (HTTP 502); retry, and check the server logs',
          data: { httpStatus: 502 },
        },
      },
    ]);
  });

  it('an HTML body without a title is reduced to its text, and a token echoed in it is redacted', async () => {
    up.handle((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<body><script>alert(1)</script><p>down for maintenance, token ${KEY}</p></body>`);
    });
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    await b.end();
    const [m] = b.parsed();
    expect(m?.error?.message).toBe(
      'upstream answered 503: down for maintenance, token [redacted] — the gateway or a proxy in front of it failed (HTTP 503); retry, and check the server logs',
    );
    expectNoSecret(...b.lines, ...b.logs);
  });

  it.each([
    [
      401,
      { code: 'invalid_token', message: 'unknown or revoked API key' },
      'upstream answered 401: invalid_token: unknown or revoked API key — check the key in $FG_KEY: it is unknown, expired or revoked, or was copied incompletely',
    ],
    [
      403,
      { code: 'forbidden', message: 'this token does not grant access to the requested workspace' },
      'upstream answered 403: forbidden: this token does not grant access to the requested workspace — the key does not grant access to workspace ws-acme: a key of another workspace, a disabled service account, or an IP allowlist / Origin rule',
    ],
    [
      400,
      {
        code: 'invalid_narrowing',
        message: 'Invalid narrowing. X-MCP-Toolsets: unknown "x"; valid: all, read',
      },
      'upstream answered 400: invalid_narrowing: Invalid narrowing. X-MCP-Toolsets: unknown "x"; valid: all, read — the server refused the narrowing flags; use the names it lists as valid',
    ],
  ])('HTTP %i with a JSON error body', async (status, body, message) => {
    up.handle((_req, res) => sendJson(res, status, body));
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 'q', method: 'tools/list' });
    await b.end();
    expect(b.parsed()).toEqual([
      {
        jsonrpc: '2.0',
        id: 'q',
        error: {
          code: BRIDGE_ERRORS.upstream,
          message,
          data: { httpStatus: status, upstreamCode: body.code },
        },
      },
    ]);
  });

  it('404 names the endpoint it tried', async () => {
    up.handle((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
    });
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await b.end();
    expect(b.parsed()[0]?.error?.message).toBe(
      `upstream answered 404: Not Found — no MCP endpoint at ${up.url}/api/workspaces/ws-acme/mcp: check --api-url and --workspace`,
    );
  });

  it('an upstream that hangs past --timeout: -32001 for that request, others still answered', async () => {
    up.handle((req, res) => {
      const msg = JSON.parse(req.body) as { id: number; method: string };
      if (msg.method === 'hang') return; // never answers
      sendJson(res, 200, { jsonrpc: '2.0', id: msg.id, result: {} });
    });
    const b = bridgeFor({ timeoutMs: 300 });
    const started = Date.now();
    b.send({ jsonrpc: '2.0', id: 1, method: 'hang' });
    b.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    await b.end();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(b.parsed()).toEqual([
      { jsonrpc: '2.0', id: 2, result: {} },
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: BRIDGE_ERRORS.timeout,
          message: `no answer from ${up.url} within 300 ms (--timeout)`,
          data: { reason: 'timeout' },
        },
      },
    ]);
  });

  it('a server that is not listening: a connection error naming the origin', async () => {
    const closedUrl = up.url;
    await up.close();
    up = await startUpstream(); // for afterEach; the bridge below targets the closed port
    const input = new PassThrough();
    const lines: string[] = [];
    const bridge = new StdioBridge(
      {
        endpoint: `${closedUrl}/api/workspaces/ws-acme/mcp`,
        token: KEY,
        tokenEnvVar: 'FG_KEY',
        workspaceId: 'ws-acme',
        headers: {},
        timeoutMs: 5_000,
        fetch,
      },
      {
        input,
        writeLine: (l) => {
          lines.push(l);
          printed.push(l);
        },
        log: (t) => printed.push(t),
      },
    );
    const done = bridge.run();
    input.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await done;
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: BRIDGE_ERRORS.upstream,
          message: `cannot reach the Flowgate API at ${closedUrl} (ECONNREFUSED): is the server running and --api-url right?`,
          data: { reason: 'network' },
        },
      },
    ]);
  });

  it('a 200 that is not JSON-RPC, and a 202 for a request, are errors rather than silence', async () => {
    let n = 0;
    up.handle((_req, res) => {
      n++;
      if (n === 1) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>login page</html>');
      } else {
        res.writeHead(202);
        res.end();
      }
    });
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await b.waitFor(1);
    b.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    await b.end();
    expect(b.parsed().map((m) => [m.id, m.error?.message])).toEqual([
      [1, 'upstream answered 200 with text/html instead of a JSON-RPC response'],
      [2, 'upstream answered 202 with an empty body instead of a JSON-RPC response'],
    ]);
  });

  it('a failed notification is reported on stderr only, without the key', async () => {
    up.handle((_req, res) => sendJson(res, 401, { code: 'invalid_token', message: `bad token ${KEY}` }));
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await b.end();
    expect(b.lines).toEqual([]);
    expect(b.logs).toEqual([
      'flowgate mcp stdio: notifications/initialized failed: upstream answered 401: invalid_token: bad token [redacted] — check the key in $FG_KEY: it is unknown, expired or revoked, or was copied incompletely',
    ]);
    expectNoSecret(...b.logs);
  });

  it('scrubs stderr of other keys, the secret half of a key, JWTs and credentials in URLs', async () => {
    const otherKey = `fgk_ZyXwVuTs98765432_${'o'.repeat(43)}`;
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
    up.handle((_req, res) =>
      sendJson(res, 500, {
        code: 'boom',
        message: `proxy saw ${otherKey}, half ${KEY_SECRET}, jwt ${jwt}, https://u:pw@h.test/?token=abcdef`,
      }),
    );
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await b.end();
    expect(b.logs).toHaveLength(1);
    const [log] = b.logs as [string];
    for (const leaked of [
      otherKey,
      'o'.repeat(20),
      KEY_SECRET,
      jwt,
      'eyJzdWIiOiJhZG1pbiJ9',
      ':pw@',
      'abcdef',
    ])
      expect(log).not.toContain(leaked);
    expect(log).toContain(
      'boom: proxy saw [redacted], half [redacted], jwt [redacted], https://[redacted]@h.test/?token=[redacted]',
    );
  });

  it('bounds a diagnostic built from a huge method name before redacting it', async () => {
    up.handle((_req, res) => sendJson(res, 500, { code: 'boom', message: 'down' }));
    const b = bridgeFor();
    // "a." repeated is the slow case of the URL pattern: redacting it whole would take minutes.
    b.send({ jsonrpc: '2.0', method: 'a.'.repeat(300_000) });
    const start = performance.now();
    await b.end();
    expect(performance.now() - start).toBeLessThan(3000);
    expect(b.logs).toHaveLength(1);
    expect(b.logs[0]?.length).toBeLessThanOrEqual(2001);
    expect(b.logs[0]?.endsWith('…')).toBe(true);
  });

  it('an SSE stream that ends without the response still answers the request', async () => {
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n');
    });
    const b = bridgeFor();
    b.send({ jsonrpc: '2.0', id: 9, method: 'tools/call' });
    await b.end();
    expect(b.parsed()).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: {} },
      {
        jsonrpc: '2.0',
        id: 9,
        error: {
          code: BRIDGE_ERRORS.upstream,
          message: 'upstream ended its answer without a response to this request',
        },
      },
    ]);
  });

  it('writes each event of a stream as it arrives, and times out on silence, not on the stream as a whole', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    up.handle(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // One event split across writes (CRLF included), then a pause the client must see it through.
      res.write('data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",');
      res.write('"params":{}}\r');
      res.write('\n\r\n');
      await held;
      // Keep-alives longer apart in total than the timeout, each gap shorter than it.
      for (let i = 0; i < 4; i++) {
        res.write(': keep-alive\n\n');
        await new Promise((r) => setTimeout(r, 150));
      }
      res.end('data: {"jsonrpc":"2.0","id":"l1","result":{}}\n\n');
    });
    const b = bridgeFor({ timeoutMs: 400 });
    b.send({ jsonrpc: '2.0', id: 'l1', method: 'subscriptions/listen', params: { notifications: {} } });
    // Written while the stream is still open.
    await b.waitFor(1);
    expect(b.parsed()).toEqual([
      { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: {} },
    ]);
    release();
    await b.end();
    expect(b.parsed()).toEqual([
      { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: {} },
      { jsonrpc: '2.0', id: 'l1', result: {} },
    ]);
  });

  it('a stream that goes silent past the timeout answers the request once, after what it already wrote', async () => {
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n');
    });
    const b = bridgeFor({ timeoutMs: 300 });
    b.send({ jsonrpc: '2.0', id: 4, method: 'tools/call' });
    await b.end();
    const [first, second, ...rest] = b.parsed();
    expect(first).toEqual({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } });
    expect(second?.id).toBe(4);
    expect(second?.error?.code).toBe(BRIDGE_ERRORS.timeout);
    expect(rest).toEqual([]);
  });
});
