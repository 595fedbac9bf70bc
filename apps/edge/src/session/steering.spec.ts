import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { ResponsesSession } from './responses-session';
import { ConnectionStateCache, StateCacheBudget } from './state-cache';

function open(maxPendingSteers?: number) {
  const backends = new FakeBackends();
  const { deps } = fakeDeps(backends);
  const events: any[] = [];
  const cache = new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28);
  const session = new ResponsesSession({
    deps,
    principal: { tenant: 't', keyId: 'k' },
    transport: 'websocket',
    cache,
    send: (e) => events.push(e),
    logger: deps.logger,
    maxQueued: 4,
    maxPendingSteers,
  });
  const send = (event: Record<string, unknown>) => session.receive(JSON.stringify(event));
  const create = (body: Record<string, unknown> = {}) =>
    send({
      type: 'response.create',
      model: 'fake-model',
      store: false,
      input: 'plan the project',
      instructions: 'Be brief.',
      temperature: 0.3,
      ...body,
    });
  /** Holds call `call` before its chunk 1 until the returned function is called. */
  const hold = (call = 0) => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    backends.chunkGate = (c, chunk) => (c === call && chunk >= 1 ? held : Promise.resolve());
    return () => release();
  };
  return { session, events, send, create, backends, cache, hold };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

const ofType = (events: any[], type: string) => events.filter((e) => e.type === type);
const steerTexts = (s: ReturnType<typeof open>, responseId: string) =>
  s.cache
    .get(responseId)!
    .items.slice()
    .filter((i: any) => i.type === 'message' && i.role === 'user')
    .map((i: any) => i.content);

