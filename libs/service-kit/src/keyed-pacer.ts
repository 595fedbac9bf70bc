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
   * own waits, else a promise that resolves when its turn and its credit come.
   */
  take(key: string, amount: number): Promise<void> | undefined {
    if (!this.enabled) return undefined;
    const bucket = this.bucket(key);
    if (bucket.waiting === 0 && bucket.credit > 0) {
      bucket.credit -= amount;
      return undefined;
    }
    bucket.waiting++;
    const turn = bucket.tail.then(() => this.spendWhenDue(bucket, amount));
    bucket.tail = turn.finally(() => void bucket.waiting--);
    return turn;
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

  private async spendWhenDue(bucket: Bucket, amount: number): Promise<void> {
    for (this.refill(bucket); bucket.credit <= 0; this.refill(bucket)) {
      const ms = Math.ceil((-bucket.credit / this.pace.perSecond) * 1_000) + 1;
      // Unref'd: a taker waiting for credit must not keep a stopping process alive.
      await new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
    }
    bucket.credit -= amount;
  }
}
