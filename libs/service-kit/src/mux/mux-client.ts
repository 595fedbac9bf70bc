import { status as GrpcStatus, type ClientDuplexStream } from '@grpc/grpc-js';
import { DomainError, fromGrpcError } from '../grpc-errors';
import { ErrorCode } from '../error-codes';
import { fromCallError, type MuxRequestFrame, type MuxResponseFrame } from './mux-frames';

/** Opens one multiplexed stream (the generated client's bidi method, bound). */
export type OpenMuxStream<Req, Res, Msg = never> = () => ClientDuplexStream<
  MuxRequestFrame<Req, Msg>,
  MuxResponseFrame<Res>
>;

export interface MuxClientOptions {
  /**
   * Streams kept open and used in turn. Each stream is one pick of the channel's load balancer,
   * so a peer name that resolves to several pods needs several streams to reach more than one.
   * Default 1.
   */
  streams?: number;
  /**
   * A stream older than this takes no new calls (it closes once its calls end) and a fresh one
   * is opened: new pods behind the name get their share, as with a max connection age. Default 60 s.
   */
  maxStreamAgeMs?: number;
  /** Messages buffered for slow readers, over all calls, before the streams are paused. Default 4096. */
  highWaterMark?: number;
}

export interface MuxCallSettings {
  /** Deadline for the call in ms (every call has one). */
  deadlineMs: number;
  /** Cancels the call when aborted. */
  signal?: AbortSignal;
}

interface CallSink<Res> {
  message(value: Res): void;
  end(): void;
  fail(err: DomainError): void;
}

/** One open stream and the calls running on it. */
class MuxStream<Req, Res, Msg = never> {
  readonly calls = new Map<number, CallSink<Res>>();
  readonly openedAt = Date.now();
  retired = false;
  closed = false;
  private nextId = 1;

  constructor(
    readonly duplex: ClientDuplexStream<MuxRequestFrame<Req, Msg>, MuxResponseFrame<Res>>,
    private readonly onClosed: (stream: MuxStream<Req, Res, Msg>, err: DomainError) => void,
  ) {
    duplex.on('data', (frame: MuxResponseFrame<Res>) => this.deliver(frame));
    duplex.on('error', (err: unknown) => this.close(fromGrpcError(err)));
    // The server ended the stream (it is draining): calls still open on it cannot finish here.
    duplex.on('end', () =>
      this.close(
        new DomainError(ErrorCode.unavailable, 'the peer closed the multiplexed stream', GrpcStatus.UNAVAILABLE, true),
      ),
    );
  }

  start(request: Req, sink: CallSink<Res>): number {
    let id = this.nextId;
    while (this.calls.has(id)) id = (id % 0xffff_ffff) + 1;
    this.nextId = (id % 0xffff_ffff) + 1;
    this.calls.set(id, sink);
    this.duplex.write({ callId: id, op: { $case: 'start', value: request } });
    return id;
  }

  /** A session call's next message (ModerateStream's batches). */
  message(id: number, value: Msg): void {
    if (!this.calls.has(id) || this.closed) return;
    this.duplex.write({ callId: id, op: { $case: 'message', value } } as MuxRequestFrame<Req, Msg>);
  }

  cancel(id: number, keep = false): void {
    if (!this.calls.delete(id) || this.closed) return;
    this.duplex.write({ callId: id, op: { $case: 'cancel', value: { keep } } });
    this.endIfRetiredAndIdle();
  }

  finished(id: number): void {
    this.calls.delete(id);
    this.endIfRetiredAndIdle();
  }

  endIfRetiredAndIdle(): void {
    if (this.retired && !this.closed && this.calls.size === 0) {
      this.closed = true;
      this.duplex.end();
    }
  }

  close(err: DomainError): void {
    const calls = [...this.calls.values()];
    this.calls.clear();
    const wasClosed = this.closed;
    this.closed = true;
    if (!wasClosed) this.duplex.cancel();
    this.onClosed(this, err); // first: a caller that falls back on UNIMPLEMENTED sees `unsupported` set
    for (const sink of calls) sink.fail(err);
  }

