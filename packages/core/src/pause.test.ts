import { describe, expect, it } from 'vitest';
import { pause } from './pause.js';

describe('pause', () => {
  it('waits its time, ends early on an abort or a settled promise, and at once when already aborted', async () => {
    let t = performance.now();
    await pause(30);
    expect(performance.now() - t).toBeGreaterThanOrEqual(25);

    const controller = new AbortController();
    t = performance.now();
    setTimeout(() => controller.abort(), 10);
    await pause(5_000, { signals: [undefined, controller.signal] });
    expect(performance.now() - t).toBeLessThan(1_000);

    t = performance.now();
    await pause(5_000, { signals: [controller.signal] });
    expect(performance.now() - t).toBeLessThan(50);

    t = performance.now();
    await pause(5_000, { until: new Promise((r) => setTimeout(r, 10)) });
    expect(performance.now() - t).toBeLessThan(1_000);
  });
});
