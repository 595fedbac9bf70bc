/** When the launcher restarts a crashed service, and when it gives up. */
export interface RestartPolicyOptions {
  /** Restarts allowed within `windowMs`; one more crash stops the stack. Default 5. */
  readonly maxRestarts?: number;
  /** The sliding window the crashes are counted in; default 60 000 ms. */
  readonly windowMs?: number;
  /** Delay before the first restart, doubled for each crash in the window; default 500 ms. */
  readonly initialBackoffMs?: number;
  /** The longest delay; default 10 000 ms. */
  readonly maxBackoffMs?: number;
}

/** What to do about one crash. */
export type RestartDecision =
  | { readonly restart: true; readonly delayMs: number; readonly attempt: number }
  | { readonly restart: false; readonly crashes: number };

/**
 * Exponential backoff with a crash budget per sliding window, like a process supervisor's
 * "start limit": a service that crashes now and then comes back; one in a crash loop ends the stack
 * with its last words instead of spinning the CPU.
 */
export class RestartPolicy {
  private readonly maxRestarts: number;
  private readonly windowMs: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly crashes: number[] = [];

  constructor(options: RestartPolicyOptions = {}) {
    this.maxRestarts = options.maxRestarts ?? 5;
    this.windowMs = options.windowMs ?? 60_000;
    this.initialBackoffMs = options.initialBackoffMs ?? 500;
    this.maxBackoffMs = options.maxBackoffMs ?? 10_000;
    for (const [name, v] of Object.entries({
      maxRestarts: this.maxRestarts,
      windowMs: this.windowMs,
      initialBackoffMs: this.initialBackoffMs,
      maxBackoffMs: this.maxBackoffMs,
    })) {
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`restart.${name} must be a non-negative number, got ${v}`);
    }
  }

  /** Records a crash at `now` and decides. */
  onCrash(now: number): RestartDecision {
    this.crashes.push(now);
    while (this.crashes.length > 0 && this.crashes[0] <= now - this.windowMs) this.crashes.shift();
    const attempt = this.crashes.length;
    if (attempt > this.maxRestarts) return { restart: false, crashes: attempt };
    return { restart: true, attempt, delayMs: Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** (attempt - 1)) };
  }
}