  private deliver(frame: MuxResponseFrame<Res>): void {
    const sink = this.calls.get(frame.callId);
    if (!sink || !frame.event) return; // a call this side cancelled: its last frames may still arrive
    const event = frame.event;
    if (event.$case === 'message') sink.message(event.value);
    else if (event.$case === 'end') {
      this.finished(frame.callId);
      sink.end();
    } else {
      const err = fromCallError(event.value);
      // `unavailable` on a call of an open stream: the peer is draining (mux-server refuses calls
      // started after its drain began). The stream takes no more calls, so the caller's retry opens
      // a new one, which the channel's balancer sends to another replica.
      if (err.code === ErrorCode.unavailable) this.retired = true;
      this.finished(frame.callId);
      sink.fail(err);
    }
  }
}

/**
 * Runs many calls of one RPC over a few long-lived bidi streams (mux.proto): a call costs one
 * message each way instead of an HTTP/2 stream with headers, trailers and grpc-js's per-call setup
 * on both sides (0.7 ms round trip → 0.1 ms on loopback, bench/results/transport-floor.md).
 * Calls fail as plain calls would: DomainErrors with the peer's code, `deadline_exceeded` at the
 * deadline, `cancelled` on abort, `unavailable` (retryable) when the stream breaks or the peer
 * drains. A peer without the stream method (UNIMPLEMENTED) sets {@link unsupported}, so the caller
 * can fall back to plain calls.
 */
/**
 * Requests larger than this should not ride a shared multiplexed stream: a stream's bytes are
 * delivered in order, so every call queued behind a multi-megabyte message waits for all of it to
 * cross (at the receiver's read pace: HTTP/2 lets a sender run only a 64 KiB window ahead), while a
 * plain call of its own gets its frames interleaved with everyone else's. Measured with
 * bench/fairness/safety-direct.ts: a tenant's 3 MB Classify calls on the shared streams held
 * another tenant's 100-byte calls for seconds (2 answered in 8 s); as plain calls, p50 29 ms.
 */
export const MUX_BULK_MESSAGE_BYTES = 256 * 1024;

export class MuxClient<Req, Res, Msg = never> {
  /** The streams new calls go to, one per slot. */
  private readonly streams: Array<MuxStream<Req, Res, Msg> | undefined>;
  /** Every open stream: the slots' and retired ones whose calls are still running. */
  private readonly open = new Set<MuxStream<Req, Res, Msg>>();
  private turn = 0;
  private buffered = 0;
  private paused = false;
  private closedForGood = false;
  /** The peer answered UNIMPLEMENTED: it predates the stream method. */
  unsupported = false;

  constructor(
    private readonly openStream: OpenMuxStream<Req, Res, NoInfer<Msg>>,
    private readonly options: MuxClientOptions = {},
  ) {
    this.streams = new Array<MuxStream<Req, Res, Msg> | undefined>(Math.max(1, options.streams ?? 1)).fill(undefined);
  }

