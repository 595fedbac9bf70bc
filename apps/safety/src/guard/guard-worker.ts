import type { ClientReadableStream } from '@grpc/grpc-js';
import { inferenceV1 } from '@fastloop/proto';
import { createGrpcClient, fromGrpcError } from '@fastloop/service-kit';

/** What one guard Generate call returned. */
export interface GuardCompletion {
  readonly tokens: number[];
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /** Why the worker stopped: LENGTH below the requested limit means the context window was full. */
  readonly finishReason: inferenceV1.FinishReason;
}

/** The inference worker serving the guard model, through the same Generate protocol as the edge. */
export interface GuardWorker {
  generate(request: inferenceV1.GenerateRequest, deadlineMs: number): Promise<GuardCompletion>;
  close(): void;
}

/** A {@link GuardWorker} over gRPC. */
export class GrpcGuardWorker implements GuardWorker {
  private readonly client: inferenceV1.InferenceServiceClient;

  /** `internalToken`: the shared token inference workers require when internal auth is on. */
  constructor(address: string, internalToken?: string) {
    this.client = createGrpcClient(inferenceV1.InferenceServiceClient, address, {}, internalToken);
  }

  async generate(request: inferenceV1.GenerateRequest, deadlineMs: number): Promise<GuardCompletion> {
    const call: ClientReadableStream<inferenceV1.GenerateResponse> = this.client.generate(request, {
      deadline: Date.now() + deadlineMs,
    });
    const tokens: number[] = [];
    try {
      for await (const message of call as AsyncIterable<inferenceV1.GenerateResponse>) {
        const event = message.event;
        if (event?.$case === 'chunk') tokens.push(...event.value.tokens);
        else if (event?.$case === 'done')
          return {
            tokens,
            promptTokens: event.value.promptTokens,
            cachedTokens: event.value.cachedTokens,
            finishReason: event.value.finishReason,
          };
      }
    } catch (err) {
      throw fromGrpcError(err);
    } finally {
      call.cancel();
    }
    throw new Error('guard Generate stream ended without a result');
  }

  close(): void {
    this.client.close();
  }
}
