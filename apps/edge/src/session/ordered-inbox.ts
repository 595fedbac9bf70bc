import type { Logger } from 'pino';
import type { ApiError } from '@fastloop/protocol';
import { toApiError } from '../api-errors';
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
   * @param on.drained called when the last waiting message has been handled.
   * @param on.failed told, as a 500, when a handler threw (a defect, logged here, not the client's
   *   fault): that message is lost, the ones behind it are not, and the connection serves on.
   */
  constructor(
    private readonly gate: LargeBodyGate | undefined,
    private readonly tenant: string,
    private readonly on: { drained: () => void; failed: (err: ApiError) => void; logger: Logger },
  ) {}

  /** Messages waiting for their turn. */
  get pending(): number {
    return this.waiting;
  }

  /**
   * Runs `handle` for a message of `bytes`, now or after those before it. A handler that throws is
   * reported (`on.failed`) after `cleanup` (e.g. giving back the bytes it held); a waiting one must
   * not reject the chain, or every message behind it would be dropped unanswered. With `prepare`
   * (work off the event loop, e.g. parsing a large message on a thread), the message takes the
   * chain even when nothing waits, and `handle` gets what `prepare` resolved; a `prepare` that
   * rejects is reported as a handler that throws.
   */
  submit(bytes: number, handle: () => void, cleanup?: () => void): void;
  submit<P>(
    bytes: number,
    handle: (prepared: P) => void,
    cleanup: (() => void) | undefined,
    prepare: () => Promise<P>,
  ): void;
  submit<P>(bytes: number, handle: (prepared?: P) => void, cleanup?: () => void, prepare?: () => Promise<P>): void {
    const gate = this.gate;
    if (!prepare && (!gate || (this.waiting === 0 && !gate.isLarge(bytes)))) return this.guarded(handle, cleanup);
    this.waiting++;
    this.tail = this.tail
      .then(() => gate?.admit(this.tenant, bytes))
      .then(() => prepare?.())
      .then(
        (prepared) => {
          const run = () => this.guarded(() => handle(prepared), cleanup);
          return gate ? gate.run(this.tenant, bytes, run) : run();
        },
        (err: unknown) => {
          cleanup?.();
          this.failed(err);
        },
      )
      .catch((err) => this.failed(err))
      .finally(() => {
        if (--this.waiting === 0) this.on.drained();
      });
  }

  private guarded(handle: () => void, cleanup?: () => void): void {
    try {
      handle();
    } catch (err) {
      cleanup?.();
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    this.on.logger.error({ err }, 'handling a client message failed');
    this.on.failed(toApiError(err));
  }
}
