import { EventEmitter } from 'node:events';
import { status as GrpcStatus, type ServerDuplexStream } from '@grpc/grpc-js';
import { DomainError } from '../grpc-errors';
import { ErrorCode } from '../error-codes';
import { toCallError, type MuxRequestFrame, type MuxResponseFrame } from './mux-frames';

/** Calls one multiplexed stream may run at once by default (a plain HTTP/2 connection's streams are bounded too). */
export const DEFAULT_MAX_CALLS_PER_STREAM = 10_000;

/**
 * Largest message a call may send on a stream by default: under the 64 MiB every fastloop client
 * accepts (`grpc.max_receive_message_length`), less room for the frame around it. A larger one
 * would fail the client's whole stream, and every call on it; it fails only its own call instead.
 */
export const DEFAULT_MAX_CALL_MESSAGE_BYTES = 64 * 1024 * 1024 - 64 * 1024;

/** Options of a {@link MuxServer}. */
export interface MuxServerOptions {
  /** Calls one stream may run at once; more get `too_many_calls` (RESOURCE_EXHAUSTED). Default 10,000. */
  maxCallsPerStream?: number;
  /**
   * The encoded size of a call's message, e.g. `(m) => encodeMessage(XResponse, m).length`. When
   * given, a message over `maxMessageBytes` fails its call with `response_too_large` instead of
   * reaching the stream (where the client would drop the stream and all its calls). Measuring
   * encodes the message once more: give it where messages can be large (not on token streams).
   */
  messageBytes?: (message: never) => number;
  /**
   * A cheap upper bound of `messageBytes` (e.g. from the lengths of the message's bytes and
   * strings): a message it puts within the limit is not measured. Safety's responses were encoded
   * twice for the measure alone, ~3% of its CPU on streamed output.
   */
  messageBytesAtMost?: (message: never) => number;
  /** Default {@link DEFAULT_MAX_CALL_MESSAGE_BYTES}. */
  maxMessageBytes?: number;
}

type ServerMuxStream<Req, Res, Msg = never> = ServerDuplexStream<MuxRequestFrame<Req, Msg>, MuxResponseFrame<Res>>;

/**
 * What a server-streaming handler uses of its call; a grpc-js ServerWritableStream has it, and so
 * does a call on a multiplexed stream ({@link MuxServerCall}), so one handler serves both.
 */
export interface StreamingCall<Req, Res> {
  readonly request: Req;
  readonly cancelled: boolean;
  /** The caller cancelled but goes on from what the call built (`Cancel.keep`); a grpc-js stream never says so. */
  readonly keepOnCancel?: boolean;
  /** False when the transport's buffer is full: wait for 'drain'. */
  write(message: Res): boolean;
  end(): void;
  on(event: 'cancelled' | 'drain', listener: () => void): unknown;
  off(event: 'cancelled' | 'drain', listener: () => void): unknown;
  /** Fails the call with a grpc-js error object (`toGrpcError`), as grpc-js server streams do. */
  emit(event: 'error', err: unknown): boolean;
}

/**
 * One call on a multiplexed stream, shaped like a grpc-js server stream. A session call (one that
 * takes `message` frames after its start) emits 'message' with each.
 */
export class MuxServerCall<Req, Res> extends EventEmitter implements StreamingCall<Req, Res> {
  cancelled = false;
  keepOnCancel = false;
  private finished = false;

  constructor(
    readonly request: Req,
    private readonly callId: number,
    private readonly stream: StreamState<Req, Res>,
  ) {
    super();
    this.on('error', (err: unknown) => this.finish({ $case: 'error', value: toCallError(err) }));
  }

  write(message: Res): boolean {
    if (this.finished || this.cancelled) return true;
    const tooLarge = this.stream.oversized(message);
    if (tooLarge) {
      this.emit('error', tooLarge);
      return true;
    }
    return this.stream.send({ callId: this.callId, event: { $case: 'message', value: message } });
  }

