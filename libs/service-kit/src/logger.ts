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
  /** Destination stream; default stdout. Tests pass a sink. */
  destination?: pino.DestinationStream;
}

/** One root logger per process; derive child loggers with `connectionId`, `responseId`, `jobId`. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service, pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}
