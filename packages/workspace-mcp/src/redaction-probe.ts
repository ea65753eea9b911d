import type * as Secrets from '@flowgate/secrets';

/**
 * For tests: wraps `@flowgate/secrets` so every redaction call records the longest text it was given — hostile input
 * must reach redaction only as a bounded preview (redaction is not linear on hostile text). Used from a `vi.mock`
 * factory, which is why it takes the real module instead of importing it.
 */
export function probeRedaction(real: typeof Secrets, probe: { longest: number }): typeof Secrets {
  const longestString = (value: unknown): number =>
    typeof value === 'string'
      ? value.length
      : value !== null && typeof value === 'object'
        ? Object.values(value).reduce((max: number, v) => Math.max(max, longestString(v)), 0)
        : 0;
  const seen = (value: unknown) => {
    probe.longest = Math.max(probe.longest, longestString(value));
  };
  return {
    ...real,
    redact: <T>(value: T, options?: Parameters<typeof real.redact>[1]): T => {
      seen(value);
      return real.redact(value, options);
    },
    redactString: (...args: Parameters<typeof real.redactString>) => {
      seen(args[0]);
      return real.redactString(...args);
    },
  };
}