  end(): void {
    this.finish({ $case: 'end', value: {} });
  }

  /** The caller cancelled (`keep`: it goes on from what the call built), or the stream broke. */
  cancel(keep = false): void {
    if (this.finished || this.cancelled) return;
    this.cancelled = true;
    this.keepOnCancel = keep;
    this.stream.forget(this.callId);
    this.emit('cancelled');
  }

  private finish(event: NonNullable<MuxResponseFrame<Res>['event']>): void {
    if (this.finished || this.cancelled) return;
    this.finished = true;
    this.stream.send({ callId: this.callId, event });
    this.stream.forget(this.callId);
  }
}

/** One client's multiplexed stream and its running calls. */
class StreamState<Req, Res> {
  readonly calls = new Map<number, MuxServerCall<Req, Res>>();
  /** The client half-closed: it starts nothing more. */
  halfClosed = false;
  private ended = false;

  constructor(
    readonly duplex: ServerMuxStream<Req, Res>,
    private readonly server: MuxServer,
  ) {}

  /** The error for a message too large to send on this stream, if it is. */
  oversized(message: Res): DomainError | undefined {
    const measure = this.server.options.messageBytes as ((message: Res) => number) | undefined;
    if (!measure) return undefined;
    const max = this.server.options.maxMessageBytes ?? DEFAULT_MAX_CALL_MESSAGE_BYTES;
    const atMost = this.server.options.messageBytesAtMost as ((message: Res) => number) | undefined;
    if (atMost && atMost(message) <= max) return undefined;
    const bytes = measure(message);
    if (bytes <= max) return undefined;
    return new DomainError(
      ErrorCode.responseTooLarge,
      `the response has ${bytes} bytes, over the ${max}-byte message limit`,
      GrpcStatus.RESOURCE_EXHAUSTED,
      false,
    );
  }

  send(frame: MuxResponseFrame<Res>): boolean {
    if (this.ended) return true;
    return this.duplex.write(frame);
  }

  forget(callId: number): void {
    this.calls.delete(callId);
    if (this.server.draining || this.halfClosed) this.endIfIdle();
  }

  endIfIdle(): void {
    if (this.ended || this.calls.size > 0) return;
    this.ended = true;
    this.duplex.end();
    this.server.untrack(this);
  }

  /** The client went away or half-closed with nothing pending: stop every call. */
  cancelAll(): void {
    for (const call of [...this.calls.values()]) call.cancel();
    this.ended = true;
    this.server.untrack(this);
  }
}

/**
 * The server side of the multiplexed streams (mux.proto) of one service: runs each `start` frame
 * through the same handler a plain call uses, and ends its streams when the server drains, each
 * once its calls have finished (calls started after the drain began get `unavailable`, retryable,
 * as a new call on a draining server would).
 */
export class MuxServer {
  draining = false;
  private readonly streams = new Set<StreamState<unknown, unknown>>();

  readonly options: MuxServerOptions;
  private readonly maxCallsPerStream: number;

  /** @param options a number is `maxCallsPerStream` (the older signature). */
  constructor(options: MuxServerOptions | number = {}) {
    this.options = typeof options === 'number' ? { maxCallsPerStream: options } : options;
    this.maxCallsPerStream = this.options.maxCallsPerStream ?? DEFAULT_MAX_CALLS_PER_STREAM;
  }

  /**
   * Serves a stream whose calls are sessions: after its start a call takes `message` frames (the
   * call emits 'message' with each, in order) and answers with messages of its own until it ends.
   */
  serveSessions<Req, Msg, Res>(
    duplex: ServerMuxStream<Req, Res, Msg>,
    handler: (call: MuxServerCall<Req, Res>) => void,
  ): void {
    this.serve(duplex, handler);
  }

