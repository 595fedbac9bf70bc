import { ApiError } from '@fastloop/protocol';
import { Registry } from '@fastloop/service-kit';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { QueuedBytes } from './queued-bytes';
import { ResponsesSession } from './responses-session';
import { ConnectionStateCache, StateCacheBudget } from './state-cache';

const KB = 1024;

describe('QueuedBytes', () => {
  it('refuses bytes over the connection, tenant or process bound with a 429 naming the bound', () => {
    const q = new QueuedBytes({ perConnection: 10 * KB, perTenant: 15 * KB, perProcess: 20 * KB });
    const a1 = q.holder('a');
    const a2 = q.holder('a');
    const b = q.holder('b');
    const take = (h: ReturnType<QueuedBytes['holder']>, n: number) => q.acquire(h, n * KB);
    const codeOf = (r: unknown) =>
      r instanceof ApiError ? `${r.status} ${r.code} ${/\((\w+)\)/.exec(r.message)?.[1]}` : 'ok';
    expect(codeOf(take(a1, 11))).toBe('429 too_many_queued_bytes EDGE_MAX_QUEUED_BYTES_PER_CONNECTION');
    const first = take(a1, 8);
    expect(codeOf(first)).toBe('ok');
    expect(codeOf(take(a2, 8))).toBe('429 too_many_queued_bytes EDGE_MAX_QUEUED_BYTES_PER_TENANT');
    expect(codeOf(take(b, 10))).toBe('ok');
    expect(codeOf(take(a2, 3))).toBe('429 too_many_queued_bytes EDGE_MAX_QUEUED_BYTES');
    expect([q.held(), q.held('a'), q.held('b')]).toEqual([18 * KB, 8 * KB, 10 * KB]);
    (first as () => void)();
    (first as () => void)();
    expect([q.held(), q.held('a'), a1.held]).toEqual([10 * KB, 0, 0]);
    take(a2, 2);
    take(a2, 3);
    q.releaseAll(a2);
    expect([q.held('a'), a2.held]).toEqual([0, 0]);
  });

  it('shows the bytes the process holds as a gauge', async () => {
    const q = new QueuedBytes();
    const registry = new Registry();
    q.register(registry);
    q.acquire(q.holder('a'), 1234);
    expect(await registry.metrics()).toMatch(/^fastloop_edge_queued_request_bytes 1234$/m);
  });
});

describe('a connection under a byte bound', () => {
  function open(tenant: string, queued: QueuedBytes) {
    const { deps } = fakeDeps(new FakeBackends());
    const events: any[] = [];
    const session = new ResponsesSession({
      deps,
      principal: { tenant, keyId: tenant },
      transport: 'websocket',
      cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28),
      send: (e) => events.push(e),
      logger: deps.logger,
      maxQueued: 16,
      queuedBytes: queued,
    });
    const frame = (input: string) =>
      JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, input });
    return { session, events, frame };
  }
  const errors = (events: any[]) => events.filter((e) => e.type === 'error').map((e) => e.error.code);

  it('refuses frames past its bytes before parsing them, serves the rest, and gives every byte back', async () => {
    const queued = new QueuedBytes({ perConnection: 100 * KB, perTenant: 1 << 30, perProcess: 1 << 30 });
    const c = open('t', queued);
    const big = c.frame('x'.repeat(30 * KB));
    for (let i = 0; i < 5; i++) c.session.receive(big, big.length);
    expect(queued.held('t')).toBeGreaterThan(90 * KB);
    await c.session.whenIdle();
    expect(errors(c.events)).toEqual(['too_many_queued_bytes', 'too_many_queued_bytes']);
    expect(c.events.filter((e) => e.type === 'response.completed')).toHaveLength(3);
    expect(queued.held()).toBe(0);
    // A frame that is not even JSON is refused and holds nothing.
    c.session.receive('{'.repeat(10 * KB));
    expect(errors(c.events).at(-1)).toBe('invalid_json');
    expect(queued.held()).toBe(0);
  });

  it('decodes a frame as UTF-8 only once it holds its bytes: a refused one is never decoded', async () => {
    const queued = new QueuedBytes({ perConnection: 100 * KB, perTenant: 1 << 30, perProcess: 1 << 30 });
    const c = open('t', queued);
    const decoded: number[] = [];
    const payload = (i: number) => {
      const bytes = Buffer.from(c.frame('x'.repeat(30 * KB)));
      const toString = bytes.toString.bind(bytes);
      return Object.assign(bytes, { toString: () => (decoded.push(i), toString()) });
    };
    for (let i = 0; i < 5; i++) {
      const bytes = payload(i);
      c.session.receive(bytes, bytes.length);
    }
    await c.session.whenIdle();
    expect(errors(c.events)).toEqual(['too_many_queued_bytes', 'too_many_queued_bytes']);
    expect(decoded).toEqual([0, 1, 2]);
    expect(c.events.filter((e) => e.type === 'response.completed')).toHaveLength(3);
    expect(queued.held()).toBe(0);
  });

  it("serves another tenant while one tenant's queued frames hold its whole share", async () => {
    const queued = new QueuedBytes({ perConnection: 1 << 30, perTenant: 100 * KB, perProcess: 1 << 30 });
    const hostile = [open('hostile', queued), open('hostile', queued)];
    const neighbour = open('neighbour', queued);
    const big = hostile[0].frame('x'.repeat(30 * KB));
    for (const h of hostile) for (let i = 0; i < 3; i++) h.session.receive(big, big.length);
    neighbour.session.receive(neighbour.frame('hi'));
    await Promise.all([...hostile, neighbour].map((c) => c.session.whenIdle()));
    expect(errors([...hostile[0].events, ...hostile[1].events])).toEqual([
      'too_many_queued_bytes',
      'too_many_queued_bytes',
      'too_many_queued_bytes',
    ]);
    expect(neighbour.events.at(-1).type).toBe('response.completed');
    expect(queued.held()).toBe(0);
  });

  it('gives back the bytes of queued frames when the connection closes', () => {
    const queued = new QueuedBytes({ perConnection: 1 << 30, perTenant: 1 << 30, perProcess: 1 << 30 });
    const c = open('t', queued);
    const big = c.frame('x'.repeat(30 * KB));
    for (let i = 0; i < 3; i++) c.session.receive(big, big.length);
    c.session.close();
    // The running turn gives its bytes back when it ends; the queued ones at once.
    expect(queued.held()).toBeLessThanOrEqual(big.length);
  });
});
