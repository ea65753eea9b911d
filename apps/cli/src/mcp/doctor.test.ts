import { describe, expect, it } from 'vitest';
import { runDoctor } from './doctor.js';
import { NO_FLAGS } from './narrowing-flags.js';

const KEY = `fgk_AbCdEfGh12345678_${'q'.repeat(43)}`;

describe('mcp doctor: plain http:// only to this machine', () => {
  const input = (apiUrl: string, allowInsecureHttp?: boolean) => ({
    apiUrl,
    workspaceId: 'ws-acme',
    tokenEnvVar: 'FG_KEY',
    env: { FG_KEY: KEY },
    narrowing: NO_FLAGS,
    timeoutMs: 1000,
    fetch: (async () => {
      throw new Error('no network in this test');
    }) as typeof fetch,
    ...(allowInsecureHttp === undefined ? {} : { allowInsecureHttp }),
  });

  it('fails at the config stage, before any request, for http:// to another host', async () => {
    const report = await runDoctor(input('http://gateway.example.com:8787'));
    expect(report.ok).toBe(false);
    expect(report.failure).toEqual({
      stage: 'config',
      httpStatus: null,
      code: null,
      message:
        'refusing to send the bearer token over plain http:// to gateway.example.com:8787, which is not this machine: use an https:// --api-url, or pass --allow-insecure-http if the network to it is trusted',
      hint: 'point --api-url at the https:// address of the gateway',
    });
  });

  it('goes on to connect with --allow-insecure-http (and for loopback)', async () => {
    for (const report of [
      await runDoctor(input('http://gateway.example.com:8787', true)),
      await runDoctor(input('http://127.0.0.1:9')),
    ]) {
      expect(report.failure?.stage).toBe('connect');
    }
  });
});
