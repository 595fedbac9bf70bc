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

  /**
   * @param onDrained called when the last waiting message has been handled.
   * @param onError told when a handler threw: the message is lost but the ones behind it are not.
   */
  constructor(
    private readonly gate: LargeBodyGate | undefined,
    private readonly tenant: string,
    private readonly onDrained: () => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Messages waiting for their turn. */
  get pending(): number {
    return this.waiting;
  }

  /**
   * Runs `handle` for a message of `bytes`, now or after those before it. A handler that throws is
   * reported to `onError` either way; a waiting one must not reject the chain, or every message
   * behind it would be dropped unanswered.
   */
  submit(bytes: number, handle: () => void): void {
    const gate = this.gate;
    if (!gate || (this.waiting === 0 && !gate.isLarge(bytes))) return this.guarded(handle);
    this.waiting++;
    this.tail = this.tail
      .then(() => gate.run(this.tenant, bytes, () => this.guarded(handle)))
      .catch(this.onError)
      .finally(() => {
        if (--this.waiting === 0) this.onDrained();
      });
  }

  private guarded(handle: () => void): void {
    try {
      handle();
    } catch (err) {
      this.onError(err);
    }
  }
}
