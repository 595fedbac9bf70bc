import type { Logger } from 'pino';
import type { ApiError } from '@fastloop/protocol';
import { toApiError } from '../api-errors';
import type { ParsedJson } from '../render-pool/json-task';
import type { ClientMessage } from './decode-client-event';
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
   * @param maxPayloadBytes a message over it is never parsed on a thread (decoding refuses it unparsed).
   */
  constructor(
    private readonly gate: LargeBodyGate | undefined,
    private readonly tenant: string,
    private readonly on: { drained: () => void; failed: (err: ApiError) => void; logger: Logger },
    private readonly maxPayloadBytes?: number,
  ) {}

  /** Messages waiting for their turn. */
  get pending(): number {
    return this.waiting;
  }

  /**
   * Hands on a client message of `size` bytes to `decode`: a large Buffer within `maxPayloadBytes`,
   * when the gate parses off the event loop, as its JSON parsed on a thread (the Buffer handed over)
   * and when that parse began (its time counts as the turn's validation, its wait for a turn does
   * not); anything else as text, decoded at arrival, a stage apart from its parse (4 MB: ~13 ms here).
   */
  receive(
    message: string | Buffer,
    size: number,
    on: { decode: (message: ClientMessage, parseStart?: number) => void; cleanup: () => void },
  ): void {
    const gate = this.gate;
    const withinLimit = this.maxPayloadBytes === undefined || size <= this.maxPayloadBytes;
    if (typeof message !== 'string' && withinLimit && gate?.parsesOffThread(size)) {
      let start = 0;
      const parse = () => {
        start = performance.now();
        return gate.parse(this.tenant, message)!;
      };
      return this.submit(size, (json: ParsedJson) => on.decode(json, start), on.cleanup, parse);
    }
    const text = message.toString();
    this.submit(size, () => on.decode(text), on.cleanup);
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
