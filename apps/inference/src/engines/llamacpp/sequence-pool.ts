/** What the pool needs of a KV sequence: the tokens its KV state holds. */
export interface HeldSequence {
  /** Tokens in the KV state, in order. */
  readonly contextTokens: readonly number[];
}

/** One bounded slot: a sequence and who used it last. */
export interface PoolSlot<S extends HeldSequence> {
  readonly sequence: S;
  /** The session whose tokens the sequence holds (the last caller's key), if any. */
  sessionKey: string | undefined;
  /**
   * The cache salt (tenant) whose tokens the KV state holds: only a caller with the same salt may
   * reuse them ('' = unsalted, as a fresh pool starts). undefined = reusable by nobody (discarded).
   */
  salt: string | undefined;
  lastUsed: number;
  busy: boolean;
  /**
   * Set while the sequence is still being brought to `target` after its call returned (the KV
   * alignment with the rendering): busy, but worth waiting for by a prompt that continues `target`.
   */
  settling?: { target: readonly number[]; done: Promise<void> };
}

/** A slot handed out for one generation, with how much of the prompt its KV already holds. */
export interface Lease<S extends HeldSequence> {
  readonly slot: PoolSlot<S>;
  /** Leading prompt tokens already in the sequence's KV state (content match). */
  readonly commonPrefix: number;
}

/**
 * A fixed number of KV sequences shared by all sessions. A call gets the idle sequence whose KV
 * it mostly continues (its own session's, or any other's by content after its own was taken);
 * otherwise the least recently used idle one is reused (LRU eviction). With every sequence busy,
 * callers wait in arrival order.
 */
export class SequencePool<S extends HeldSequence> {
  private readonly slots: PoolSlot<S>[];
  private readonly waiters: Array<() => void> = [];
  private clock = 0;

  constructor(sequences: readonly S[]) {
    this.slots = sequences.map((sequence) => ({ sequence, sessionKey: undefined, salt: '', lastUsed: 0, busy: false }));
  }

  get size(): number {
    return this.slots.length;
  }

  /** Idle sequences now. */
  get idle(): number {
    return this.slots.filter((s) => !s.busy).length;
  }

  /**
   * Waits for an idle sequence (or `signal`), then leases the best one for `prompt`. A sequence
   * still settling towards a longer prefix of the prompt than any idle one holds is waited for.
   */
  async acquire(
    prompt: readonly number[],
    sessionKey: string | undefined,
    signal: AbortSignal,
    salt = '',
  ): Promise<Lease<S> | undefined> {
    while (!signal.aborted) {
      const settling = this.settlingFor(prompt, salt);
      if (settling) {
        await Promise.race([
          settling,
          new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true })),
        ]);
        continue;
      }
      const lease = this.tryAcquire(prompt, sessionKey, salt);
      if (lease) return lease;
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiters.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
    return undefined;
  }

  /**
   * Leases the best idle sequence for `prompt` at once, or returns undefined when all are busy.
   * A sequence is worth continuing when the prompt keeps at least as much of its KV as it erases
   * (a continuation keeps all of it); among those the longest match wins, then the session's own,
   * then the least recently used. A shared header alone does not justify erasing a long
   * conversation: with no such sequence the least recently used one is taken (empty ones first).
   * Content is matched only within `salt` (the tenant's cache salt): another tenant's KV state
   * counts as sharing nothing, so it is overwritten rather than reused.
   */
  tryAcquire(prompt: readonly number[], sessionKey: string | undefined, salt = ''): Lease<S> | undefined {
    let best: Lease<S> | undefined;
    let lru: Lease<S> | undefined;
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const commonPrefix = slot.salt === salt ? commonPrefixLength(slot.sequence.contextTokens, prompt) : 0;
      const candidate = { slot, commonPrefix };
      if (lru === undefined || slot.lastUsed < lru.slot.lastUsed) lru = candidate;
      const erased = slot.sequence.contextTokens.length - commonPrefix;
      if (erased > commonPrefix) continue;
      if (best === undefined || better(candidate, best, sessionKey)) best = candidate;
    }
    const lease = best ?? lru;
    if (!lease) return undefined;
    lease.slot.busy = true;
    lease.slot.sessionKey = sessionKey;
    lease.slot.salt = salt;
    lease.slot.lastUsed = ++this.clock;
    return lease;
  }

  /**
   * Returns a leased sequence; the next waiter (if any) tries again. `discard`: its KV state must
   * not be reused (a cancelled call, which may be a prompt safety blocked).
   */
  release(slot: PoolSlot<S>, discard = false): void {
    slot.busy = false;
    if (discard) {
      slot.salt = undefined;
      slot.sessionKey = undefined;
    }
    slot.lastUsed = ++this.clock;
    this.waiters.shift()?.();
  }

  /**
   * Keeps a leased sequence busy while `work` brings it to `target` (after its call returned), then
   * releases it; a failed `work` discards it. Callers whose prompt continues `target` wait for it.
   */
  settle(slot: PoolSlot<S>, target: readonly number[], work: Promise<void>): void {
    const done = work.then(
      () => this.release(slot),
      () => this.release(slot, true),
    );
    slot.settling = { target, done };
    void done.finally(() => {
      if (slot.settling?.done === done) slot.settling = undefined;
    });
  }

  /** The settling sequence a prompt should wait for, if one will share more of it than any idle one does. */
  private settlingFor(prompt: readonly number[], salt: string): Promise<void> | undefined {
    let best: { shared: number; done: Promise<void> } | undefined;
    for (const slot of this.slots) {
      if (!slot.settling || slot.salt !== salt) continue;
      const shared = commonPrefixLength(slot.settling.target, prompt);
      if (shared > 0 && (!best || shared > best.shared)) best = { shared, done: slot.settling.done };
    }
    if (!best) return undefined;
    for (const slot of this.slots) {
      if (slot.busy || slot.salt !== salt) continue;
      if (commonPrefixLength(slot.sequence.contextTokens, prompt) >= best.shared) return undefined;
    }
    return best.done;
  }

  /** Makes the idle (or settling) sequence a session last used unreusable (ForgetSession). Returns whether one was. */
  discardSession(sessionKey: string): boolean {
    // A sequence still settling after that session's call is idle as far as callers go.
    const slot = this.slots.find((s) => s.sessionKey === sessionKey && (!s.busy || s.settling));
    if (!slot) return false;
    slot.salt = undefined;
    slot.sessionKey = undefined;
    return true;
  }

  /** Every sequence, for closing. */
  all(): readonly S[] {
    return this.slots.map((s) => s.sequence);
  }

  /** Resolves once no sequence is settling (for closing). */
  async settled(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.settling?.done));
  }
}

function better(a: Lease<HeldSequence>, b: Lease<HeldSequence>, sessionKey: string | undefined): boolean {
  if (a.commonPrefix !== b.commonPrefix) return a.commonPrefix > b.commonPrefix;
  const ownA = ownedBy(a.slot, sessionKey);
  const ownB = ownedBy(b.slot, sessionKey);
  if (ownA !== ownB) return ownA;
  return a.slot.lastUsed < b.slot.lastUsed;
}

function ownedBy(slot: PoolSlot<HeldSequence>, sessionKey: string | undefined): boolean {
  return sessionKey !== undefined && slot.sessionKey === sessionKey;
}

/** Length of the longest common prefix of `a` and `b`. */
export function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
