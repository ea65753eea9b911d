/**
 * The stdio ↔ Streamable HTTP bridge behind `flowgate mcp stdio`. Each input line is one JSON-RPC message (or
 * batch) posted as is; every answer is written back as exactly one line. Requests run concurrently up to a
 * bound, and reading pauses at the bound, so a flood of input cannot pile up unbounded work.
 */
import { modernRequestHeaders } from '@flowgate/workspace-mcp';
import { scrub, scrubDiagnostic } from './credentials.js';
import { type LineEvent, LineSplitter } from './lines.js';
import {
  decodeMessages,
  describeHttpFailure,
  postMcp,
  type UpstreamAnswer,
  UpstreamFailure,
  type UpstreamTarget,
} from './upstream.js';

/**
 * The gateway's default body limit: a longer line could only come back as 413, so it is refused here without
 * being buffered or sent. Fixed, not a flag: raising it would only move the refusal upstream.
 */
export const MAX_LINE_BYTES = 1024 * 1024;
export const MAX_IN_FLIGHT = 16;

/** JSON-RPC codes the bridge itself produces. -32000…-32099 are implementation-defined server errors. */
export const BRIDGE_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  /** The upstream answered with an HTTP error or something that is not JSON-RPC, or could not be reached. */
  upstream: -32000,
  /** No answer within --timeout (the SDKs use -32001 for request timeouts too). */
  timeout: -32001,
} as const;

export interface BridgeIo {
  input: AsyncIterable<Uint8Array | string>;
  /** Receives one complete JSON-RPC line (without the newline) per call. */
  writeLine(line: string): void;
  /** Diagnostics for stderr; the bridge scrubs them of the key and anything token-shaped first. */
  log(text: string): void;
}

export interface BridgeOptions {
  maxLineBytes?: number;
  maxInFlight?: number;
}

type JsonRpcId = string | number;
type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || typeof value === 'number';
}

/** Ids the client is waiting on: requests (method + id), alone or in a batch. */
function requestIds(message: unknown): JsonRpcId[] {
  const items = Array.isArray(message) ? message : [message];
  return items
    .filter((m): m is Json => isObject(m) && typeof m.method === 'string' && isId(m.id))
    .map((m) => m.id as JsonRpcId);
}

function describeBytes(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / 1024 / 1024} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

function looksLikeJsonRpc(message: unknown): boolean {
  if (Array.isArray(message)) return message.length > 0 && message.every(looksLikeJsonRpc);
  return (
    isObject(message) && ('result' in message || 'error' in message || typeof message.method === 'string')
  );
}

/** Printable ASCII only, bounded: the client's name goes into a header. */
function userAgentFrom(params: unknown): string | undefined {
  const info = isObject(params) && isObject(params.clientInfo) ? params.clientInfo : null;
  if (!info || typeof info.name !== 'string') return undefined;
  const version = typeof info.version === 'string' ? `/${info.version}` : '';
  const ua = `${info.name}${version}`.replace(/[^\x20-\x7e]/g, '').slice(0, 80);
  return ua ? `${ua} flowgate-mcp-stdio` : undefined;
}

