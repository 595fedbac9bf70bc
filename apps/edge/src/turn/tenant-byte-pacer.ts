/** Bytes a tenant may send in large bodies per second, and in one burst (0 bytes per second: no pacing). */
export interface BytePace {
  bytesPerSecond: number;
  burstBytes: number;
}

interface Bucket {
  /** Bytes the tenant may still start; negative after a body larger than what was left (a debt). */
  credit: number;
  /** When `credit` was last brought up to date (ms, the clock's). */
  at: number;
  /** The tenant's bodies waiting for credit, in arrival order. */
  waiting: number;
  tail: Promise<void>;
}

/**
 * Paces each tenant's large request bodies to a byte rate, a token bucket per tenant (issue 17).
 * A large body costs CPU in proportion to its bytes in every stage after it (parse, validation,
 * tokenizing on the render threads, the safety scan), and two cores are shared by every tenant:
 * without a pace, one tenant's stream of megabyte bodies takes most of them, however fairly each
 * stage takes turns. A body waits (it is not refused) until its tenant has credit; a body larger
 * than the credit left goes into debt, so any size gets through and the next one waits longer.
 * The rate bounds what one tenant's bodies cost the others, like a tokens-per-minute limit does:
 * EDGE_TENANT_LARGE_BYTES_PER_SECOND (8 MiB/s by default) is ~4× the text of OpenAI's highest
 * published tokens-per-minute tier, per edge replica. Tenants are the configured API keys' tenants,
 * so the map of buckets is bounded by the key set.
 */
export class TenantBytePacer {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly pace: BytePace,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether bodies are paced at all. */
  get enabled(): boolean {
    return this.pace.bytesPerSecond > 0;
  }

  /**
   * Spends `bytes` of `tenant`'s credit: at once (undefined) while it has credit and nothing of
   * its own waits, else a promise that resolves when its turn and its credit come.
   */
  take(tenant: string, bytes: number): Promise<void> | undefined {
    if (!this.enabled) return undefined;
    const bucket = this.bucket(tenant);
    if (bucket.waiting === 0 && bucket.credit > 0) {
      bucket.credit -= bytes;
      return undefined;
    }
    bucket.waiting++;
    const turn = bucket.tail.then(() => this.spendWhenDue(bucket, bytes));
    bucket.tail = turn.finally(() => void bucket.waiting--);
    return turn;
  }

  /** Bodies waiting for credit, over every tenant (for tests and metrics). */
  get waiting(): number {
    let n = 0;
    for (const bucket of this.buckets.values()) n += bucket.waiting;
    return n;
  }

  private bucket(tenant: string): Bucket {
    let bucket = this.buckets.get(tenant);
    if (!bucket) {
      bucket = { credit: this.pace.burstBytes, at: this.now(), waiting: 0, tail: Promise.resolve() };
      this.buckets.set(tenant, bucket);
    }
    this.refill(bucket);
    return bucket;
  }

  private refill(bucket: Bucket): void {
    const now = this.now();
    const earned = ((now - bucket.at) / 1_000) * this.pace.bytesPerSecond;
    bucket.credit = Math.min(this.pace.burstBytes, bucket.credit + earned);
    bucket.at = now;
  }

  private async spendWhenDue(bucket: Bucket, bytes: number): Promise<void> {
    for (this.refill(bucket); bucket.credit <= 0; this.refill(bucket)) {
      const ms = Math.ceil((-bucket.credit / this.pace.bytesPerSecond) * 1_000) + 1;
      // Unref'd: a body waiting for credit must not keep a stopping process alive.
      await new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
    }
    bucket.credit -= bytes;
  }
}
