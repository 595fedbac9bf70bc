import fc from 'fast-check';
import type { ConversationEntry } from '@fastloop/model-profiles';
import { ApiError } from '@fastloop/protocol';
import { DomainError } from '@fastloop/service-kit';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import type { LaneLimits } from './lanes';
import { ResponsesSession } from './responses-session';
import { ConnectionStateCache, StateCacheBudget } from './state-cache';

/** An answer that depends on the prompt alone: the same conversation gets the same answers, however interleaved. */
const answerTo = (prompt: readonly number[]): ConversationEntry => ({
  kind: 'message',
  role: 'assistant',
  text: `seen ${prompt.length} tokens`,
});

function open(options: { lanes?: LaneLimits; acquireLaneSlot?: () => (() => void) | ApiError } = {}) {
  const backends = new FakeBackends();
  backends.respond = answerTo;
  const { deps, registry } = fakeDeps(backends);
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
    ...options,
  });
  const send = (event: Record<string, unknown>) => session.receive(JSON.stringify(event));
  const create = (body: Record<string, unknown>) =>
    send({ type: 'response.create', model: 'fake-model', store: false, input: 'hi', ...body });
  return { session, events, send, create, backends, cache, registry };
}

const terminals = (events: any[]) => events.filter((e) => /^response\.(completed|incomplete|failed)$/.test(e.type));
const errors = (events: any[]) => events.filter((e) => e.type === 'error');
/** Resolves once `check` holds, polling the event loop (the fake streams through microtasks). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}
/** A gate that holds call `held` before its chunk `at` until `release()`. */
function holdCall(backends: FakeBackends, held: number, at = 0) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  backends.chunkGate = (call, chunk) => (call === held && chunk >= at ? gate : Promise.resolve());
  return () => release();
}

