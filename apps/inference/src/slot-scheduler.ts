import {
  FairScheduler,
  FairSchedulerError,
  tenantCacheSalt,
  type FairShare,
  type SlotLease,
} from '@fastloop/service-kit';
import { workerOverloaded } from './inference-errors';

/** Options of a {@link SlotScheduler}. */
export interface SlotSchedulerOptions {
  /** Generation slots (`INFERENCE_MAX_CONCURRENCY`). */
  capacity: number;
  /**
   * Slots no single tenant may take (`INFERENCE_SLOT_RESERVE`; default an eighth of them, at least
   * one when there are two or more): a tenant with a hundred streams leaves them to the others.
   */
  reserve?: number;
  /** How long a call waits for a slot before `worker_overloaded` (`INFERENCE_SLOT_WAIT_MS`). */
  waitMs: number;
  /**
   * Per-tenant weight and cap (`INFERENCE_TENANT_SHARES`), by tenant name: the worker only ever
   * sees a tenant's `cache_salt`, so it digests these names the way the edge does.
   */
  shares?: Readonly<Record<string, FairShare>>;
  /** Calls one tenant may have waiting (default 256); more get `worker_overloaded` at once. */
  maxQueuedPerTenant?: number;
}

/**
 * Shares a worker's generation slots between tenants (the GenerateRequest's `cache_salt`, a digest
 * of the tenant): a cap per tenant that leaves `reserve` slots to the others, weighted fair order
 * when calls wait, and a bounded wait, so a call arriving while the slots are busy gets one as
 * soon as one frees (and its tenant's turn comes) instead of failing at once; past `waitMs`, or
 * past its tenant's queue bound, it fails with the retryable `worker_overloaded`.
 */
export class SlotScheduler {
  private readonly scheduler: FairScheduler;

  constructor(private readonly options: SlotSchedulerOptions) {
    const bySalt = new Map<string, FairShare>();
    for (const [tenant, share] of Object.entries(options.shares ?? {})) bySalt.set(tenantCacheSalt(tenant), share);
    this.scheduler = new FairScheduler({
      capacity: options.capacity,
      reserve: options.reserve ?? (options.capacity >= 2 ? Math.max(1, Math.ceil(options.capacity / 8)) : 0),
      shares: (salt) => bySalt.get(salt),
      maxQueuedPerKey: options.maxQueuedPerTenant ?? 256,
      maxQueued: Number.MAX_SAFE_INTEGER,
    });
  }

  /** Slots held now, in all or by one salt. */
  inUse(cacheSalt?: string): number {
    return this.scheduler.inUse(cacheSalt);
  }

  /** Calls waiting now. */
  get waiting(): number {
    return this.scheduler.waiting();
  }

  /**
   * A slot for a call of the tenant with this `cache_salt`. Rejects with `worker_overloaded`
   * (retryable) when none frees in time, and with the abort reason when `signal` aborts.
   */
  async acquire(cacheSalt: string, signal: AbortSignal): Promise<SlotLease> {
    try {
      return await this.scheduler.acquire(cacheSalt, { timeoutMs: this.options.waitMs, signal });
    } catch (err) {
      if (!(err instanceof FairSchedulerError) || err.reason === 'aborted') throw err;
      throw workerOverloaded(
        this.options.capacity,
        err.reason === 'timeout'
          ? `no slot freed for this tenant within ${this.options.waitMs} ms`
          : err.reason === 'queue_full'
            ? 'this tenant has too many calls waiting'
            : 'the worker is shutting down',
      );
    }
  }

  /** Fails the waiting calls (shutdown). */
  close(): void {
    this.scheduler.close();
  }
}