  /** A unary call: resolves with the peer's one response. */
  unary(request: Req, settings: MuxCallSettings): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      const call = new UnaryCall<Res>(resolve, reject, settings.signal);
      const { stream, id } = this.start(request, call);
      call.begin(stream, id, settings.deadlineMs);
    });
  }

  /** A server-streaming call: the peer's messages until its end; stopping early cancels the call. */
  async *stream(request: Req, settings: MuxCallSettings): AsyncGenerator<Res> {
    const queue: Res[] = [];
    let head = 0;
    let ended = false;
    let error: DomainError | undefined;
    let wake: (() => void) | undefined;
    const { stream, id } = this.start(request, {
      message: (value) => {
        queue.push(value);
        this.buffered++;
        if (this.buffered >= this.highWaterMark) this.pause();
        wake?.();
      },
      end: () => {
        ended = true;
        wake?.();
      },
      fail: (err) => {
        error ??= err;
        wake?.();
      },
    });
    const stop = (err: DomainError, keep = false) => {
      error ??= err;
      stream.cancel(id, keep);
      wake?.();
    };
    const timer = setTimeout(() => stop(deadlineExceeded()), settings.deadlineMs);
    const onAbort = () => stop(cancelled(), settings.signal?.reason === KEEP_ON_CANCEL);
    if (settings.signal?.aborted) onAbort();
    else settings.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (error && (settings.signal?.aborted || error.code === ErrorCode.deadlineExceeded)) throw error;
        if (head < queue.length) {
          const value = queue[head];
          queue[head++] = undefined as unknown as Res;
          this.consumed(1);
          if (head === queue.length) queue.length = head = 0;
          yield value;
          continue;
        }
        if (error) throw error;
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      clearTimeout(timer);
      settings.signal?.removeEventListener('abort', onAbort);
      this.consumed(queue.length - head);
      if (!ended && !error) stream.cancel(id);
    }
  }

  /**
   * A session call: `start` is answered by the first response, each {@link MuxSession.send} by the
   * next one, in order. Each answer is due within `deadlineMs`; a late one, an abort, the stream
   * breaking or the peer failing the call fails every answer still awaited (and the session).
   */
  session(start: Req, settings: MuxCallSettings): MuxSession<Res, Msg> {
    const session = new SessionCall<Res, Msg>(settings);
    const { stream, id } = this.start(start, session);
    session.begin(stream, id);
    return session;
  }

  /** Ends every stream; calls still running fail with `unavailable`. */
  close(): void {
    this.closedForGood = true;
    for (const stream of [...this.open])
      stream.close(new DomainError(ErrorCode.unavailable, 'the client is closing', GrpcStatus.UNAVAILABLE, true));
  }

  /** Calls running now, over all streams. */
  get activeCalls(): number {
    let n = 0;
    for (const s of this.open) n += s.calls.size;
    return n;
  }

  private get highWaterMark(): number {
    return this.options.highWaterMark ?? 4096;
  }

  private start(request: Req, sink: CallSink<Res>): { stream: MuxStream<Req, Res, Msg>; id: number } {
    if (this.closedForGood)
      throw new DomainError(ErrorCode.unavailable, 'the client is closed', GrpcStatus.UNAVAILABLE, true);
    const slot = this.turn;
    this.turn = (this.turn + 1) % this.streams.length;
    let stream = this.streams[slot];
    if (stream && Date.now() - stream.openedAt > (this.options.maxStreamAgeMs ?? 60_000)) {
      stream.retired = true;
      stream.endIfRetiredAndIdle();
      stream = undefined;
    }
    // A retired stream (too old, or its peer refused a call as draining) finishes its calls but takes no new ones.
    if (!stream || stream.closed || stream.retired) {
      stream = new MuxStream(this.openStream(), (closed, err) => this.onStreamClosed(closed, err));
      if (this.paused) stream.duplex.pause();
      this.streams[slot] = stream;
      this.open.add(stream);
    }
    return { stream, id: stream.start(request, sink) };
  }

  private onStreamClosed(stream: MuxStream<Req, Res, Msg>, err: DomainError): void {
    if (err.grpcStatus === GrpcStatus.UNIMPLEMENTED) this.unsupported = true;
    this.open.delete(stream);
    const slot = this.streams.indexOf(stream);
    if (slot >= 0) this.streams[slot] = undefined;
  }

  private consumed(n: number): void {
    if (n <= 0) return;
    this.buffered -= n;
    if (this.paused && this.buffered <= this.highWaterMark / 2) {
      this.paused = false;
      for (const s of this.open) s.duplex.resume();
    }
  }

  // Back-pressure: past the mark the streams stop reading, so HTTP/2 flow control holds the peer.
  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    for (const s of this.open) s.duplex.pause();
  }
}

/** What a call's sink does to its stream. */
interface CallStream<Msg> {
  cancel(id: number, keep?: boolean): void;
  finished(id: number): void;
  message(id: number, value: Msg): void;
}

/*
 * The calls below are objects with methods, not closures per call: the bundles (and tsx) name every
 * closure made with a defineProperty call (~0.8 µs each), and the edge makes a few such calls per turn.
 * They listen to their abort signal as an EventListenerObject (`handleEvent`).
 */

/** A unary call's sink: the first response settles it; so do the deadline, an abort, an end or a failure. */
class UnaryCall<Res> implements CallSink<Res> {
  private settled = false;
  private timer: NodeJS.Timeout | undefined;
  private stream: CallStream<never> | undefined;
  private id = 0;

  constructor(
    private readonly resolve: (value: Res) => void,
    private readonly reject: (err: DomainError) => void,
    private readonly signal: AbortSignal | undefined,
  ) {}

  begin(stream: CallStream<never>, id: number, deadlineMs: number): void {
    this.stream = stream;
    this.id = id;
    this.timer = setTimeout(unaryDeadline, deadlineMs, this);
    if (this.signal?.aborted) this.handleEvent();
    else this.signal?.addEventListener('abort', this, { once: true });
  }

  message(value: Res): void {
    this.stream?.finished(this.id);
    if (this.settle()) this.resolve(value);
  }

  end(): void {
    if (this.settle())
      this.reject(
        new DomainError(ErrorCode.internal, 'the peer ended the call without a response', GrpcStatus.INTERNAL),
      );
  }

