import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths redacted from every log line: credentials, and prompt/tool text unless explicitly allowed. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'apiKey',
  'api_key',
  '*.apiKey',
  'password',
  'input',
  '*.input',
  'instructions',
  '*.instructions',
  'text',
  'prompt',
];

export interface LoggerOptions {
  /** Service name, added to every line as `service`. */
  service: string;
  /** pino level; default `info`. */
  level?: string;
  /** Destination stream; default stdout, written synchronously (see {@link createLogger}). Tests pass a sink. */
  destination?: pino.DestinationStream;
}

/**
 * One root logger per process; derive child loggers with `connectionId`, `responseId`, `jobId`.
 *
 * stdout is written synchronously. pino's default asynchronous stdout flushes on exit with
 * sonic-boom's flushSync, which retries a write that fails with anything but EAGAIN forever: once
 * the reader of our stdout is gone (a launcher killed with SIGKILL), every service spun on EPIPE at
 * exit until its watchdog killed it 27 s later. A synchronous write fails once, pino stops logging
 * (its EPIPE filter), and the process exits. The cost is one write(2) per line, which blocks only
 * while the reader does not read (a pipe full of unread logs), as it should: logs are bounded.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service, pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
