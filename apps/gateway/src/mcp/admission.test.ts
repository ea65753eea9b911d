import { describe, expect, it } from 'vitest';
import { busyBody, createAdmission, needsDatabase } from './admission.js';

describe('MCP admission control', () => {
  it('counts requests that reach the database, never list calls, the handshake or notifications', () => {
    const call = (method: string) => ({ jsonrpc: '2.0', id: 1, method });
    for (const method of ['tools/call', 'resources/read', 'tasks/get', 'tasks/result', 'completion/complete'])
      expect(needsDatabase(call(method))).toBe(true);
    for (const method of ['initialize', 'ping', 'tools/list', 'prompts/list', 'subscriptions/listen'])
      expect(needsDatabase(call(method))).toBe(false);
    expect(needsDatabase({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(false);
    expect(needsDatabase([call('ping'), call('tools/call')])).toBe(true);
    expect(needsDatabase([call('ping'), call('tools/list')])).toBe(false);
    expect(needsDatabase(null)).toBe(false);
    expect(needsDatabase('tools/call')).toBe(false);
  });

  it('admits up to the bound, refuses past it, and frees a slot once per release', () => {
    const admission = createAdmission(2);
    const a = admission.enter();
    const b = admission.enter();
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(admission.enter()).toBeNull();
    a?.();
    a?.();
    expect(admission.inFlight).toBe(1);
    const c = admission.enter();
    expect(c).not.toBeNull();
    expect(admission.enter()).toBeNull();
    b?.();
    c?.();
    expect(admission.inFlight).toBe(0);
  });

  it('answers busy in JSON-RPC shape with a stable code', () => {
    expect(JSON.parse(busyBody())).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message: 'The gateway is busy: too many requests in progress; retry after 1 s',
        data: { code: 'busy', retryAfterSeconds: 1 },
      },
    });
  });
});
