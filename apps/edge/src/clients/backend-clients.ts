import { status as GrpcStatus, type ClientReadableStream } from '@grpc/grpc-js';
import { inferenceV1, routerV1, safetyV1 } from '@fastloop/proto';
import { callUnary, createGrpcClient, DomainError, fromGrpcError } from '@fastloop/service-kit';

export interface BackendClientOptions {
  safetyAddress: string;
  routerAddress: string;
  safetyTimeoutMs: number;
  routerTimeoutMs: number;
  inferenceTimeoutMs: number;
  inferenceIdleTimeoutMs: number;
  /** FASTLOOP_INTERNAL_TOKEN, sent on every call (safety, router and inference require it). */
  internalToken?: string;
}

/**
 * The edge's gRPC clients to safety, router and inference workers. Every call has a deadline;
 * failures surface as DomainErrors with the peer's stable code.
 */
export class BackendClients {
  private readonly safety: safetyV1.SafetyServiceClient;
  private readonly router: routerV1.RouterServiceClient;
  private readonly workers = new Map<string, inferenceV1.InferenceServiceClient>();
  private closed = false;

  constructor(private readonly options: BackendClientOptions) {
    this.safety = createGrpcClient(safetyV1.SafetyServiceClient, options.safetyAddress, {}, options.internalToken);
    this.router = createGrpcClient(routerV1.RouterServiceClient, options.routerAddress, {}, options.internalToken);
  }

  classify(request: safetyV1.ClassifyRequest, signal?: AbortSignal): Promise<safetyV1.ClassifyResponse> {
    return callUnary(this.safety.classify, this.safety, request, { deadlineMs: this.options.safetyTimeoutMs, signal });
  }

  route(request: routerV1.RouteRequest, signal?: AbortSignal): Promise<routerV1.RouteResponse> {
    return callUnary(this.router.route, this.router, request, { deadlineMs: this.options.routerTimeoutMs, signal });
  }

  listModels(): Promise<routerV1.ListModelsResponse> {
    return callUnary(this.router.listModels, this.router, {}, { deadlineMs: this.options.routerTimeoutMs });
  }

  /**
   * Streams a Generate call as an async iterable of responses. Cancels the call when `signal`
   * aborts or the consumer stops iterating; fails with `inference_idle_timeout` when the worker
   * goes silent longer than the idle timeout.
   */
  async *generate(address: string, request: inferenceV1.GenerateRequest, signal?: AbortSignal): AsyncGenerator<inferenceV1.GenerateResponse> {
    const client = this.worker(address);
    const call: ClientReadableStream<inferenceV1.GenerateResponse> = client.generate(request, {
      deadline: Date.now() + this.options.inferenceTimeoutMs,
    });
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    let idle: NodeJS.Timeout | undefined;
    let idleError: DomainError | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        idleError = new DomainError('inference_idle_timeout', `inference worker sent nothing for ${this.options.inferenceIdleTimeoutMs} ms`, GrpcStatus.DEADLINE_EXCEEDED, true);
        call.cancel();
      }, this.options.inferenceIdleTimeoutMs);
    };
    armIdle();
    try {
      for await (const message of call as AsyncIterable<inferenceV1.GenerateResponse>) {
        armIdle();
        yield message;
      }
    } catch (err) {
      throw idleError ?? fromGrpcError(err);
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', onAbort);
      call.cancel();
    }
  }

  /** Asks a worker to drop a session and what its call left in the prefix cache (best effort). */
  forgetSession(address: string, request: inferenceV1.ForgetSessionRequest): Promise<inferenceV1.ForgetSessionResponse> {
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

  /** Closes every channel. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.safety.close();
    this.router.close();
    for (const c of this.workers.values()) c.close();
    this.workers.clear();
  }
}

