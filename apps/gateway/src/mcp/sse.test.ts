import { describe, expect, it } from 'vitest';
import { createSseAnswer } from './sse.js';

async function text(body: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(body).text();
}

describe('createSseAnswer', () => {
  it('writes each message as one event, the final response last, then ends', async () => {
    const sse = createSseAnswer();
    expect(sse.isOpen()).toBe(false);
    const stream = sse.open();
    expect(sse.open()).toBe(stream);
    expect(sse.isOpen()).toBe(true);
    await sse.opened;
    expect(stream.send('{"jsonrpc":"2.0","method":"notifications/progress"}')).toBe(true);
    sse.end('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect(stream.send('{"late":true}')).toBe(false);
    expect(await text(sse.body)).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n' +
        'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
    );
  });

  it('sends a comment when the stream has been quiet for the heartbeat interval', async () => {
    const sse = createSseAnswer({ heartbeatMs: 20 });
    sse.open();
    await new Promise((r) => setTimeout(r, 70));
    sse.end('{}');
    const body = await text(sse.body);
    expect(body.startsWith(': keep-alive\n\n')).toBe(true);
    expect(body.endsWith('event: message\ndata: {}\n\n')).toBe(true);
  });

  it('writes nothing once the client has gone', async () => {
    const client = new AbortController();
    const sse = createSseAnswer({ signal: client.signal });
    const stream = sse.open();
    client.abort();
    expect(stream.send('{}')).toBe(false);
    sse.end('{}');
  });
});
