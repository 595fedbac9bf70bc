import type { Logger } from 'pino';
import { startProcessWatchdog, type ProcessWatchdog } from './process/parent-watch';

export interface ShutdownStep {
  name: string;
  run: () => Promise<void> | void;
}

export interface ShutdownOptions {
  logger: Logger;
  /** Steps run in order on SIGTERM/SIGINT (stop accepting → drain → flush → close clients). */
  steps: readonly ShutdownStep[];
  /** Hard limit for the whole drain; default 25 s (inside Kubernetes' default 30 s grace). */
  timeoutMs?: number;
  /** Called with the exit code; default process.exit. */
  exit?: (code: number) => void;
  /**
   * Start the watchdog thread (parent-watch): drain when the launcher that spawned us is gone, and
   * SIGKILL this process if a drain outlives `timeoutMs` even while the event loop is blocked.
   * Default: true unless `exit` is replaced (a test must not have its runner killed).
   */
  watchdog?: boolean;
}

/**
 * Installs SIGTERM/SIGINT handlers that drain the service once. A second signal while draining
 * forces exit, so Ctrl-C twice always gets the terminal back. Returns the drain function for tests.
 */
export function installShutdown(options: ShutdownOptions): () => Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const timeoutMs = options.timeoutMs ?? 25_000;
  let draining: Promise<void> | undefined;
  let watchdog: ProcessWatchdog | undefined;
  const drain = () =>
    (draining ??= (async () => {
      // The timer below needs a free event loop; the watchdog's deadline does not.
      watchdog?.killAfter(timeoutMs + 2_000);
      const timer = setTimeout(() => {
        options.logger.error('shutdown timed out, exiting');
        exit(1);
      }, timeoutMs);
      timer.unref();
      let code = 0;
      const started = Date.now();
      // How long each step took, in the last line: where a slow drain spent its time.
      const stepsMs: Record<string, number> = {};
      for (const step of options.steps) {
        const stepStarted = Date.now();
        try {
          await step.run();
          options.logger.debug({ step: step.name }, 'shutdown step done');
        } catch (err) {
          code = 1;
          options.logger.error({ err, step: step.name }, 'shutdown step failed');
        }
        stepsMs[step.name] = Date.now() - stepStarted;
      }
      clearTimeout(timer);
      options.logger.info({ drainMs: Date.now() - started, stepsMs }, 'stopped');
      exit(code);
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    if (draining) {
      options.logger.warn({ signal }, 'second signal while draining, exiting now');
      exit(1);
      return;
    }
    options.logger.info({ signal }, 'draining');
    void drain();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  if (options.watchdog ?? options.exit === undefined) {
    watchdog = startProcessWatchdog({
      orphanGraceMs: timeoutMs + 2_000,
      onOrphaned: () => {
        options.logger.warn('the process that started this service is gone, draining');
        void drain();
      },
    });
  }
  return drain;
}

/**
 * Resolves with `promise`'s value, or with `'timeout'` after `ms` (the promise keeps running).
 * Shutdown steps use it so an unreachable dependency cannot stall a drain.
 */
export async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Lame duck: resolves once nothing new has arrived for `quietMs` (by `lastArrival`, a `Date.now()`
 * timestamp), or after `maxMs`. A service that is NOT_SERVING keeps taking calls meanwhile: callers
 * that route by health checks (the router polls the workers) send a few more until their next
 * check, and those must not fail. An idle service passes at once.
 */
export async function untilQuiet(options: {
  lastArrival: () => number | undefined;
  quietMs: number;
  maxMs: number;
}): Promise<void> {
  const deadline = Date.now() + options.maxMs;
  for (;;) {
    const last = options.lastArrival();
    const quietFor = last === undefined ? Infinity : Date.now() - last;
    if (quietFor >= options.quietMs || Date.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, Math.min(options.quietMs - quietFor, deadline - Date.now())));
  }
}
