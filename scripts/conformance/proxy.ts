import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AuthProxyOptions {
  /** The gateway's MCP URL, e.g. http://127.0.0.1:8787/api/workspaces/ws-x/mcp (or set later with `retarget`). */
  target?: string;
  /** Bearer token added to every forwarded request. */
  token?: string;
  /** Path the proxy serves the MCP endpoint on (default `/mcp`). */
  path?: string;
  host?: string;
  port?: number;
}

export interface AuthProxy {
  server: Server;
  /** The proxy's MCP URL, e.g. http://127.0.0.1:41234/mcp */
  url: string;
  /** Points the proxy at a gateway; until then requests get 503 (lets the proxy's URL be known first). */
  retarget(target: string, token: string): void;
  close(): Promise<void>;
}

/**
 * A loopback-only forwarder for test clients that cannot send headers (the conformance suite): it adds
 * `Authorization` and changes nothing else — method, Host, Origin, every other header, body, status and
 * response headers pass through, so the gateway's own checks (Origin, Accept, Content-Type…) are what a
 * test exercises.
 */
export function startAuthProxy(options: AuthProxyOptions): Promise<AuthProxy> {
  let upstreamTarget = options.target !== undefined ? new URL(options.target) : undefined;
  let bearer = options.token ?? '';
  const servedPath = options.path ?? '/mcp';
  const server = createServer((req, res) => {
    const target = upstreamTarget;
    if (!target) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'unavailable', message: 'proxy has no gateway yet' }));
      return;
    }
    const incoming = req.url ?? '/';
    // The served path maps onto the target path; anything else goes to the same path on the gateway.
    const path =
      incoming === servedPath ||
      incoming.startsWith(`${servedPath}?`) ||
      incoming.startsWith(`${servedPath}/`)
        ? `${target.pathname}${incoming.slice(servedPath.length)}`
        : incoming;
    const headers: IncomingHttpHeaders = { ...req.headers, authorization: `Bearer ${bearer}` };
    const upstream = request(
      { hostname: target.hostname, port: target.port, method: req.method, path, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.statusMessage, up.rawHeaders);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            code: 'bad_gateway',
            message: `proxy could not reach the gateway: ${err.message}`,
          }),
        );
      } else {
        res.destroy(err);
      }
    });
    req.pipe(upstream);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      const host = options.host ?? '127.0.0.1';
      resolve({
        server,
        url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${servedPath}`,
        retarget(t, token) {
          upstreamTarget = new URL(t);
          bearer = token;
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
