import { status as GrpcStatus, type ClientReadableStream } from '@grpc/grpc-js';
import { inferenceV1, routerV1, safetyV1 } from '@fastloop/proto';
import {
  CALL_DONE,
  callUnary,
  createGrpcClient,
  DomainError,
  ErrorCode,
  fromGrpcError,
  MUX_BULK_MESSAGE_BYTES,
  MuxClient,
  UnaryCalls,
} from '@fastloop/service-kit';
import type { ModerationMux } from './moderation-session';

type WorkerMux = MuxClient<inferenceV1.GenerateRequest, inferenceV1.GenerateResponse>;

export interface BackendClientOptions {
  safetyAddress: string;
  routerAddress: string;
  safetyTimeoutMs: number;
  routerTimeoutMs: number;
  inferenceTimeoutMs: number;
  inferenceIdleTimeoutMs: number;
  /** FASTLOOP_INTERNAL_TOKEN, sent on every call (safety, router and inference require it). */
  internalToken?: string;
  /**
   * EDGE_GRPC_MUX: Classify and Generate calls run on long-lived multiplexed streams (mux.proto) instead of
   * one gRPC call each; a peer without the stream methods gets plain calls. Off here (the config turns it on).
   */
  mux?: boolean;
  /** EDGE_SAFETY_STREAMS: multiplexed streams kept to safety (each reaches one safety pod). */
  safetyStreams?: number;
  /** EDGE_WORKER_STREAMS: Generate streams per worker (default 4); see docs/decisions.md. */
  workerStreams?: number;
}

/**
 * The edge's gRPC clients to safety, router and inference workers. Every call has a deadline;
 * failures surface as DomainErrors with the peer's stable code.
 */
export class BackendClients {
  private readonly safety: safetyV1.SafetyServiceClient;
  private readonly router: routerV1.RouterServiceClient;
  private readonly workers = new Map<string, inferenceV1.InferenceServiceClient>();
  private readonly safetyMux?: MuxClient<safetyV1.ClassifyRequest, safetyV1.ClassifyResponse>;
  private readonly routerMux?: MuxClient<routerV1.RouteRequest, routerV1.RouteResponse>;
  private readonly classifyCalls: UnaryCalls<safetyV1.ClassifyRequest, safetyV1.ClassifyResponse>;
  private readonly routeCalls: UnaryCalls<routerV1.RouteRequest, routerV1.RouteResponse>;
  /** ModerateStream sessions (clients/moderation-session.ts), when the multiplexed streams are on. */
  readonly moderationMux?: ModerationMux;
  private readonly workerMuxes = new Map<string, WorkerMux>();
  private closed = false;

  constructor(private readonly options: BackendClientOptions) {
    const safety = createGrpcClient(safetyV1.SafetyServiceClient, options.safetyAddress, {}, options.internalToken);
    this.safety = safety;
    const router = createGrpcClient(routerV1.RouterServiceClient, options.routerAddress, {}, options.internalToken);
    this.router = router;
    const streams = { streams: options.safetyStreams ?? 4 };
    if (options.mux) this.safetyMux = new MuxClient(() => safety.classifyStream(), streams);
    if (options.mux) this.moderationMux = new MuxClient(() => safety.moderateStream(), streams);
    // Routing is a small, quick call: a couple of streams reach every router replica soon enough.
    if (options.mux) this.routerMux = new MuxClient(() => router.routeStream(), { streams: 2 });
    this.classifyCalls = new UnaryCalls(this.safetyMux, safety.classify, safety);
    this.routeCalls = new UnaryCalls(this.routerMux, router.route, router);
  }

  /**
   * Classify, retried when an attempt fails in a way another replica may not (a safety pod draining or gone:
   * `unavailable`; see UnaryCalls). Classify is a pure function of its request, so a second attempt
   * is safe; the channel's round robin (and the draining pod's GOAWAY) sends it elsewhere.
   */
  classify(request: safetyV1.ClassifyRequest, signal?: AbortSignal): Promise<safetyV1.ClassifyResponse> {
    const settings = { deadlineMs: this.options.safetyTimeoutMs, signal };
    return this.classifyCalls.call(request, settings, classifyBytes(request) > MUX_BULK_MESSAGE_BYTES);
  }

  /** The deadline of a Classify call, and of each answer of a moderation session. */
  get safetyTimeoutMs(): number {
    return this.options.safetyTimeoutMs;
  }

