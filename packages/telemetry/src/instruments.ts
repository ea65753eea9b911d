import type { Counter, Histogram, Meter, ObservableGauge } from '@opentelemetry/api';

export interface Instruments {
  httpDuration: Histogram;
  mcpDuration: Histogram;
  authFailures: Counter;
  blockedCalls: Counter;
  runsStarted: Counter;
  runsEnded: Counter;
  leaseTakeovers: Counter;
  queueDepth: ObservableGauge;
}

/** Names follow the HTTP and MCP semantic conventions where one exists; the rest are `flowgate.*`. */
export function createInstruments(meter: Meter): Instruments {
  return {
    httpDuration: meter.createHistogram('http.server.request.duration', {
      unit: 's',
      description: 'Duration of HTTP server requests.',
    }),
    mcpDuration: meter.createHistogram('mcp.server.operation.duration', {
      unit: 's',
      description: 'MCP request duration as observed on the server.',
    }),
    authFailures: meter.createCounter('flowgate.auth.failures', {
      description: 'Bearer tokens refused, by reason (error.type).',
    }),
    blockedCalls: meter.createCounter('flowgate.tool.blocked_calls', {
      description: 'Tool calls refused by policy or narrowing, by blocker.',
    }),
    runsStarted: meter.createCounter('flowgate.runs.started', { description: 'Runs queued.' }),
    runsEnded: meter.createCounter('flowgate.runs.ended', {
      description: 'Runs that ended, by final status (completed, failed, timed-out, cancelled).',
    }),
    leaseTakeovers: meter.createCounter('flowgate.runs.lease_takeovers', {
      description: 'Runs claimed after the lease of the worker running them expired.',
    }),
    queueDepth: meter.createObservableGauge('flowgate.runs.queue.depth', {
      description: 'Runs queued or due to wake, waiting for a worker.',
    }),
  };
}
