/**
 * Resolves after `ms`, or at once when any signal aborts or `until` settles; leaves no timer or listener behind.
 * Polling loops (run waits, progress, subscriptions) sleep with it between reads.
 */
export function pause(
  ms: number,
  options: { signals?: readonly (AbortSignal | undefined)[]; until?: Promise<unknown> } = {},
): Promise<void> {
  const signals = (options.signals ?? []).filter((s): s is AbortSignal => s !== undefined);
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve();
    const done = () => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const s of signals) s.addEventListener('abort', done, { once: true });
    options.until?.then(done, done);
  });
}