  fail(err: DomainError): void {
    if (this.settle()) this.reject(err);
  }

  /** The signal aborted. */
  handleEvent(): void {
    this.stream?.cancel(this.id);
    if (this.settle()) this.reject(cancelled());
  }

  timedOut(): void {
    this.stream?.cancel(this.id);
    if (this.settle()) this.reject(deadlineExceeded());
  }

  /** True the first time only. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
    return true;
  }
}

function unaryDeadline(call: { timedOut(): void }): void {
  call.timedOut();
}

/** An answer a session awaits. */
interface Awaited<Res> {
  resolve(value: Res): void;
  reject(err: DomainError): void;
  timer: NodeJS.Timeout;
}

/** A session call: its sink, and the {@link MuxSession} its caller holds. */
class SessionCall<Res, Msg> implements CallSink<Res>, MuxSession<Res, Msg> {
  /** Set by {@link begin}, once the call is on a stream (no deadline runs for a call never started). */
  first!: Promise<Res>;
  private readonly waiting: Awaited<Res>[] = [];
  private failed: DomainError | undefined;
  private stream: CallStream<Msg> | undefined;
  private id = 0;

  constructor(private readonly settings: MuxCallSettings) {}

  begin(stream: CallStream<Msg>, id: number): void {
    this.stream = stream;
    this.id = id;
    const { signal } = this.settings;
    signal?.addEventListener('abort', this, { once: true });
    this.first = this.answer();
    if (signal?.aborted) this.handleEvent();
  }

  send(message: Msg): Promise<Res> {
    const next = this.answer();
    if (!this.failed) this.stream?.message(this.id, message);
    return next;
  }

  close(): void {
    this.stream?.cancel(this.id);
    this.fail(cancelled());
  }

  message(value: Res): void {
    const w = this.waiting.shift();
    if (!w) return;
    clearTimeout(w.timer);
    w.resolve(value);
  }

  end(): void {
    this.fail(new DomainError(ErrorCode.unavailable, 'the peer ended the session', GrpcStatus.UNAVAILABLE, true));
  }

  fail(err: DomainError): void {
    this.failed ??= err;
    this.settings.signal?.removeEventListener('abort', this);
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.reject(this.failed);
    }
  }

  /** The signal aborted. */
  handleEvent(): void {
    this.stop(cancelled());
  }

  stop(err: DomainError): void {
    this.stream?.cancel(this.id);
    this.fail(err);
  }

  private answer(): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      if (this.failed) return reject(this.failed);
      this.waiting.push({ resolve, reject, timer: setTimeout(sessionDeadline, this.settings.deadlineMs, this) });
    });
  }
}

function sessionDeadline(session: { stop(err: DomainError): void }): void {
  session.stop(deadlineExceeded());
}

/** A session call ({@link MuxClient.session}). */
export interface MuxSession<Res, Msg> {
  /** The answer to the start request. */
  readonly first: Promise<Res>;
  /** Sends the next message; resolves with its answer. */
  send(message: Msg): Promise<Res>;
  /** Ends the session from this side (cancels the call); answers still awaited fail `cancelled`. */
  close(): void;
}

function deadlineExceeded(): DomainError {
  return withoutStack(
    () => new DomainError(ErrorCode.deadlineExceeded, 'Deadline exceeded', GrpcStatus.DEADLINE_EXCEEDED, true),
  );
}

/**
 * Builds an error of a call's expected end without capturing a stack: made in a timer or an abort
 * listener, its stack names only those, and capturing it cost ~6 µs against ~0.5 (measured), at
 * the end of every response's moderation session.
 */
function withoutStack<E extends Error>(build: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return build();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Abort a streaming call with this reason to cancel it but let the server keep what the call built
 * (`Cancel.keep`): the caller goes on from it (a client interrupted or steered a response).
 */
export const KEEP_ON_CANCEL = 'fastloop.mux.keep-on-cancel';

/**
 * Abort a call's controller with this reason when its caller is done with it (read to its end, or
 * left): `abort()` without a reason builds a DOMException with its stack trace, ~10 µs more per
 * abort (measured), twice at every turn's end.
 */
export const CALL_DONE = 'fastloop.call-done';

function cancelled(): DomainError {
  return withoutStack(() => new DomainError(ErrorCode.cancelled, 'Cancelled on client', GrpcStatus.CANCELLED, false));
}
