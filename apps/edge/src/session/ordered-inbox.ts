import type { LargeBodyGate } from '../turn/large-body-gate';

/**
 * A persistent connection's messages, handed on in arrival order: a large one (see LargeBodyGate)
 * waits for its turn to be parsed, and the messages after it wait behind it, so an interrupt or a
 * steer never overtakes the `response.create` it follows. Without a gate, or while nothing waits,
 * a message is handled at once.
 */
export class OrderedInbox {
  private waiting = 0;
  private tail: Promise<void> = Promise.resolve();

  /** @param onDrained called when the last waiting message has been handled. */
  constructor(
    private readonly gate: LargeBodyGate | undefined,
    private readonly tenant: string,
    private readonly onDrained: () => void,
  ) {}

  /** Messages waiting for their turn. */
  get pending(): number {
    return this.waiting;
  }

  /** Runs `handle` (which must not throw) for a message of `bytes`, now or after those before it. */
  submit(bytes: number, handle: () => void): void {
    const gate = this.gate;
    if (!gate || (this.waiting === 0 && !gate.isLarge(bytes))) return handle();
    this.waiting++;
    this.tail = this.tail
      .then(() => gate.run(this.tenant, bytes, handle))
      .finally(() => {
        if (--this.waiting === 0) this.onDrained();
      });
  }
}
