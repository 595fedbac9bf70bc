import { EventEmitter } from 'node:events';
import { responsesV1 } from '@fastloop/proto';
import { ApiKeyAuth } from '../auth';
import { QueuedBytes } from '../session/queued-bytes';
import { StateCacheBudget } from '../session/state-cache';
import { fakeDeps } from '../testing/fake-deps';
import { responsesGrpcService } from './responses-grpc';
import { decodeSessionRequestBytes } from './session-request-bytes';

/** A client's message as the server's deserializer hands it to the service: encoded, then read back. */
const request = (eventJson: string) =>
  decodeSessionRequestBytes(Buffer.from(responsesV1.SessionRequest.encode({ eventJson }).finish()));

/** The parts of a grpc-js ServerDuplexStream the transport uses, recording what it writes. */
class FakeCall extends EventEmitter {
  readonly written: responsesV1.SessionResponse[] = [];
  readonly metadata = { get: (key: string) => (key === 'authorization' ? ['Bearer sk-test'] : []) };
  writableEnded = false;
  destroyed = false;
  writableLength = 0;
  write(msg: responsesV1.SessionResponse): boolean {
    this.written.push(msg);
    return true;
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function open(maxPayloadBytes: number, queuedBytes?: QueuedBytes) {
  const { deps } = fakeDeps();
  const service = responsesGrpcService({
    deps,
    auth: new ApiKeyAuth('sk-test'),
    budget: new StateCacheBudget(1 << 30, deps.metrics),
    connectionCacheBytes: 1 << 26,
    maxQueued: 4,
    maxBufferedBytes: 1 << 24,
    maxPayloadBytes,
    queuedBytes,
  });
  const call = new FakeCall();
  (service.implementation as unknown as { session(call: FakeCall): void }).session(call);
  return call;
}

const events = (call: FakeCall) => call.written.map((m) => JSON.parse(m.eventJson));

describe('ResponsesService over gRPC', () => {
  it('refuses an event larger than the HTTP/WebSocket limit with payload_too_large and keeps the stream', async () => {
    const call = open(4096);
    const big = JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'é'.repeat(3000) }); // 6 KB in UTF-8
    call.emit('data', request(big));
    expect(events(call)).toEqual([
      expect.objectContaining({
        type: 'error',
        status: 413,
        error: expect.objectContaining({ code: 'payload_too_large' }),
      }),
    ]);
    call.emit(
      'data',
      request(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'hi', store: false })),
    );
    for (let i = 0; i < 200 && !events(call).some((e) => e.type === 'response.completed'); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(events(call).map((e) => e.type)).toContain('response.completed');
    call.emit('cancelled');
  });

  it('hands the session the bytes received, so an event over the queued-bytes bound is refused undecoded', async () => {
    const queued = new QueuedBytes({ perConnection: 100 * 1024, perTenant: 1 << 30, perProcess: 1 << 30 });
    const call = open(1 << 20, queued);
    const decoded: number[] = [];
    const text = JSON.stringify({
      type: 'response.create',
      model: 'fake-model',
      store: false,
      input: 'x'.repeat(30_000),
    });
    for (let i = 0; i < 5; i++) {
      const msg = request(text);
      const toString = msg.eventJson.toString.bind(msg.eventJson);
      Object.assign(msg.eventJson, { toString: () => (decoded.push(i), toString()) });
      call.emit('data', msg);
    }
    for (let i = 0; i < 200 && events(call).filter((e) => e.type === 'response.completed').length < 3; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(
      events(call)
        .filter((e) => e.type === 'error')
        .map((e) => e.error.code),
    ).toEqual(['too_many_queued_bytes', 'too_many_queued_bytes']);
    expect(decoded).toEqual([0, 1, 2]);
    expect(queued.held()).toBe(0);
    call.emit('cancelled');
  });

  it('applies the same request limits as HTTP and WebSocket', () => {
    const call = open(1 << 20);
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 1_500; i++) schema = { type: 'object', properties: { a: schema } };
    call.emit(
      'data',
      request(
        JSON.stringify({
          type: 'response.create',
          model: 'fake-model',
          tools: [{ type: 'function', name: 'f', parameters: schema }],
        }),
      ),
    );
    expect(events(call)).toEqual([
      expect.objectContaining({
        type: 'error',
        status: 400,
        error: expect.objectContaining({ code: 'schema_too_deep', param: 'tools[0].parameters' }),
      }),
    ]);
    call.emit('cancelled');
  });
});
