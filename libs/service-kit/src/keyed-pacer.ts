/** How much of a resource a key may spend per second, and in one burst (0 per second: no pacing). */
export interface Pace {
  perSecond: number;
  burst: number;
}

interface Bucket {
  /** What the key may still spend; negative after spending more than was left (a debt). */
  credit: number;
  /** When `credit` was last brought up to date (ms, the clock's). */
  at: number;
  /** The key's takers waiting for credit, in arrival order. */
  waiting: number;
  tail: Promise<void>;
}

/** How long a taker may wait for its credit. */
export interface TakeOptions {
  /** Give up after this many ms: the promise rejects with `onTimeout()`. */
  timeoutMs?: number;
  onTimeout?: () => unknown;
  /** Give up when aborted: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** A waiting taker; one that gave up is skipped and charged nothing. */
interface Ticket {
  gaveUp: boolean;
  /** Whether it still counts in its bucket's `waiting` (it leaves once: when served or when it gives up). */
  counted: boolean;
  /** Its sleep for credit, while it is in one: the timer, and how to end the sleep early. */
  sleep?: { timer: NodeJS.Timeout; wake: () => void };
}

/**
 * A token bucket per key (a tenant): spends of a resource are paced to a rate, with a burst. A taker
 * waits (it is not refused) until its key has credit, in arrival order per key; spending more than
 * the credit left goes into debt, so any amount gets through and the key's next taker waits longer.
 * Work whose cost is known only after it ran (CPU time) is charged with `spend` and waits with
 * `take(key, 0)`. Keys are tenants of the configured API keys, so the map of buckets is bounded.
 *
 * The edge paces each tenant's large request bodies in bytes (EDGE_TENANT_LARGE_BYTES_PER_SECOND),
 * and safety each tenant's scanning in CPU milliseconds (SAFETY_TENANT_CPU_MS_PER_SECOND): two
 * cores are shared by every tenant, and a rate bounds what one tenant's work costs the others,
 * however fairly each stage takes turns (issue 17).
 */
export class KeyedPacer {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly pace: Pace,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether spends are paced at all. */
  get enabled(): boolean {
    return this.pace.perSecond > 0;
  }

  /**
   * Spends `amount` of `key`'s credit: at once (undefined) while it has credit and nothing of its
   * own waits, else a promise that resolves when its turn and its credit come. A taker that gives up
   * (`options`: a timeout, an abort) rejects at once, leaves its place and is charged nothing, so a
   * wait for credit counts inside the caller's own deadline.
   */
  take(key: string, amount: number, options: TakeOptions = {}): Promise<void> | undefined {
    if (!this.enabled) return undefined;
    const bucket = this.bucket(key);
    if (bucket.waiting === 0 && bucket.credit > 0) {
      bucket.credit -= amount;
      return undefined;
    }
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    const ticket: Ticket = { gaveUp: false, counted: true };
    bucket.waiting++;
    const turn = bucket.tail.then(() => this.spendWhenDue(bucket, amount, ticket));
    bucket.tail = turn.finally(() => this.leave(bucket, ticket));
    if (options.timeoutMs === undefined && !options.signal) return turn;
    return this.within(turn, options, () => this.giveUp(bucket, ticket));
  }

  /** Charges `amount` to `key` now, whatever its credit (work already done). */
  spend(key: string, amount: number): void {
    if (this.enabled) this.bucket(key).credit -= amount;
  }

  /** `key`'s takers waiting for credit. */
  waitingFor(key: string): number {
    return this.buckets.get(key)?.waiting ?? 0;
  }

  /** Takers waiting for credit, over every key (for tests and metrics). */
  get waiting(): number {
    let n = 0;
    for (const bucket of this.buckets.values()) n += bucket.waiting;
    return n;
  }

  private bucket(key: string): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { credit: this.pace.burst, at: this.now(), waiting: 0, tail: Promise.resolve() };
      this.buckets.set(key, bucket);
    }
    this.refill(bucket);
    return bucket;
  }

  private refill(bucket: Bucket): void {
    const now = this.now();
    const earned = ((now - bucket.at) / 1_000) * this.pace.perSecond;
    bucket.credit = Math.min(this.pace.burst, bucket.credit + earned);
    bucket.at = now;
  }

  private async spendWhenDue(bucket: Bucket, amount: number, ticket: Ticket): Promise<void> {
    for (this.refill(bucket); bucket.credit <= 0 && !ticket.gaveUp; this.refill(bucket)) {
      const ms = Math.ceil((-bucket.credit / this.pace.perSecond) * 1_000) + 1;
      await new Promise<void>((wake) => {
        // Unref'd: a taker waiting for credit must not keep a stopping process alive.
        ticket.sleep = { timer: setTimeout(wake, ms).unref(), wake };
      });
      ticket.sleep = undefined;
    }
    if (!ticket.gaveUp) bucket.credit -= amount;
  }

  /** Takes `ticket` out of its bucket's count, once. */
  private leave(bucket: Bucket, ticket: Ticket): void {
    if (!ticket.counted) return;
    ticket.counted = false;
    bucket.waiting--;
  }

  /**
   * A taker gives up: it leaves the count at once (not when its place in line comes), and a sleep
   * of its own ends now, so its timer goes and the next taker in line starts its own wait.
   */
  private giveUp(bucket: Bucket, ticket: Ticket): void {
    ticket.gaveUp = true;
    this.leave(bucket, ticket);
    if (!ticket.sleep) return;
    clearTimeout(ticket.sleep.timer);
    ticket.sleep.wake();
  }

  /** `turn`, or a rejection (after `onGiveUp`) when the taker's time runs out or it is aborted first. */
  private within(turn: Promise<void>, options: TakeOptions, onGiveUp: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (done: () => void): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        done();
      };
      const giveUp = (reason: unknown): void => {
        onGiveUp();
        settle(() => reject(reason));
      };
      const onAbort = (): void => giveUp(options.signal?.reason);
      if (options.timeoutMs !== undefined)
        timer = setTimeout(
          () => giveUp(options.onTimeout?.() ?? new Error(`no credit within ${options.timeoutMs} ms`)),
          Math.max(0, options.timeoutMs),
        ).unref();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      turn.then(
        () => settle(resolve),
        (err: unknown) => settle(() => reject(err)),
      );
    });
  }
}
