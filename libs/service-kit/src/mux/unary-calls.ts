import type { Client } from '@grpc/grpc-js';
import { ErrorCode } from '../error-codes';
import { callUnary } from '../grpc-client';
import { DomainError } from '../grpc-errors';
import type { MuxCallSettings, MuxClient } from './mux-client';

type UnaryMethod<Req, Res> = Parameters<typeof callUnary<Req, Res>>[0];

/**
 * One unary RPC of a peer, over its multiplexed streams (`mux`) or as a gRPC call of its own. A
 * peer that predates the stream method answers UNIMPLEMENTED once: the mux is then `unsupported`
 * and this call and every later one go plain.
 */
export class UnaryCalls<Req, Res> {
  constructor(
    private readonly mux: MuxClient<Req, Res> | undefined,
    private readonly method: UnaryMethod<Req, Res>,
    private readonly client: Client,
  ) {}

  /**
   * The call, retried when an attempt fails with a retryable transport-level error (`unavailable`:
   * the peer is draining, gone, or refused the connection) and the caller has not given up: up to 3
   * more times, after a short pause that grows (20, 40, 60 ms). A draining pod ends all of its idle
   * multiplexed streams at once: the pause lets those ends arrive, so the retry opens a new stream
   * (which the channel's balancer sends to another replica) rather than meeting the next one that
   * is ending. A deadline is not retried: the time budget is spent. `plainOnly`: a bulk request,
   * which takes an HTTP/2 stream of its own so that no other call queues behind its bytes.
   */
  async call(request: Req, settings: MuxCallSettings, plainOnly = false): Promise<Res> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(request, settings, plainOnly);
      } catch (err) {
        const retry = err instanceof DomainError && err.code === ErrorCode.unavailable;
        if (!retry || settings.signal?.aborted || attempt === 3) throw err;
        await new Promise((r) => setTimeout(r, 20 * (attempt + 1)));
      }
    }
  }

  private async once(request: Req, settings: MuxCallSettings, plainOnly: boolean): Promise<Res> {
    const mux = this.mux;
    if (mux && !mux.unsupported && !plainOnly) {
      try {
        return await mux.unary(request, settings);
      } catch (err) {
        if (!mux.unsupported) throw err;
      }
    }
    return callUnary(this.method, this.client, request, settings);
  }
}
