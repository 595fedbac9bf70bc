/**
 * A one-slot wake-up signal for a single waiting loop. A `notify()` that arrives while nobody
 * waits is remembered, so the loop cannot miss work that came between its check and its wait.
 */
export class Wakeup {
  private pending = false;
  private wake?: () => void;

  notify(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Resolves on the next (or a remembered) `notify()`, or after `ms` when given. */
  wait(ms?: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.pending = false;
        resolve();
      };
      this.wake = done;
      if (ms !== undefined) timer = setTimeout(done, Math.max(0, ms));
    });
  }
}

/** Raised when an operation did not settle in time; the operation itself may still finish later. */
export class TimeoutError extends Error {
  readonly code = 'timeout';
  constructor(what: string, ms: number) {
    super(`${what} timed out after ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** Races `promise` against a timer; the loser's rejection is swallowed. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  promise.catch(() => undefined);
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
