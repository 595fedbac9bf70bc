import { formatTail } from '@fastloop/service-kit';
import type { InstanceName } from './service-specs';

/** Stable codes of {@link StackStartError}. */
export type StackStartErrorCode =
  /** A service's entry file does not exist. */
  | 'entry_missing'
  /** The public port is taken by another process. */
  | 'port_in_use'
  /** A service process exited before the stack was ready. */
  | 'service_exited'
  /**
   * A service exited because an internal port the launcher picked was taken before it bound it
   * (EADDRINUSE); startStack starts again on new ports, and reports this only after its last try.
   */
  | 'address_in_use'
  /** A service did not answer 200 on /readyz before the deadline. */
  | 'ready_timeout'
  /** The caller's AbortSignal fired during start. */
  | 'aborted';

/**
 * Why startStack gave up. Everything it had started is already stopped when this is thrown.
 * `message` ends with the failing service's last log lines, so a test failure explains itself.
 */
export class StackStartError extends Error {
  readonly code: StackStartErrorCode;
  /** The service that failed, when one did. */
  readonly service?: InstanceName;
  /** The failing service's last log lines, formatted (also part of `message`); empty when there is none. */
  readonly logTail: string;
  /** The same lines as written (pino JSON), oldest first. */
  readonly logLines: readonly string[];
  /** The failing service's log file. */
  readonly logFile?: string;

  constructor(
    code: StackStartErrorCode,
    message: string,
    details: { service?: InstanceName; logLines?: readonly string[]; logFile?: string; cause?: unknown } = {},
  ) {
    const logLines = details.logLines ?? [];
    const logTail = details.service && details.logLines ? formatTail(details.service, logLines, details.logFile) : '';
    super(
      logTail ? `${message}\n${logTail}` : message,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.name = 'StackStartError';
    this.code = code;
    this.service = details.service;
    this.logTail = logTail;
    this.logLines = logLines;
    this.logFile = details.logFile;
  }
}
