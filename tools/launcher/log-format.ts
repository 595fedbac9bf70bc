/** pino's numeric levels and the labels a developer scans for. */
const LEVELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** ANSI colours per level (only used on a TTY without NO_COLOR). */
const LEVEL_COLOURS: Readonly<Record<number, string>> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '35' };
/** Fields every line carries or that the prefix already shows. */
const HIDDEN_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'service', 'msg', 'err']);
/** Longest rendering of one extra field, so a dumped object cannot flood the terminal. */
const MAX_FIELD_CHARS = 200;

/** Options for {@link formatLogLine}. */
export interface LogFormatOptions {
  /** Use ANSI colours. */
  readonly colour: boolean;
  /** Width the service name is padded to; default 9 (`inference`). */
  readonly nameWidth?: number;
}

/**
 * Renders one line a service wrote for a terminal: `edge      | 12:00:01 INFO  ready grpcPort=50051`.
 * pino JSON becomes time, level, message and `key=value` extras (an `err` adds its stack); anything
 * else (a stack trace from a crash before the logger existed) is shown as is.
 */
export function formatLogLine(service: string, line: string, options: LogFormatOptions): string {
  const paint = (code: string, text: string) => (options.colour ? `\u001b[${code}m${text}\u001b[0m` : text);
  const prefix = `${paint('36', service.padEnd(options.nameWidth ?? 9))} | `;
  const record = parseRecord(line);
  if (!record) return prefix + line;
  const level = typeof record.level === 'number' ? record.level : 30;
  const label = paint(LEVEL_COLOURS[level] ?? '0', (LEVELS[level] ?? String(level)).padEnd(5));
  const time = typeof record.time === 'string' ? paint('90', record.time.slice(11, 19)) + ' ' : '';
  const extras = Object.entries(record)
    .filter(([key]) => !HIDDEN_FIELDS.has(key))
    .map(([key, value]) => `${key}=${renderValue(value)}`);
  const head = `${prefix}${time}${label} ${typeof record.msg === 'string' ? record.msg : ''}${extras.length ? ' ' + paint('90', extras.join(' ')) : ''}`;
  const stack = errorStack(record.err);
  return stack
    ? `${head}\n${stack
        .split('\n')
        .map((l) => `${prefix}  ${l}`)
        .join('\n')}`
    : head;
}

function parseRecord(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function renderValue(value: unknown): string {
  const text = typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : (JSON.stringify(value) ?? String(value));
  return text.length > MAX_FIELD_CHARS ? `${text.slice(0, MAX_FIELD_CHARS)}…` : text;
}

function errorStack(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const { stack, message } = err as { stack?: unknown; message?: unknown };
  if (typeof stack === 'string') return stack;
  return typeof message === 'string' ? message : undefined;
}
