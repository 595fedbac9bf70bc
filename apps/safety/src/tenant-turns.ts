import { status as GrpcStatus } from '@grpc/grpc-js';
import { DomainError, ErrorCode, FairScheduler, FairSchedulerError, type SlotLease } from '@fastloop/service-kit';
import { safetyOverloaded } from './errors';

/** Options of {@link TenantTurns}. */
export interface TenantTurnsOptions {
  /** How long a call may wait for its first turn (`SAFETY_QUEUE_TIMEOUT_MS`). */
  queueTimeoutMs: number;
  /** Calls one tenant may have waiting (`SAFETY_MAX_QUEUED_PER_TENANT`). */
  maxQueuedPerTenant: number;
}

/** A call's hold on the classifier: `pause` lets other tenants' calls run, `end` gives the turn up. */
export interface ClassifierTurn {
  pause(): Promise<void>;
  end(): void;
}

/**
 * The safety service's one thread, shared between tenants in turns: a call scans a slice (a few
 * ms), then pauses, and the next turn goes to the waiting tenant served longest ago, not to the
 * oldest call. So a tenant that sends megabytes, or a thousand calls, delays another tenant's call
 * by one slice at most, never by its own backlog (a FairScheduler with one slot per process).
 */
export class TenantTurns {
  private readonly scheduler: FairScheduler;

  constructor(private readonly options: TenantTurnsOptions) {
    // The per-tenant bound is checked in `begin` only: a paused call must always get back in line.
    this.scheduler = new FairScheduler({
      capacity: 1,
      maxQueuedPerKey: Number.MAX_SAFE_INTEGER,
      maxQueued: Number.MAX_SAFE_INTEGER,
    });
  }

  /** Calls running or paused now, and waiting for their first turn. */
  get waiting(): number {
    return this.scheduler.waiting();
  }

  /**
   * Waits for `tenant`'s first turn; rejects with `safety_overloaded` (retryable) when the
   * tenant's queue is full or the wait outlasts the queue timeout, or when `signal` aborts.
   */
  async begin(tenant: string, signal?: AbortSignal): Promise<ClassifierTurn> {
    if (this.scheduler.waiting(tenant) >= this.options.maxQueuedPerTenant)
      throw safetyOverloaded(
        `this tenant has ${this.options.maxQueuedPerTenant} calls waiting (SAFETY_MAX_QUEUED_PER_TENANT)`,
      );
    let lease = await this.acquire(tenant, { timeoutMs: this.options.queueTimeoutMs, signal });
    return {
      pause: async () => {
        lease.release();
        // A macrotask: calls that arrived meanwhile reach the queue before this one asks again.
        await new Promise<void>((resolve) => setImmediate(resolve));
        lease = await this.acquire(tenant, { signal });
      },
      end: () => lease.release(),
    };
  }

  /** Fails every waiting call (shutdown). */
  close(): void {
    this.scheduler.close();
  }

  private async acquire(tenant: string, options: { timeoutMs?: number; signal?: AbortSignal }): Promise<SlotLease> {
    try {
      return await this.scheduler.acquire(tenant, options);
    } catch (err) {
      if (!(err instanceof FairSchedulerError)) throw err;
      if (err.reason === 'aborted')
        throw new DomainError(ErrorCode.cancelled, 'classify cancelled by the caller', GrpcStatus.CANCELLED, false, {
          cause: err,
        });
      throw safetyOverloaded(
        err.reason === 'timeout'
          ? `this tenant's calls waited more than ${this.options.queueTimeoutMs} ms behind its earlier calls`
          : 'the safety service is shutting down',
      );
    }
  }
}
