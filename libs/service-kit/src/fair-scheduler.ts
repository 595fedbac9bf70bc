/**
 * Shares a fixed number of slots (worker threads, generation slots, the safety service's CPU)
 * between keys (tenants), so that one key's flood queues behind its own share instead of in front
 * of another key's request:
 *
 * - **A cap per key.** A key holds at most `maxConcurrent` slots (default: all but `reserve`), so
 *   the last `reserve` slots are always left to other keys, however many requests one key sends.
 * - **Weighted fair order.** When a slot frees, the waiting key with the fewest running slots per
 *   unit of weight gets it (ties: the key served longest ago), not the oldest request: a key with
 *   a thousand queued requests and a key with one alternate.
 * - **A bounded wait.** A request waits at most `timeoutMs` (or until its signal aborts) for a
 *   slot, then fails with {@link FairSchedulerError} `timeout`; queues are bounded per key and in
 *   total (`queue_full`). Callers turn these into their retryable "overloaded" errors.
 *
 * Keys are created on first use and dropped once they hold and wait for nothing, so the state is
 * bounded by the keys with work in flight.
 */
export interface FairShare {
  /** Relative share when slots are contended (default 1). */
  weight?: number;
  /** Most slots this key holds at once (default: the scheduler's `maxPerKey`). */
  maxConcurrent?: number;
}

/** Options of a {@link FairScheduler}. */
export interface FairSchedulerOptions {
  /** Slots in total (at least 1). */
  capacity: number;
  /** Slots no single key may take, kept for the others (default 0; capped so a key can hold one). */
  reserve?: number;
  /** Per-key overrides of weight and cap (e.g. from configuration), looked up once per key per request. */
  shares?: (key: string) => FairShare | undefined;
  /** Requests waiting in total (default 10,000). */
  maxQueued?: number;
  /** Requests one key may have waiting (default 1,000). */
  maxQueuedPerKey?: number;
}

/** Why a request got no slot. */
export type FairSchedulerErrorReason = 'timeout' | 'queue_full' | 'aborted' | 'closed';

/** A request that got no slot; `reason` says why. */
export class FairSchedulerError extends Error {
  constructor(
    readonly reason: FairSchedulerErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'FairSchedulerError';
  }
}

/** A held slot. `release` is idempotent. */
export interface SlotLease {
  readonly key: string;
  /** Milliseconds the request waited for its slot. */
  readonly waitedMs: number;
  release(): void;
}

/** How long to wait for a slot. */
export interface AcquireOptions {
  /** Give up after this many ms (default: wait as long as it takes). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface Waiter {
  readonly key: string;
  readonly since: number;
  resolve(lease: SlotLease): void;
  reject(err: FairSchedulerError): void;
  cleanup(): void;
}

interface KeyState {
  running: number;
  readonly waiters: Waiter[];
  /** Order of the key's last grant, for round robin among equals. */
  lastServed: number;
  readonly weight: number;
  readonly cap: number;
}

export class FairScheduler {
  private readonly keys = new Map<string, KeyState>();
  private readonly maxPerKey: number;
  private running = 0;
  private queued = 0;
  private grants = 0;
  private closed = false;

  constructor(private readonly options: FairSchedulerOptions) {
    if (!(options.capacity >= 1)) throw new Error('FairScheduler capacity must be at least 1');
    this.maxPerKey = Math.max(1, options.capacity - (options.reserve ?? 0));
  }

  /** Slots held now, in total or by `key`. */
  inUse(key?: string): number {
    return key === undefined ? this.running : (this.keys.get(key)?.running ?? 0);
  }

  /** Requests waiting now, in total or for `key`. */
  waiting(key?: string): number {
    return key === undefined ? this.queued : (this.keys.get(key)?.waiters.length ?? 0);
  }

  /** A slot now, or `undefined` when `key` would have to wait. */
  tryAcquire(key: string): SlotLease | undefined {
    const state = this.state(key);
    if (this.closed || state.waiters.length > 0 || !this.canStart(state)) {
      this.dropIfIdle(key, state);
      return undefined;
    }
    return this.grant(key, state, performance.now());
  }