describe('response.steer', () => {
  it('acknowledges steering, ends the response at a safe boundary as steered, and commits it once in an automatic successor', async () => {
    const s = open();
    s.backends.scriptEntries = (call) =>
      call === 0
        ? [
            { kind: 'reasoning', text: 'Thinking about the whole plan first.' },
            { kind: 'message', role: 'assistant', text: 'A plan for a year of work.' },
          ]
        : [{ kind: 'message', role: 'assistant', text: 'A two-week plan.' }];
    const release = s.hold();
    s.create();
    await until(() => ofType(s.events, 'response.created').length === 1);
    const parent = s.events[0].response.id;
    s.send({ type: 'response.steer', previous_response_id: parent, input: 'Two weeks, one developer.' });
    const [accepted] = ofType(s.events, 'response.steer.accepted');
    expect(accepted).toMatchObject({ steer: { id: expect.stringMatching(/^steer_/), previous_response_id: parent } });
    release();
    await s.session.whenIdle();
    const [steered, next] = s.events.filter((e) => /^response\.(completed|incomplete)$/.test(e.type));
    expect(steered).toMatchObject({
      type: 'response.incomplete',
      response: { incomplete_details: { reason: 'steered' } },
    });
    // Whole items only: the response stopped between items, not inside one.
    expect(steered.response.output.every((i: any) => i.status === undefined || i.status === 'completed')).toBe(true);
    expect(steered.response.output.map((i: any) => i.type)).toEqual(['reasoning']);
    // The successor inherits the settings, chains from the steered response and carries the input once.
    expect(next.type).toBe('response.completed');
    expect(next.response).toMatchObject({ previous_response_id: parent, instructions: 'Be brief.', temperature: 0.3 });
    expect(steerTexts(s, next.response.id)).toEqual(['plan the project', 'Two weeks, one developer.']);
    // The worker goes on from the steered session (its call was cancelled with keep): only the
    // steered input is prefilled, with no prefix_miss retry.
    const call = s.backends.generateCalls[1];
    expect(call.parentSessionKey).toBe(parent);
    expect(call.prefixLen).toBeGreaterThan(0);
    expect(s.backends.generateCalls).toHaveLength(2);
    expect(ofType(s.events, 'response.created')).toHaveLength(2);
  });

  it('keeps steering waiting when the response stops for tool output (pending with required_input), and prepends it to the continuation', async () => {
    const s = open();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // Held once the tool call is being written: steering arrives mid-item.
    s.backends.chunkGate = (call) =>
      call === 0 && ofType(s.events, 'response.output_item.added').length > 0 ? held : Promise.resolve();
    s.create(); // the fake model calls read_file
    await until(() => ofType(s.events, 'response.output_item.added').length === 1);
    const parent = s.events[0].response.id;
    s.send({ type: 'response.steer', previous_response_id: parent, input: [{ role: 'user', content: 'Only src/.' }] });
    release();
    await s.session.whenIdle();
    const [pending] = ofType(s.events, 'response.steer.pending');
    const call = s.events.find((e) => e.type === 'response.output_item.done').item;
    expect(pending).toMatchObject({
      reason: 'waiting_for_required_input',
      required_input: [{ type: 'function_call_output', call_id: call.call_id }],
      steer: { previous_response_id: parent },
    });
    expect(ofType(s.events, 'response.created')).toHaveLength(1); // no automatic successor
    s.create({
      previous_response_id: parent,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'x' }],
    });
    await s.session.whenIdle();
    const next = s.events[s.events.length - 1];
    expect(next.type).toBe('response.completed');
    expect(steerTexts(s, next.response.id)).toEqual(['plan the project', 'Only src/.']);
  });

  it('hands steering back with response.steer.failed when it cannot be taken, naming why', async () => {
    const s = open();
    s.send({ type: 'response.steer', previous_response_id: 'resp_nope', input: 'x' });
    s.send({ type: 'response.steer', previous_response_id: 'resp_nope', input: [{ role: 'assistant', content: 'x' }] });
    s.create();
    await s.session.whenIdle();
    const done = s.events.find((e) => e.type === 'response.completed').response.id;
    s.send({ type: 'response.steer', previous_response_id: done, input: 'late' });
    const failed = ofType(s.events, 'response.steer.failed');
    expect(failed.map((e) => e.error.code)).toEqual([
      'response_not_found',
      'invalid_input',
      'response_already_completed',
    ]);
    expect(failed[0].steer).toEqual({ previous_response_id: 'resp_nope', input: 'x' }); // no id: never accepted
    expect(failed[2].steer.input).toBe('late');
  });

  it('fails accepted steering with its id when the response is interrupted instead', async () => {
    const s = open();
    const release = s.hold();
    s.create();
    await until(() => ofType(s.events, 'response.created').length === 1);
    const parent = s.events[0].response.id;
    s.send({ type: 'response.steer', previous_response_id: parent, input: 'x' });
    s.send({ type: 'response.interrupt', response_id: parent, mode: 'discard_partial_items' });
    release();
    await s.session.whenIdle();
    const [accepted] = ofType(s.events, 'response.steer.accepted');
    expect(ofType(s.events, 'response.steer.failed')).toEqual([
      expect.objectContaining({
        steer: expect.objectContaining({ id: accepted.steer.id }),
        error: expect.objectContaining({ code: 'response_not_active' }),
      }),
    ]);
    expect(ofType(s.events, 'response.created')).toHaveLength(1);
  });

  it('commits several steers once, in order, in one successor', async () => {
    const s = open();
    s.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'ok' });
    const release = s.hold();
    s.create();
    await until(() => ofType(s.events, 'response.created').length === 1);
    const parent = s.events[0].response.id;
    for (const text of ['first', 'second'])
      s.send({ type: 'response.steer', previous_response_id: parent, input: text });
    release();
    await s.session.whenIdle();
    const created = ofType(s.events, 'response.created');
    expect(created).toHaveLength(2);
    const successor = s.events[s.events.length - 1].response.id;
    expect(steerTexts(s, successor)).toEqual(['plan the project', 'first', 'second']);
  });

  it('commits nothing when the connection drops before the successor is created (the client resends it)', async () => {
    const s = open();
    const release = s.hold();
    s.create();
    await until(() => ofType(s.events, 'response.created').length === 1);
    s.send({ type: 'response.steer', previous_response_id: s.events[0].response.id, input: 'x' });
    const seen = s.events.length;
    s.session.close(); // the socket is gone
    release();
    await s.session.whenIdle();
    expect(s.backends.generateCalls).toHaveLength(1); // no successor reached a worker
    expect(s.events).toHaveLength(seen); // nothing more was sent
  });

  it('starts no successor on a draining connection: the accepted input is handed back with its id', async () => {
    const s = open();
    const release = s.hold();
    s.create();
    await until(() => ofType(s.events, 'response.created').length === 1);
    s.send({ type: 'response.steer', previous_response_id: s.events[0].response.id, input: 'x' });
    const drained = s.session.finishCurrent();
    release();
    await drained;
    const [accepted] = ofType(s.events, 'response.steer.accepted');
    expect(ofType(s.events, 'response.steer.failed')).toEqual([
      expect.objectContaining({ steer: expect.objectContaining({ id: accepted.steer.id, input: 'x' }) }),
    ]);
    expect(ofType(s.events, 'response.created')).toHaveLength(1);
  });

  it('stops a response steered before its first token at once (nothing is open), and starts the successor', async () => {
    const s = open();
    s.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'ok' });
    const forever = new Promise<void>(() => undefined);
    s.backends.chunkGate = (call) => (call === 0 ? forever : Promise.resolve()); // no token ever comes
    s.create();
    await until(() => ofType(s.events, 'response.created').length === 1);
    s.send({ type: 'response.steer', previous_response_id: s.events[0].response.id, input: 'x' });
    await s.session.whenIdle();
    const [steered, next] = s.events.filter((e) => /^response\.(completed|incomplete)$/.test(e.type));
    expect(steered.response).toMatchObject({ incomplete_details: { reason: 'steered' }, output: [] });
    expect(next.type).toBe('response.completed');
  });

  it('refuses steering over EDGE_WS_MAX_PENDING_STEERS for one response, handing the input back', async () => {
    const s = open(1);
    const release = s.hold();
    s.create();
    await until(() => ofType(s.events, 'response.created').length === 1);
    const parent = s.events[0].response.id;
    for (const input of ['one', 'two']) s.send({ type: 'response.steer', previous_response_id: parent, input });
    expect(ofType(s.events, 'response.steer.failed')).toEqual([
      expect.objectContaining({
        steer: { previous_response_id: parent, input: 'two' },
        error: expect.objectContaining({
          code: 'too_many_pending_steers',
          message: expect.stringContaining('EDGE_WS_MAX_PENDING_STEERS'),
        }),
      }),
    ]);
    release();
    await s.session.whenIdle();
  });
});
