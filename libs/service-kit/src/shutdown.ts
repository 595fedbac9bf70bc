import type { Logger } from 'pino';

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
}

/**
 * Installs SIGTERM/SIGINT handlers that drain the service once. A second signal while draining
 * forces exit, so Ctrl-C twice always gets the terminal back. Returns the drain function for tests.
 */
export function installShutdown(options: ShutdownOptions): () => Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let draining: Promise<void> | undefined;
  const drain = () =>
    (draining ??= (async () => {
      const timer = setTimeout(() => {
        options.logger.error('shutdown timed out, exiting');
        exit(1);
      }, options.timeoutMs ?? 25_000);
      timer.unref();
      let code = 0;
      for (const step of options.steps) {
        try {
          await step.run();
          options.logger.debug({ step: step.name }, 'shutdown step done');
        } catch (err) {
          code = 1;
          options.logger.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
      clearTimeout(timer);
      options.logger.info('stopped');
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
