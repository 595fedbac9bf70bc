import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  DomainError,
  ErrorCode,
  FairScheduler,
  FairSchedulerError,
  KeyedPacer,
  type Pace,
  type SlotLease,
} from '@fastloop/service-kit';
import { safetyOverloaded } from './errors';

/** Options of {@link TenantTurns}. */
export interface TenantTurnsOptions {
  /** How long a call may wait for its first turn (`SAFETY_QUEUE_TIMEOUT_MS`). */
  queueTimeoutMs: number;
  /** Calls one tenant may have waiting (`SAFETY_MAX_QUEUED_PER_TENANT`). */
  maxQueuedPerTenant: number;
  /**
   * Each tenant's scanning time, in ms per second and a burst of ms (`SAFETY_TENANT_CPU_MS_PER_SECOND`,
   * `SAFETY_TENANT_CPU_BURST_MS`); absent or 0 per second: unpaced.
   */
  cpu?: Pace;
  /** The clock slices are timed with (tests). */
  now?: () => number;
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
 *
 * Turns share the thread, not the machine: a tenant scanning back to back keeps one of the two
 * cores busy, which every other tenant's edge, worker and safety work then lacks. So each tenant's
 * scanning time is also paced (a KeyedPacer in ms of CPU, 500 ms per second and a 1 s burst by
 * default): each slice is charged after it ran, and a tenant in debt waits, off the thread, before
 * its next slice; other tenants' calls run meanwhile.
 */
export class TenantTurns {
  private readonly scheduler: FairScheduler;
  private readonly cpu: KeyedPacer;
  private readonly now: () => number;

  constructor(private readonly options: TenantTurnsOptions) {
    this.now = options.now ?? (() => performance.now());
    this.cpu = new KeyedPacer(options.cpu ?? { perSecond: 0, burst: 0 }, this.now);
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
    if (this.scheduler.waiting(tenant) + this.cpu.waitingFor(tenant) >= this.options.maxQueuedPerTenant)
      throw safetyOverloaded(
        `this tenant has ${this.options.maxQueuedPerTenant} calls waiting (SAFETY_MAX_QUEUED_PER_TENANT)`,
      );
    // Only a real wait yields: a call let through at once must be queued before the next call's
    // bound check runs, as it was before pacing.
    const due = this.cpu.take(tenant, 0);
    if (due) await due;
    const lease = await this.acquire(tenant, { timeoutMs: this.options.queueTimeoutMs, signal });
    return new Turn(this, tenant, lease, signal);
  }

  /** A paused turn's next slice ({@link Turn}): in line again, once the tenant's pace allows. */
  async resume(tenant: string, signal: AbortSignal | undefined): Promise<SlotLease> {
    // A macrotask: calls that arrived meanwhile reach the queue before this one asks again.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const due = this.cpu.take(tenant, 0);
    if (due) await due;
    return this.acquire(tenant, { signal });
  }

  /** Charges a slice's time to the tenant's pace. */
  spend(tenant: string, ms: number): void {
    this.cpu.spend(tenant, ms);
  }

  /** The clock slices are timed with. */
  time(): number {
    return this.now();
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

/**
 * One call's turns. A class, not closures per call: the bundles (and tsx) name every closure they
 * create with a defineProperty call, ~0.8 µs each, on every Classify call.
 */
class Turn implements ClassifierTurn {
  private sliceStart: number;
  private held = true;

  constructor(
    private readonly turns: TenantTurns,
    private readonly tenant: string,
    private lease: SlotLease,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.sliceStart = turns.time();
  }

  async pause(): Promise<void> {
    this.end();
    this.lease = await this.turns.resume(this.tenant, this.signal);
    this.sliceStart = this.turns.time();
    this.held = true;
  }

  end(): void {
    if (!this.held) return;
    this.held = false;
    this.turns.spend(this.tenant, this.turns.time() - this.sliceStart);
    this.lease.release();
  }
}
