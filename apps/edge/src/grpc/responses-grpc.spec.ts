import type { responsesV1 } from '@fastloop/proto';
import { serveGrpcSessions } from '../testing/grpc-session-server';

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ResponsesService/Session connection caps', () => {
  const grpc = serveGrpcSessions({ keys: 'sk-a:t1,sk-b:t2', maxPerTenant: 1 });
  const { limits } = grpc;

  const open = (key: string) => {
    const call = grpc.open(key);
    const failed = new Promise<{ code: number; details: string }>((resolve) => call.on('error', resolve));
    return { call, failed };
  };

  it('refuses a stream beyond the tenant’s cap with RESOURCE_EXHAUSTED, and frees the slot when a stream ends', async () => {
    const first = open('sk-a');
    first.call.write({
      eventJson: JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'hi', store: false }),
    });
    await new Promise((r) => first.call.once('data', r));
    expect(limits.count('t1')).toBe(1);
    const second = open('sk-a');
    expect(await second.failed).toMatchObject({
      code: 8,
      details: expect.stringContaining('EDGE_MAX_CONNECTIONS_PER_TENANT'),
    });
    const other = open('sk-b'); // another tenant is not affected
    other.call.write({
      eventJson: JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'hi', store: false }),
    });
    await new Promise((r) => other.call.once('data', r));
    first.call.cancel();
    await waitUntil(() => limits.count('t1') === 0);
    other.call.cancel();
    await waitUntil(() => limits.count() === 0);
  });
});

describe('ResponsesService/Session lifetime', () => {
  const { limits, open } = serveGrpcSessions({ maxConnectionMs: 300 });

  it('ends a stream at the connection lifetime limit, as WebSocket mode does: the running response finishes, then websocket_connection_limit_reached, then the end', async () => {
    const call = open();
    const events: { type: string; error?: { code?: string } }[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on('end', () => resolve());
      call.on('error', reject);
    });
    const create = () =>
      call.write({
        eventJson: JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'go', store: false }),
      });
    call.on('data', (msg: responsesV1.SessionResponse) => {
      events.push(JSON.parse(msg.eventJson));
      // Always more events queued behind the running one: the session is never idle.
      if (msg.type === 'response.completed' && !call.writableEnded) create();
    });
    for (let i = 0; i < 3; i++) create();
    await ended;
    const errors = events.filter((e) => e.type === 'error');
    expect(errors).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: 'websocket_connection_limit_reached' }) }),
    ]);
    const last = events.findIndex((e) => e.type === 'error');
    expect(last).toBe(events.length - 1);
    expect(events[last - 1].type).toBe('response.completed');
    await waitUntil(() => limits.count() === 0);
  });
});

describe('ResponsesService/Session lanes', () => {
  const { limits, backends, open } = serveGrpcSessions({ maxPerTenant: 1 });

  it('runs lanes through the same core: events echo stream_id, and a lane over the tenant’s cap is refused by name', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    backends.chunkGate = (call) => (call === 0 ? held : Promise.resolve());
    const call = open();
    const events: any[] = [];
    call.on('data', (msg: responsesV1.SessionResponse) => events.push(JSON.parse(msg.eventJson)));
    call.on('error', () => undefined); // CANCELLED, from our own cancel() below
    const create = (streamId: string) =>
      call.write({
        eventJson: JSON.stringify({
          type: 'response.create',
          stream_id: streamId,
          model: 'fake-model',
          input: 'hi',
          store: false,
        }),
      });
    create('a');
    await waitUntil(() => backends.generateCalls.length === 1);
    create('b'); // the connection holds the tenant's only slot: a second lane running beside it is over the cap
    await waitUntil(() => events.some((e) => e.type === 'error'));
    expect(events.find((e) => e.type === 'error')).toMatchObject({
      stream_id: 'b',
      error: { code: 'too_many_connections', message: expect.stringContaining('EDGE_MAX_CONNECTIONS_PER_TENANT') },
    });
    release();
    await waitUntil(() => events.some((e) => e.type === 'response.completed'));
    expect(events.filter((e) => e.type !== 'error').every((e) => e.stream_id === 'a')).toBe(true);
    call.cancel();
    await waitUntil(() => limits.count() === 0);
  });

  it('interrupts and steers through the same core: incomplete/interrupted, then a steered successor', async () => {
    backends.chunkGate = undefined;
    backends.scriptEntries = undefined;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = backends.generateCalls.length;
    backends.chunkGate = (call, chunk) => (call === first && chunk >= 1 ? held : Promise.resolve());
    const call = open();
    const events: any[] = [];
    call.on('data', (msg: responsesV1.SessionResponse) => events.push(JSON.parse(msg.eventJson)));
    call.on('error', () => undefined); // CANCELLED, from our own cancel() below
    const send = (event: Record<string, unknown>) => call.write({ eventJson: JSON.stringify(event) });
    send({ type: 'response.create', model: 'fake-model', input: 'hi', store: false });
    await waitUntil(() => events.some((e) => e.type === 'response.created'));
    const id = events.find((e) => e.type === 'response.created').response.id;
    send({ type: 'response.interrupt', response_id: id, mode: 'discard_partial_items' });
    await waitUntil(() => events.some((e) => e.type === 'response.incomplete'));
    expect(events.find((e) => e.type === 'response.incomplete').response.incomplete_details).toEqual({
      reason: 'interrupted',
    });
    release();
    const second = backends.generateCalls.length;
    let releaseSecond!: () => void;
    const heldSecond = new Promise<void>((r) => (releaseSecond = r));
    backends.chunkGate = (c, chunk) => (c === second && chunk >= 1 ? heldSecond : Promise.resolve());
    send({ type: 'response.create', model: 'fake-model', input: 'again', store: false, previous_response_id: id });
    await waitUntil(() => events.filter((e) => e.type === 'response.created').length === 2);
    const running = events.filter((e) => e.type === 'response.created')[1].response.id;
    send({ type: 'response.steer', previous_response_id: running, input: 'shorter' });
    await waitUntil(() => events.some((e) => e.type === 'response.steer.accepted'));
    releaseSecond();
    await waitUntil(() => events.filter((e) => e.type === 'response.created').length === 3);
    await waitUntil(() => events.at(-1).type === 'response.completed');
    expect(events.at(-1).response.previous_response_id).toBe(running);
    call.cancel();
    await waitUntil(() => limits.count() === 0);
  });
});
