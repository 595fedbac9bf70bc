import { Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { responsesV1 } from '@fastloop/proto';
import { createGrpcClient, waitForClientReady } from '@fastloop/service-kit';
import { EventClock, TurnError, type TurnClient, type TurnResult } from './turn-client';

/**
 * The edge's gRPC bidi `fastloop.responses.v1.ResponsesService/Session`: one stream per rollout,
 * `{eventJson}` in, `{type, eventJson}` out (the type outside the JSON, so deltas are not parsed),
 * batched: the events one piece of work emits come as one message (`more`), as a WebSocket client
 * gets them in one read.
 */
export class GrpcTurnClient implements TurnClient {
  readonly mode = 'grpc' as const;
  private current: EventClock | undefined;
  private closed = false;

  private constructor(
    private readonly client: responsesV1.ResponsesServiceClient,
    private readonly call: ClientDuplexStream<responsesV1.SessionRequest, responsesV1.SessionResponse>,
  ) {
    call.on('data', (m: responsesV1.SessionResponse) => {
      for (const one of [m, ...m.more]) {
        const clock = this.current;
        if (clock && clock.onEvent(one.type, () => JSON.parse(one.eventJson))) this.current = undefined;
      }
    });
    call.on('error', (err) => this.current?.fail(err));
    call.on('end', () => this.current?.fail(new TurnError('grpc: the stream ended during a turn')));
  }

  /** Connects and opens the bidi stream with the Bearer key in metadata. */
  static async open(address: string, apiKey: string): Promise<GrpcTurnClient> {
    const client = createGrpcClient(responsesV1.ResponsesServiceClient, address);
    await waitForClientReady(client, 10_000);
    const md = new Metadata();
    md.set('authorization', `Bearer ${apiKey}`);
    md.set('x-fastloop-event-batch', 'true');
    return new GrpcTurnClient(client, client.session(md));
  }

  send(body: Record<string, unknown>): Promise<TurnResult> {
    if (this.current) throw new TurnError('grpc: a turn is already running on this stream');
    const clock = new EventClock(this.mode);
    const eventJson = JSON.stringify({ type: 'response.create', ...body });
    clock.sent(Buffer.byteLength(eventJson));
    this.current = clock;
    this.call.write({ eventJson });
    return clock.done;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.call.end();
    this.call.cancel();
    this.client.close();
  }
}