  /** Route, retried like {@link classify} (a router replica draining or gone; routing is read-only). */
  route(request: routerV1.RouteRequest, signal?: AbortSignal, deadlineMs?: number): Promise<routerV1.RouteResponse> {
    const settings = { deadlineMs: deadlineMs ?? this.options.routerTimeoutMs, signal };
    return this.routeCalls.call(request, settings);
  }

  listModels(): Promise<routerV1.ListModelsResponse> {
    return callUnary(this.router.listModels, this.router, {}, { deadlineMs: this.options.routerTimeoutMs });
  }

  /**
   * Streams a Generate call as an async iterable of responses. Cancels the call when `signal`
   * aborts or the consumer stops iterating; fails with `inference_idle_timeout` when the worker
   * goes silent longer than the idle timeout.
   */
  async *generate(
    address: string,
    request: inferenceV1.GenerateRequest,
    signal?: AbortSignal,
  ): AsyncGenerator<inferenceV1.GenerateResponse> {
    const cancel = new AbortController();
    const source = this.generateSource(address, request, cancel.signal);
    const onAbort = () => cancel.abort(signal?.reason); // KEEP_ON_CANCEL goes on: the worker keeps the session
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let idle: NodeJS.Timeout | undefined;
    let idleError: DomainError | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        idleError = new DomainError(
          'inference_idle_timeout',
          `inference worker sent nothing for ${this.options.inferenceIdleTimeoutMs} ms`,
          GrpcStatus.DEADLINE_EXCEEDED,
          true,
        );
        cancel.abort();
      }, this.options.inferenceIdleTimeoutMs);
    };
    armIdle();
    try {
      for await (const message of source) {
        armIdle();
        yield message;
      }
    } catch (err) {
      throw idleError ?? fromGrpcError(err);
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', onAbort);
      cancel.abort(CALL_DONE);
    }
  }

  /** The worker's responses: on its multiplexed stream, or as a plain call to a worker without one. */
  private async *generateSource(
    address: string,
    request: inferenceV1.GenerateRequest,
    signal: AbortSignal,
  ): AsyncGenerator<inferenceV1.GenerateResponse> {
    const mux = this.workerMux(address);
    if (mux && !mux.unsupported) {
      let yielded = false;
      try {
        for await (const message of mux.stream(request, { deadlineMs: this.options.inferenceTimeoutMs, signal })) {
          yielded = true;
          yield message;
        }
        return;
      } catch (err) {
        if (yielded || !mux.unsupported) throw err; // a worker from before GenerateStream: a plain call
      }
    }
    const call: ClientReadableStream<inferenceV1.GenerateResponse> = this.worker(address).generate(request, {
      deadline: Date.now() + this.options.inferenceTimeoutMs,
    });
    const onAbort = () => call.cancel();
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      yield* call as AsyncIterable<inferenceV1.GenerateResponse>;
    } finally {
      signal.removeEventListener('abort', onAbort);
      call.cancel();
    }
  }

  /** Asks a worker to drop a session and what its call left in the prefix cache (best effort). */
  forgetSession(
    address: string,
    request: inferenceV1.ForgetSessionRequest,
  ): Promise<inferenceV1.ForgetSessionResponse> {
    const client = this.worker(address);
    return callUnary(client.forgetSession, client, request, { deadlineMs: this.options.routerTimeoutMs });
  }

  private worker(address: string): inferenceV1.InferenceServiceClient {
    if (this.closed) throw new DomainError('closed', 'backend clients are closed', GrpcStatus.UNAVAILABLE);
    let client = this.workers.get(address);
    if (!client) {
      client = createGrpcClient(inferenceV1.InferenceServiceClient, address, {}, this.options.internalToken);
      this.workers.set(address, client);
    }
    return client;
  }

  private workerMux(address: string): WorkerMux | undefined {
    if (!this.options.mux) return undefined;
    let mux = this.workerMuxes.get(address);
    if (!mux) {
      const client = this.worker(address);
      mux = new MuxClient(() => client.generateStream(), { streams: this.options.workerStreams ?? 4 });
      this.workerMuxes.set(address, mux);
    }
    return mux;
  }

  /** Closes every channel. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.safetyMux?.close();
    this.moderationMux?.close();
    this.routerMux?.close();
    for (const m of this.workerMuxes.values()) m.close();
    this.workerMuxes.clear();
    this.safety.close();
    this.router.close();
    for (const c of this.workers.values()) c.close();
    this.workers.clear();
  }
}

/** About the encoded size of a Classify request: its text (UTF-16 units, at most a third of its UTF-8 bytes off) and state. */
function classifyBytes(request: safetyV1.ClassifyRequest): number {
  let bytes = request.state.length;
  for (const item of request.items) bytes += item.text.length;
  return bytes;
}