describe('ResponsesSession lanes (stream_id)', () => {
  it('echoes stream_id on every event of a named lane and none on the default lane', async () => {
    const s = open();
    s.create({ stream_id: 'agent.1' });
    await s.session.whenIdle();
    expect(s.events.length).toBeGreaterThan(3);
    expect(s.events.every((e) => e.stream_id === 'agent.1')).toBe(true);
    const from = s.events.length;
    s.create({});
    await s.session.whenIdle();
    expect(s.events.slice(from).some((e) => 'stream_id' in e)).toBe(false);
  });

  it('runs lanes side by side: a held lane does not delay another', async () => {
    const s = open();
    const release = holdCall(s.backends, 0);
    s.create({ stream_id: 'slow' });
    s.create({ stream_id: 'fast' });
    await until(() => terminals(s.events).length === 1);
    expect(terminals(s.events)[0].stream_id).toBe('fast');
    release();
    await s.session.whenIdle();
    expect(terminals(s.events).map((e) => e.stream_id)).toEqual(['fast', 'slow']);
  });

  it('runs one lane first in, first out: the second response starts after the first ends', async () => {
    const s = open();
    s.create({ stream_id: 'x', input: 'one' });
    s.create({ stream_id: 'x', input: 'two' });
    await s.session.whenIdle();
    const order = s.events.filter((e) => e.type === 'response.created' || e.type === 'response.completed');
    expect(order.map((e) => e.type)).toEqual([
      'response.created',
      'response.completed',
      'response.created',
      'response.completed',
    ]);
  });

  it('refuses a malformed stream_id with invalid_stream_id and keeps serving', async () => {
    const s = open();
    s.create({ stream_id: 'no spaces' });
    s.create({ stream_id: 'x'.repeat(257) });
    expect(errors(s.events).map((e) => [e.error.code, e.error.param])).toEqual([
      ['invalid_stream_id', 'stream_id'],
      ['invalid_stream_id', 'stream_id'],
    ]);
    s.create({ stream_id: 'ok' });
    await s.session.whenIdle();
    expect(terminals(s.events)).toHaveLength(1);
  });

  it('refuses a lane over the named-stream limit while every lane is busy, naming it, and reuses idle lanes', async () => {
    const s = open({ lanes: { maxActive: 16, maxStreams: 2 } });
    const release = holdCall(s.backends, 0);
    s.create({ stream_id: 'a' });
    await until(() => s.backends.generateCalls.length === 1);
    s.create({ stream_id: 'b' });
    s.create({ stream_id: 'c' });
    const [err] = errors(s.events);
    expect(err).toMatchObject({ stream_id: 'c', error: { code: 'too_many_streams', param: 'stream_id' } });
    expect(err.error.message).toContain("'c'");
    await until(() => terminals(s.events).length === 1); // b done, idle: c may take its place
    s.create({ stream_id: 'c' });
    release();
    await s.session.whenIdle();
    expect(terminals(s.events).map((e) => e.stream_id)).toEqual(['b', 'a', 'c']);
  });

  it('refuses a response over the active-response limit, naming its stream', async () => {
    const s = open({ lanes: { maxActive: 1, maxStreams: 32 } });
    const release = holdCall(s.backends, 0);
    s.create({ stream_id: 'a' });
    s.create({ stream_id: 'b' });
    expect(errors(s.events)[0]).toMatchObject({
      stream_id: 'b',
      error: { code: 'too_many_active_responses', message: expect.stringContaining("stream_id 'b'") },
    });
    release();
    await s.session.whenIdle();
  });

  it('takes a tenant slot for each response running beside another, and gives it back', async () => {
    let held = 0;
    let taken = 0;
    const s = open({
      acquireLaneSlot: () => {
        taken++;
        held++;
        return () => held--;
      },
    });
    const release = holdCall(s.backends, 0);
    s.create({ stream_id: 'a' });
    s.create({ stream_id: 'b' });
    await until(() => terminals(s.events).length === 1);
    release();
    await s.session.whenIdle();
    expect([taken, held]).toEqual([1, 0]);
  });

  it("refuses a lane's response when the tenant has no slot left for it, naming the stream", async () => {
    const refusal = new ApiError({ status: 429, type: 'requests', code: 'too_many_connections', message: 'full' });
    const s = open({ acquireLaneSlot: () => refusal });
    const release = holdCall(s.backends, 0);
    s.create({ stream_id: 'a' });
    s.create({ stream_id: 'b' });
    expect(errors(s.events)[0]).toMatchObject({ stream_id: 'b', error: { code: 'too_many_connections' } });
    release();
    await s.session.whenIdle();
    expect(terminals(s.events).map((e) => e.stream_id)).toEqual(['a']);
  });

  it('forks a new lane from another lane’s response (lineage, not routing), from the cache', async () => {
    const s = open();
    s.create({ stream_id: 'main', input: 'plan' });
    await s.session.whenIdle();
    const parent = terminals(s.events)[0].response.id;
    s.create({ stream_id: 'fork', previous_response_id: parent, input: 'branch' });
    s.create({ stream_id: 'main', previous_response_id: parent, input: 'go on' });
    await s.session.whenIdle();
    const [, a, b] = terminals(s.events);
    expect([a.type, b.type]).toEqual(['response.completed', 'response.completed']);
    expect([a.response.previous_response_id, b.response.previous_response_id]).toEqual([parent, parent]);
    const hits = await s.registry.getSingleMetric('fastloop_edge_state_cache_lookups_total')!.get();
    expect(hits.values.find((v) => v.labels.result === 'hit')?.value).toBe(2);
  });

  it("keeps the source lane's parent when a fork fails, and evicts a lane's own parent when its continuation fails", async () => {
    const s = open();
    s.create({ stream_id: 'main' });
    await s.session.whenIdle();
    const parent = terminals(s.events)[0].response.id;
    s.backends.failNextGenerate = new DomainError('invalid_prompt', 'bad', 3);
    s.create({ stream_id: 'fork', previous_response_id: parent });
    await s.session.whenIdle();
    expect(s.cache.get(parent)).toBeDefined();
    s.backends.failNextGenerate = new DomainError('invalid_prompt', 'bad', 3);
    s.create({ stream_id: 'main', previous_response_id: parent });
    await s.session.whenIdle();
    expect(s.cache.get(parent)).toBeUndefined();
  });

  it("pins each lane's latest response in the connection cache, and only that", async () => {
    const s = open();
    for (const lane of ['a', 'b']) s.create({ stream_id: lane });
    await s.session.whenIdle();
    for (const input of ['one', 'two']) s.create({ stream_id: 'c', input });
    await s.session.whenIdle();
    const ids = terminals(s.events).map((e) => e.response.id);
    const pinned = (s.cache as unknown as { pinned: Set<string> }).pinned;
    expect([...pinned].sort()).toEqual([ids[0], ids[1], ids[3]].sort());
  });

  it('gives each lane the same events and results under any interleaving as when it runs alone', async () => {
    const laneArb = fc.record({
      name: fc.option(fc.stringMatching(/^[A-Za-z0-9_.-]{1,8}$/), { nil: undefined }),
      turns: fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 3 }),
    });
    const lanesArb = fc.uniqueArray(laneArb, { minLength: 1, maxLength: 4, selector: (l) => l.name ?? '' });
    await fc.assert(
      fc.asyncProperty(lanesArb, fc.scheduler(), async (lanes, scheduler) => {
        const together = open();
        together.backends.chunkGate = () => scheduler.schedule(Promise.resolve());
        const done = Promise.all(lanes.map((lane) => drive(together, lane)));
        await scheduler.waitFor(done);
        const mixed = await done;
        for (let i = 0; i < lanes.length; i++) expect(mixed[i]).toEqual(await drive(open(), lanes[i]));
      }),
      { numRuns: 40 },
    );
  });
});

/**
 * A client of one lane: sends its turns one after another, each continuing from the lane's last
 * response, and resolves with the lane's events without ids and times (which differ run to run).
 */
function drive(s: ReturnType<typeof open>, lane: { name?: string; turns: string[] }): Promise<unknown[]> {
  const mine: unknown[] = [];
  let turn = 0;
  return new Promise((resolve) => {
    const next = (previous?: string) =>
      s.create({ stream_id: lane.name, previous_response_id: previous, input: lane.turns[turn++] });
    const send = s.events.push.bind(s.events);
    const forward = (e: any) => {
      send(e);
      if (e.stream_id !== lane.name) return;
      mine.push(withoutIds(e));
      if (e.type !== 'response.completed' && e.type !== 'error') return;
      if (turn < lane.turns.length && e.type === 'response.completed') next(e.response.id);
      else resolve(mine);
    };
    // Every lane's client sees every event, as on one socket (each client hands it on to the one
    // before it); each keeps its own lane's.
    s.events.push = (...items: any[]) => {
      for (const item of items) forward(item);
      return s.events.length;
    };
    next();
  });
}

function withoutIds(event: unknown): unknown {
  return JSON.parse(
    JSON.stringify(event, (key, value) => (/(^|_)id$|_at$|^sequence_number$/.test(key) ? undefined : value)),
  );
}