  /** Serves a stream whose calls are server-streaming: `handler` gets each call as a grpc-js-like stream. */
  serveStreaming<Req, Res>(duplex: ServerMuxStream<Req, Res>, handler: (call: StreamingCall<Req, Res>) => void): void {
    this.serve(duplex, handler);
  }

  /**
   * Serves a stream whose calls are unary: `handler` answers each request once; `signal` aborts
   * when the caller cancels the call (or the stream breaks).
   */
  serveUnary<Req, Res>(
    duplex: ServerMuxStream<Req, Res>,
    handler: (request: Req, signal: AbortSignal) => Promise<Res>,
  ): void {
    this.serve(duplex, (call) => {
      const cancelled = new AbortController();
      call.on('cancelled', () => cancelled.abort());
      handler(call.request, cancelled.signal).then(
        (response) => {
          call.write(response);
          call.end();
        },
        (err: unknown) => call.emit('error', err),
      );
    });
  }

  /** Starts draining: idle streams end now, busy ones when their last call ends. */
  drain(): void {
    this.draining = true;
    for (const stream of [...this.streams]) stream.endIfIdle();
  }

  /** @internal */
  untrack(stream: StreamState<unknown, unknown>): void {
    this.streams.delete(stream);
  }

  private serve<Req, Res, Msg>(
    duplex: ServerMuxStream<Req, Res, Msg>,
    handler: (call: MuxServerCall<Req, Res>) => void,
  ): void {
    const stream = new StreamState<Req, Res>(duplex as ServerMuxStream<Req, Res>, this);
    this.streams.add(stream as StreamState<unknown, unknown>);
    duplex.on('data', (frame: MuxRequestFrame<Req, Msg>) => {
      const op = frame.op;
      if (op?.$case === 'cancel') {
        stream.calls.get(frame.callId)?.cancel(op.value.keep);
        return;
      }
      // A session's next message; one for a call that has ended (or was never started) is dropped,
      // as frames of a cancelled call are on the client's side.
      if (op?.$case === 'message') {
        stream.calls.get(frame.callId)?.emit('message', op.value);
        return;
      }
      if (op?.$case !== 'start' || stream.calls.has(frame.callId)) {
        stream.send({
          callId: frame.callId,
          event: {
            $case: 'error',
            value: toCallError(
              new DomainError(
                ErrorCode.invalidFrame,
                'a frame must start a new call id or cancel a running one',
                GrpcStatus.INVALID_ARGUMENT,
              ),
            ),
          },
        });
        return;
      }
      if (stream.calls.size >= this.maxCallsPerStream) {
        stream.send({
          callId: frame.callId,
          event: {
            $case: 'error',
            value: toCallError(
              new DomainError(
                ErrorCode.tooManyCalls,
                `at most ${this.maxCallsPerStream} calls run on one stream`,
                GrpcStatus.RESOURCE_EXHAUSTED,
                true,
              ),
            ),
          },
        });
        return;
      }
      if (this.draining) {
        stream.send({
          callId: frame.callId,
          event: {
            $case: 'error',
            value: toCallError(
              new DomainError(ErrorCode.unavailable, 'the server is draining', GrpcStatus.UNAVAILABLE, true),
            ),
          },
        });
        return;
      }
      const call = new MuxServerCall<Req, Res>(op.value, frame.callId, stream);
      stream.calls.set(frame.callId, call);
      try {
        handler(call);
      } catch (err) {
        // A handler that throws fails its own call, never the stream that carries the others.
        call.emit('error', err);
      }
    });
    duplex.on('drain', () => {
      for (const call of stream.calls.values()) call.emit('drain');
    });
    // The client half-closed: it starts nothing more; close once its calls are done.
    duplex.on('end', () => {
      stream.halfClosed = true;
      stream.endIfIdle();
    });
    duplex.on('cancelled', () => stream.cancelAll());
    duplex.on('error', () => stream.cancelAll());
    duplex.on('close', () => stream.cancelAll());
  }
}