export class StdioBridge {
  private protocolVersion: string | null = null;
  private userAgent: string | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxLineBytes: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly target: UpstreamTarget,
    private readonly io: BridgeIo,
    options: BridgeOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
    this.maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
    this.userAgent = target.userAgent;
  }

  /** Runs until the input ends and every request in flight has been answered. */
  async run(): Promise<void> {
    const splitter = new LineSplitter(this.maxLineBytes);
    for await (const chunk of this.io.input) {
      for (const event of splitter.push(chunk)) await this.dispatch(event);
    }
    for (const event of splitter.end()) await this.dispatch(event);
    await Promise.all(this.inFlight);
  }

  private async dispatch(event: LineEvent): Promise<void> {
    while (this.inFlight.size >= this.maxInFlight) await Promise.race(this.inFlight);
    const task = (
      event.type === 'line'
        ? this.handleLine(event.text)
        : Promise.resolve(
            this.writeError(
              event.id,
              BRIDGE_ERRORS.invalidRequest,
              `Invalid Request: the line exceeds ${describeBytes(this.maxLineBytes)} and was dropped`,
            ),
          )
    ).catch((error: unknown) => {
      // Defensive: handleLine maps every expected failure itself.
      this.log(`flowgate mcp stdio: internal error: ${error instanceof Error ? error.message : 'unknown'}`);
    });
    const tracked = task.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async handleLine(text: string): Promise<void> {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.writeError(null, BRIDGE_ERRORS.parse, 'Parse error: the input line is not valid JSON');
      return;
    }
    if (!isObject(message) && !(Array.isArray(message) && message.length > 0)) {
      this.writeError(
        null,
        BRIDGE_ERRORS.invalidRequest,
        'Invalid Request: expected a JSON-RPC object or batch',
      );
      return;
    }
    const ids = requestIds(message);
    const single = isObject(message) ? message : null;
    const isInitialize = single?.method === 'initialize';
    if (isInitialize) this.userAgent = userAgentFrom(single?.params) ?? this.userAgent;
    const method = typeof single?.method === 'string' ? single.method : 'batch';

    // A 2026-07-28 request names its version in _meta and must repeat it, its method and name in headers.
    const modern = modernRequestHeaders(single);
    // An event stream (progress before a result, a subscriptions/listen stream) is written out event by event as it
    // arrives, so the client sees each notification when the server sends it, not when the stream ends.
    const answered = new Set<JsonRpcId>();
    let notRpc = false;
    const onEvent = (message: unknown) => {
      if (notRpc || !looksLikeJsonRpc(message)) {
        notRpc = true;
        return;
      }
      this.forwardOne(message, ids, answered, isInitialize);
    };
    let answer: UpstreamAnswer;
    try {
      // initialize negotiates the version, so it carries none; everything after carries the negotiated one.
      answer = await postMcp(
        { ...this.target, ...(this.userAgent ? { userAgent: this.userAgent } : {}) },
        text,
        isInitialize || modern ? null : this.protocolVersion,
        modern ?? {},
        onEvent,
      );
    } catch (error) {
      const failure =
        error instanceof UpstreamFailure ? error : new UpstreamFailure('network', 'request failed');
      const code = failure.kind === 'timeout' ? BRIDGE_ERRORS.timeout : BRIDGE_ERRORS.upstream;
      this.fail(
        ids.filter((id) => !answered.has(id)),
        method,
        code,
        failure.message,
        { reason: failure.kind },
      );
      return;
    }

    if (answer.streamed) {
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length === 0) return;
      if (answer.streamed.invalid || notRpc) {
        this.fail(missing, method, BRIDGE_ERRORS.upstream, 'upstream sent an event that is not JSON-RPC', {
          httpStatus: answer.status,
        });
      } else {
        this.fail(
          missing,
          method,
          BRIDGE_ERRORS.upstream,
          'upstream ended its answer without a response to this request',
          {},
        );
      }
      return;
    }

    const messages = decodeMessages(answer);
    if (messages && messages.length > 0 && messages.every(looksLikeJsonRpc)) {
      this.forward(messages, ids, method, isInitialize);
      return;
    }
    if (answer.status >= 200 && answer.status < 300) {
      if (ids.length === 0) return; // a notification or a client response: 202, nothing to print
      const what =
        messages === null
          ? answer.contentType || 'an untyped body'
          : messages.length === 0
            ? 'an empty body'
            : 'JSON that is not JSON-RPC';
      this.fail(
        ids,
        method,
        BRIDGE_ERRORS.upstream,
        `upstream answered ${answer.status} with ${what} instead of a JSON-RPC response`,
        {
          httpStatus: answer.status,
        },
      );
      return;
    }
    const failure = describeHttpFailure(answer, this.target);
    this.fail(ids, method, BRIDGE_ERRORS.upstream, failure.message, {
      httpStatus: failure.status,
      ...(failure.upstreamCode ? { upstreamCode: failure.upstreamCode } : {}),
    });
  }

  private forward(messages: unknown[], ids: JsonRpcId[], method: string, isInitialize: boolean): void {
    const answered = new Set<JsonRpcId>();
    for (const raw of messages) this.forwardOne(raw, ids, answered, isInitialize);
    const missing = ids.filter((id) => !answered.has(id));
    if (missing.length) {
      this.fail(
        missing,
        method,
        BRIDGE_ERRORS.upstream,
        'upstream ended its answer without a response to this request',
        {},
      );
    }
  }

  /** Writes one message of an answer, noting which of the request's ids it answers. */
  private forwardOne(raw: unknown, ids: JsonRpcId[], answered: Set<JsonRpcId>, isInitialize: boolean): void {
    let out = raw;
    // An error the server could not attribute (id null) answers the one request we sent.
    if (isObject(out) && out.id === null && 'error' in out && ids.length === 1 && ids[0] !== undefined) {
      out = { ...out, id: ids[0] };
    }
    for (const item of Array.isArray(out) ? out : [out]) {
      if (isObject(item) && isId(item.id) && ('result' in item || 'error' in item)) answered.add(item.id);
    }
    if (
      isInitialize &&
      isObject(out) &&
      isObject(out.result) &&
      typeof out.result.protocolVersion === 'string'
    ) {
      this.protocolVersion = out.result.protocolVersion;
    }
    this.writeMessage(out);
  }

  private fail(ids: JsonRpcId[], method: string, code: number, message: string, data: Json): void {
    if (ids.length === 0) {
      this.log(`flowgate mcp stdio: ${method} failed: ${message}`);
      return;
    }
    for (const id of ids) this.writeError(id, code, message, data);
  }

  private log(text: string): void {
    this.io.log(scrubDiagnostic(text, this.target.token));
  }

  private writeError(id: JsonRpcId | null, code: number, message: string, data?: Json): void {
    const error: Json = { code, message };
    if (data && Object.keys(data).length > 0) error.data = data;
    this.writeMessage({ jsonrpc: '2.0', id, error });
  }

  private writeMessage(message: unknown): void {
    // One stringify per message: never a partial or multi-line write, whatever the upstream's formatting.
    const line = JSON.stringify(message);
    this.io.writeLine(line.includes(this.target.token) ? scrub(line, this.target.token) : line);
  }
}
