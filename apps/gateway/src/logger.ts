import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * The gateway's logger on every runtime: Node, Bun and Deno load pino's Node build (JSON lines on stdout, or on
 * `destination` — tests pass one to read every line); a Workers bundle resolves pino's browser build, whose `write`
 * here prints the same JSON line through the console. Redaction applies in both.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'flowgate' },
    // Belt and braces: these paths never reach a log line even if a caller passes them.
    redact: {
      paths: ['token', 'apiKey', 'authorization', 'headers.authorization', 'secret', '*.secret'],
      censor: '[redacted]',
    },
    browser: { write: (line) => console.log(JSON.stringify(line)) },
  };
  return destination ? pino(options, destination) : pino(options);
}
