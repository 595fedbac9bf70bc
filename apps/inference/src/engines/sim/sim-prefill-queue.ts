/**
 * One simulated accelerator's prefill, shared by every call on the worker (`SIM_SHARED_PREFILL`):
 * uncached prompt tokens are processed first come, first served at `tokensPerSecond`, so a call's
 * first token waits for the prefill queued ahead of it, as on a GPU that prefills one batch at a
 * time. Without it each call prefills at the full rate however many run at once (infinite
 * accelerators), and no placement can make a worker busier than another.
 * Decode stays per call: continuous batching gives each running sequence about the same speed.
 */
export class SimPrefillQueue {
  /** When the prefill queued so far is done, ms on the caller's clock. */
  private busyUntil = 0;

  constructor(private readonly tokensPerSecond: number) {}

  /**
   * Queues `tokens` tokens of prefill at `nowMs` and returns the ms from `nowMs` until they are
   * done. A cancelled call's reservation is not given back (the accelerator had started on it).
   */
  reserve(tokens: number, nowMs: number): number {
    const start = Math.max(nowMs, this.busyUntil);
    this.busyUntil = start + (Math.max(0, tokens) * 1000) / this.tokensPerSecond;
    return this.busyUntil - nowMs;
  }

  /** Ms of prefill queued ahead of a call arriving at `nowMs`. */
  backlogMs(nowMs: number): number {
    return Math.max(0, this.busyUntil - nowMs);
  }
}
