import type { responsesV1 } from '@fastloop/proto';
import { serveGrpcSessions } from '../testing/grpc-session-server';
import { EVENT_BATCH_HEADER } from './responses-grpc';

const TERMINAL = /^(response\.(completed|failed|incomplete)|error)$/;

/** A server with the gRPC session (the connection lifetime `maxConnectionMs`) and a client of it. */
function serve(maxConnectionMs?: number) {
  const grpc = serveGrpcSessions({ maxConnectionMs });
  /** Opens a session (asking for batches when `batched`): the call and every message it gets. */
  const open = (batched: boolean) => {
    const call = grpc.open('sk-a', batched ? { [EVENT_BATCH_HEADER]: 'true' } : {});
    const messages: responsesV1.SessionResponse[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on('end', () => resolve());
      call.on('error', reject);
    });
    call.on('data', (msg: responsesV1.SessionResponse) => messages.push(msg));
    return { call, messages, ended };
  };
  return { limits: grpc.limits, open };
}

const eventsOf = (messages: responsesV1.SessionResponse[]) =>
  messages
    .flatMap((m) => [m, ...m.more])
    .map((e) => {
      const event = JSON.parse(e.eventJson);
      expect(event.type).toBe(e.type);
      return event;
    });

describe('ResponsesService/Session event batches', () => {
  const { limits, open } = serve();

  /** Runs `turns` turns on one stream (each a continuation of the last) and ends it: every message it got. */
  async function session(batched: boolean, turns: number): Promise<responsesV1.SessionResponse[]> {
    const { call, messages, ended } = open(batched);
    let done = 0;
    const create = (previous?: string) =>
      call.write({
        eventJson: JSON.stringify({
          type: 'response.create',
          model: 'fake-model',
          input: `turn ${done}`,
          store: false,
          ...(previous ? { previous_response_id: previous } : {}),
        }),
      });
    call.on('data', (msg: responsesV1.SessionResponse) => {
      const last = msg.more.at(-1) ?? msg;
      if (!TERMINAL.test(last.type)) return;
      if (++done < turns) create(JSON.parse(last.eventJson).response.id);
      else call.end();
    });
    create();
    await ended;
    return messages;
  }

  it('sends a batching client the same events as one message per piece of work, and any other client one event per message', async () => {
    const single = await session(false, 3);
    const batched = await session(true, 3);
    expect(single.every((m) => m.more.length === 0)).toBe(true);
    const types = (messages: responsesV1.SessionResponse[]) => eventsOf(messages).map((e) => e.type);
    expect(types(batched)).toEqual(types(single));
    expect(types(batched).filter((t) => t === 'response.completed')).toHaveLength(3);
    // created with in_progress, an item's done events with the terminal event: fewer messages than events.
    expect(batched.length).toBeLessThan(types(batched).length);
    expect(batched.some((m) => m.type === 'response.created' && m.more[0]?.type === 'response.in_progress')).toBe(true);
    await new Promise<void>((resolve) => {
      const check = () => (limits.count() === 0 ? resolve() : setTimeout(check, 10));
      check();
    });
  });
});

describe('ResponsesService/Session event batches at the lifetime limit', () => {
  const { open } = serve(200);

  it('writes a batch still open when the stream ends before ending it (the lifetime limit’s error is the last event)', async () => {
    const { messages, ended } = open(true);
    await ended; // idle past maxConnectionMs: the session ends with its error event
    expect(eventsOf(messages).map((e) => e.error?.code)).toEqual(['websocket_connection_limit_reached']);
  });
});
