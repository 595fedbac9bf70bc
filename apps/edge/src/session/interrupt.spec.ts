import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { ResponsesSession } from './responses-session';
import { ConnectionStateCache, StateCacheBudget } from './state-cache';

function open(moderated = false) {
  const backends = new FakeBackends();
  const { deps, usage } = fakeDeps(backends);
  if (moderated) deps.outputModeration = { flushMs: 0, flushChars: 8 };
  const events: any[] = [];
  const session = new ResponsesSession({
    deps,
    principal: { tenant: 't', keyId: 'k' },
    transport: 'websocket',
    cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28),
    send: (e) => events.push(e),
    logger: deps.logger,
    maxQueued: 4,
  });
  const send = (event: Record<string, unknown>) => session.receive(JSON.stringify(event));
  const create = (body: Record<string, unknown> = {}) =>
    send({ type: 'response.create', model: 'fake-model', store: false, input: 'hi', ...body });
  return { session, events, send, create, backends, usage };
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
  expect(check()).toBe(true);
}

/** The model thinks, then starts an answer it never finishes: the stream holds after the first text. */
function thinkThenHoldAnswer(s: ReturnType<typeof open>): void {
  s.backends.scriptEntries = () => [
    { kind: 'reasoning', text: 'Let me think about it.' },
    { kind: 'message', role: 'assistant', text: 'The answer is a long one that never ends on its own.' },
  ];
  const forever = new Promise<void>(() => undefined);
  s.backends.chunkGate = (call) =>
    call === 0 && s.events.some((e) => e.type === 'response.output_text.delta') ? forever : Promise.resolve();
}

describe('response.interrupt', () => {
  it('ends the running response at once as incomplete/interrupted, without its partial item, and cancels Generate', async () => {
    const s = open();
    thinkThenHoldAnswer(s);
    s.create();
    await until(() => s.events.some((e) => e.type === 'response.output_text.delta'));
    const id = s.events[0].response.id;
    s.send({ type: 'response.interrupt', response_id: id, mode: 'discard_partial_items' });
    await s.session.whenIdle();
    const last = s.events[s.events.length - 1];
    expect(last.type).toBe('response.incomplete');
    expect(last.response.incomplete_details).toEqual({ reason: 'interrupted' });
    expect(last.response.output.map((i: any) => i.type)).toEqual(['reasoning']);
    expect(last.response.usage.output_tokens).toBeGreaterThan(0);
    expect(s.backends.openGenerateStreams).toBe(0); // the worker's call was cancelled, its slot freed
    await until(() => s.usage.length === 1); // billed for what it sampled
  });

  it('ends an interrupted response whose output is moderated only once its held text is judged (no write after the end)', async () => {
    const s = open(true);
    const classify = s.backends.classify.bind(s.backends);
    // Slow verdicts: one is still in flight when the interrupt comes.
    s.backends.classify = async (req) => {
      await new Promise((r) => setTimeout(r, 20));
      return classify(req);
    };
    const failures: unknown[] = [];
    const onFailure = (err: unknown) => failures.push(err);
    process.on('unhandledRejection', onFailure);
    try {
      s.backends.scriptEntries = () => [{ kind: 'message', role: 'assistant', text: 'word '.repeat(200) }];
      // Held well inside the answer; its released text trails behind, behind the slow verdicts.
      const forever = new Promise<void>(() => undefined);
      s.backends.chunkGate = (call, chunk) => (call === 0 && chunk >= 40 ? forever : Promise.resolve());
      s.create();
      await until(() => s.events.some((e) => e.type === 'response.output_text.delta'));
      s.send({ type: 'response.interrupt', response_id: s.events[0].response.id, mode: 'discard_partial_items' });
      await s.session.whenIdle();
      await new Promise((r) => setTimeout(r, 100));
      expect(s.events[s.events.length - 1].type).toBe('response.incomplete');
      expect(failures).toEqual([]);
    } finally {
      process.off('unhandledRejection', onFailure);
    }
  });

  it('lets the socket serve the next turn, continuing from the interrupted response without its partial item', async () => {
    const s = open();
    thinkThenHoldAnswer(s);
    s.create();
    await until(() => s.events.some((e) => e.type === 'response.output_text.delta'));
    const id = s.events[0].response.id;
    s.send({ type: 'response.interrupt', response_id: id, mode: 'discard_partial_items' });
    await s.session.whenIdle();
    s.backends.chunkGate = undefined;
    s.backends.scriptEntries = undefined;
    const from = s.events.length;
    s.create({ previous_response_id: id, input: 'shorter, please' });
    await s.session.whenIdle();
    const next = s.events[s.events.length - 1];
    expect(s.events.slice(from).filter((e) => e.type === 'error')).toEqual([]);
    expect(next).toMatchObject({ type: 'response.completed', response: { previous_response_id: id } });
    // The worker goes on from the interrupted session (its call was cancelled with keep), up to where
    // the discarded item began: no whole prompt again, no prefix_miss retry.
    expect(s.backends.generateCalls[1].parentSessionKey).toBe(id);
    expect(s.backends.generateCalls[1].prefixLen).toBeGreaterThan(0);
    expect(s.backends.generateCalls).toHaveLength(2);
  });

  it('ignores an interrupt of a response that already ended, and one of a lane it names', async () => {
    const s = open();
    s.create({ stream_id: 'a' });
    await s.session.whenIdle();
    const count = s.events.length;
    const id = s.events[0].response.id;
    s.send({ type: 'response.interrupt', response_id: id, mode: 'discard_partial_items', stream_id: 'a' });
    expect(s.events).toHaveLength(count);
  });

  it('refuses an interrupt without response_id or with another mode, naming the field, and keeps serving', async () => {
    const s = open();
    s.send({ type: 'response.interrupt', mode: 'discard_partial_items' });
    s.send({ type: 'response.interrupt', response_id: 'resp_1', mode: 'keep_partial_items' });
    expect(s.events.map((e) => [e.type, e.error.param])).toEqual([
      ['error', 'response_id'],
      ['error', 'mode'],
    ]);
  });
});

describe('acknowledgements and unknown events', () => {
  it('accepts response.processed silently', () => {
    const s = open();
    s.send({ type: 'response.processed', response_id: 'resp_1' });
    expect(s.events).toEqual([]);
  });

  it('answers an event fastloop does not implement with an error naming it, and keeps serving', async () => {
    const s = open();
    s.send({ type: 'response.inject', input: 'x' });
    expect(s.events).toEqual([
      expect.objectContaining({
        type: 'error',
        error: expect.objectContaining({ param: 'type', message: expect.stringContaining("'response.inject'") }),
      }),
    ]);
    s.create();
    await s.session.whenIdle();
    expect(s.events[s.events.length - 1].type).toBe('response.completed');
  });
});
