/**
 * Helpers for this package's tests (not exported): evaluate an expression the validator accepts and print the
 * value in EDN notation, so tests compare exact results as text.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FlowModel, readEdn, validateFlow } from '@flowgate/flows';
import { type RunErrorJson, toRunError } from './errors.js';
import { BODY_ENV, Evaluator } from './evaluator.js';
import { DEFAULT_RUN_LIMITS, Meter, type RunLimits } from './limits.js';
import type { KvStore } from './steps/common.js';
import { fromJson, type JsonValue, printValue, type Value, VMap } from './values.js';

/** A validated model for `{:slug :t <extra> :flow <body>}`; throws with the diagnostics when it does not validate. */
export function modelOf(body: string, extra = ''): FlowModel {
  const result = validateFlow(`{:slug :t ${extra}\n :flow ${body}}`);
  if (!result.valid || !result.model) {
    throw new Error(
      `invalid flow: ${JSON.stringify(result.diagnostics.filter((d) => d.severity === 'error'))}`,
    );
  }
  return result.model;
}

interface EvalOptions {
  input?: unknown;
  limits?: Partial<RunLimits>;
  deadline?: number;
  /** Skip the validator (for trees it would refuse: the interpreter must still be safe on them). */
  raw?: boolean;
}

function meterFor(options: EvalOptions): Meter {
  return new Meter(
    { ...DEFAULT_RUN_LIMITS, ...options.limits },
    options.deadline ?? Number.POSITIVE_INFINITY,
    undefined,
  );
}

export function evalValue(text: string, options: EvalOptions = {}): Value {
  const meter = meterFor(options);
  let node: FlowModel['flow'];
  if (options.raw) {
    const read = readEdn(text);
    if (!read.ok) throw new Error(`unreadable: ${JSON.stringify(read.diagnostics)}`);
    node = read.value;
  } else node = modelOf(text).flow;
  const input = options.input === undefined ? VMap.EMPTY : fromJson(options.input, meter);
  return new Evaluator(meter, input).eval(node, BODY_ENV);
}

/** The value of an expression, printed as EDN (`{:a 1, :b [2 3]}`). */
export function ev(text: string, options: EvalOptions = {}): string {
  return printValue(evalValue(text, options), meterFor({}));
}

/** The error an expression fails with. */
export function evError(text: string, options: EvalOptions = {}): RunErrorJson {
  try {
    const value = evalValue(text, options);
    throw new Error(`expected an error, got ${printValue(value, meterFor({}))}`);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('expected an error')) throw error;
    return toRunError(error).toJSON();
  }
}

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

/** A real HTTP server on loopback; the handler sees the request body as text. */
export async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>,
): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      Promise.resolve(handler(req, res, body)).catch(() => {
        res.statusCode = 500;
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** An in-memory KvStore (values copied through JSON, as a real store would). */
export function memoryKv(): KvStore & { data: Map<string, { value: JsonValue; ttl?: number }> } {
  const data = new Map<string, { value: JsonValue; ttl?: number }>();
  return {
    data,
    get: async (key) => {
      const entry = data.get(key);
      return entry === undefined ? undefined : (JSON.parse(JSON.stringify(entry.value)) as JsonValue);
    },
    put: async (key, value, ttl) => {
      data.set(
        key,
        ttl === undefined
          ? { value: JSON.parse(JSON.stringify(value)) }
          : { value: JSON.parse(JSON.stringify(value)), ttl },
      );
    },
    delete: async (key) => {
      data.delete(key);
    },
  };
}