  /** A slot, once this key's turn comes; rejects with {@link FairSchedulerError}. */
  acquire(key: string, options: AcquireOptions = {}): Promise<SlotLease> {
    if (this.closed) return Promise.reject(new FairSchedulerError('closed', 'the scheduler is closed'));
    if (options.signal?.aborted) return Promise.reject(new FairSchedulerError('aborted', 'the request was cancelled'));
    const now = performance.now();
    const state = this.state(key);
    if (state.waiters.length === 0 && this.canStart(state)) return Promise.resolve(this.grant(key, state, now));
    const perKey = this.options.maxQueuedPerKey ?? 1_000;
    if (state.waiters.length >= perKey || this.queued >= (this.options.maxQueued ?? 10_000)) {
      this.dropIfIdle(key, state);
      return Promise.reject(
        new FairSchedulerError('queue_full', `too many requests are waiting (${state.waiters.length} for this key)`),
      );
    }
    return new Promise<SlotLease>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => this.abandon(waiter, new FairSchedulerError('aborted', 'the request was cancelled'));
      const waiter: Waiter = {
        key,
        since: now,
        resolve,
        reject,
        cleanup: () => {
          if (timer) clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
        },
      };
      if (options.timeoutMs !== undefined)
        timer = setTimeout(
          () =>
            this.abandon(
              waiter,
              new FairSchedulerError('timeout', `no slot became free within ${options.timeoutMs} ms`),
            ),
          options.timeoutMs,
        );
      options.signal?.addEventListener('abort', onAbort, { once: true });
      state.waiters.push(waiter);
      this.queued++;
    });
  }

  /** Fails every waiting request (`closed`); held slots stay held until released. */
  close(): void {
    this.closed = true;
    for (const [key, state] of this.keys) {
      for (const waiter of state.waiters.splice(0)) {
        this.queued--;
        waiter.cleanup();
        waiter.reject(new FairSchedulerError('closed', 'the scheduler is closed'));
      }
      this.dropIfIdle(key, state);
    }
  }

  private state(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      const share = this.options.shares?.(key);
      state = {
        running: 0,
        waiters: [],
        lastServed: -1,
        weight: share?.weight !== undefined && share.weight > 0 ? share.weight : 1,
        cap: Math.max(1, Math.min(this.options.capacity, share?.maxConcurrent ?? this.maxPerKey)),
      };
      this.keys.set(key, state);
    }
    return state;
  }

  private canStart(state: KeyState): boolean {
    return this.running < this.options.capacity && state.running < state.cap;
  }

  private grant(key: string, state: KeyState, since: number): SlotLease {
    state.running++;
    this.running++;
    state.lastServed = this.grants++;
    return new Lease(this.released, key, state, performance.now() - since);
  }

  /** A lease gives its slot back (once); made once per scheduler. */
  private readonly released = (key: string, state: KeyState): void => {
    state.running--;
    this.running--;
    this.dispatch();
    this.dropIfIdle(key, state);
  };

  /** Hands free slots to waiting keys, fewest running per weight first. */
  private dispatch(): void {
    while (this.running < this.options.capacity) {
      let best: [string, KeyState] | undefined;
      for (const entry of this.keys) {
        const state = entry[1];
        if (state.waiters.length === 0 || state.running >= state.cap) continue;
        if (!best || this.before(state, best[1])) best = entry;
      }
      if (!best) return;
      const [key, state] = best;
      const waiter = state.waiters.shift() as Waiter;
      this.queued--;
      waiter.cleanup();
      waiter.resolve(this.grant(key, state, waiter.since));
    }
  }

  private before(a: KeyState, b: KeyState): boolean {
    const share = a.running / a.weight - b.running / b.weight;
    return share < 0 || (share === 0 && a.lastServed < b.lastServed);
  }

  private abandon(waiter: Waiter, err: FairSchedulerError): void {
    const state = this.keys.get(waiter.key);
    const at = state ? state.waiters.indexOf(waiter) : -1;
    if (!state || at < 0) return; // granted meanwhile
    state.waiters.splice(at, 1);
    this.queued--;
    waiter.cleanup();
    waiter.reject(err);
    this.dropIfIdle(waiter.key, state);
  }

  private dropIfIdle(key: string, state: KeyState): void {
    if (state.running === 0 && state.waiters.length === 0) this.keys.delete(key);
  }
}

/**
 * A granted slot. A class, not a closure per grant: the bundles (and tsx) name every closure they
 * create with a defineProperty call, ~0.8 µs each, and safety takes a slot per Classify call.
 */
class Lease implements SlotLease {
  private done = false;

  constructor(
    private readonly released: (key: string, state: KeyState) => void,
    readonly key: string,
    private readonly state: KeyState,
    readonly waitedMs: number,
  ) {}

  release(): void {
    if (this.done) return;
    this.done = true;
    this.released(this.key, this.state);
  }
}
