import { Metadata } from '@grpc/grpc-js';
import { responsesV1 } from '@fastloop/proto';
import { createGrpcClient } from '@fastloop/service-kit';
import { stackEnv } from './clients';

/**
 * A gRPC bidi session: write response.create events, read the same events WebSocket mode sends.
 * `metadata` is added to the call's (e.g. `x-responsesapi-include-timing-metrics`, or
 * `x-fastloop-event-batch`: then a message carries several events, `messages` counts them).
 */
export function openSession(key = stackEnv().key, metadata: Record<string, string> = {}) {
  const client = createGrpcClient(responsesV1.ResponsesServiceClient, stackEnv().grpc);
  const md = new Metadata();
  md.set('authorization', `Bearer ${key}`);
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  const call = client.session(md);
  const events: any[] = [];
  const waiters: (() => void)[] = [];
  let messages = 0;
  call.on('data', (m: responsesV1.SessionResponse) => {
    messages++;
    for (const one of [m, ...m.more]) {
      const e = JSON.parse(one.eventJson);
      expect(e.type).toBe(one.type);
      events.push(e);
    }
    waiters.splice(0).forEach((w) => w());
  });
  call.on('error', () => waiters.splice(0).forEach((w) => w()));
  const untilTerminal = async (from: number) => {
    for (;;) {
      const done = events.slice(from).find((e) => /^(response\.(completed|failed|incomplete)|error)$/.test(e.type));
      if (done) return events.slice(from, events.indexOf(done) + 1);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return {
    call,
    /** Messages received so far (each one event, unless batches were asked for). */
    get messages() {
      return messages;
    },
    async create(body: Record<string, unknown>) {
      const from = events.length;
      call.write({ eventJson: JSON.stringify({ type: 'response.create', ...body }) });
      return untilTerminal(from);
    },
    close() {
      call.end();
      client.close();
    },
  };
}
