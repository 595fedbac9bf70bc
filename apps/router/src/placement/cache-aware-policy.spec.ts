import fc from 'fast-check';
import { KvView } from '../fleet/kv-view';
import { loadCap } from './bounded-load';
import { CacheAwarePolicy } from './cache-aware-policy';
import type { Candidate, PlacementRequest } from './placement-types';

const policy = (over: Partial<ConstructorParameters<typeof CacheAwarePolicy>[0]> = {}) =>
  new CacheAwarePolicy({ epsilon: 0.25, sessionEpsilon: 0.25, reuseMs: 1000, decodeWeight: 0.05, ...over });

const request = (over: Partial<PlacementRequest> = {}): PlacementRequest => ({
  affinityKey: '',
  sessionKey: '',
  cacheSalt: 'salt',
  sessionWorkerId: '',
  sessionTokens: 0,
  prefixKey: '',
  serviceTier: '',
  expectedOutputTokens: 0,
  ...over,
});

interface Holding {
  session?: { key: string; tokens: number; root?: string; rootTokens?: number };
}

function candidate(id: string, load: number, queuedTokens = 0, holdings: Holding[] = [], statsKnown = true): Candidate {
  const kv = new KvView();
  kv.apply({
    snapshot: true,
    removed: [],
    kept: holdings.map((h) => ({
      cacheSalt: 'salt',
      sessionKey: h.session!.key,
      tokens: h.session!.tokens,
      prefixKey: h.session!.root ?? '',
      rootTokens: h.session!.rootTokens ?? 0,
    })),
  });
  return { spec: { id, address: `${id}:1` }, load, queuedTokens, maxConcurrency: Infinity, statsKnown, kv };
}

describe('CacheAwarePolicy', () => {
  it('keeps a session on the worker that holds it while it is within the load bound', () => {
    const candidates = [
      candidate('a', 2),
      candidate('b', 2, 0, [{ session: { key: 'resp_1', tokens: 5000 } }]),
      candidate('c', 1),
    ];
    // 5 running on 3 workers: ⌈1.25 × 6 / 3⌉ = 3, so b (2 running) may take one more.
    const p = policy().place(request({ sessionKey: 'resp_1', sessionWorkerId: 'b' }), candidates);
    expect(p).toMatchObject({ worker: { id: 'b' }, reason: 'session', expectedCachedTokens: 5000, reuseMs: 1000 });
  });

  it('moves a session off a worker above the bound, to one holding its root if any', () => {
    const candidates = [
      candidate('a', 0),
      candidate('b', 9, 0, [{ session: { key: 'resp_1', tokens: 5000, root: 'k:sys', rootTokens: 800 } }]),
      candidate('c', 1, 0, [{ session: { key: 'resp_9', tokens: 900, root: 'k:sys', rootTokens: 800 } }]),
    ];
    const p = policy().place(request({ sessionKey: 'resp_1', sessionWorkerId: 'b' }), candidates);
    expect(p).toMatchObject({ worker: { id: 'c' }, reason: 'prefix', expectedCachedTokens: 800 });
  });

  it('keeps a session on a busier worker up to the looser session bound, and no further', () => {
    const holding = (load: number) => [
      candidate('a', 8),
      candidate('b', load, 0, [{ session: { key: 'resp_1', tokens: 5000 } }]),
      candidate('c', 8),
      candidate('d', 8),
    ];
    const place = (req: Partial<PlacementRequest>, load: number) =>
      policy({ epsilon: 0.25, sessionEpsilon: 0.5 }).place(request(req), holding(load)).worker.id;
    // b at 12 of 36 running: the strict bound ⌈1.25 × 37 / 4⌉ = 12 is full, the session bound ⌈1.5 × 37 / 4⌉ = 14 is not.
    expect(place({ sessionKey: 'resp_1' }, 12)).toBe('b');
    expect(place({ prefixKey: 'k:new' }, 12)).not.toBe('b'); // a new conversation: strict bound
    // b at 15 of 39: the session bound ⌈1.5 × 40 / 4⌉ = 15 is full too.
    expect(place({ sessionKey: 'resp_1' }, 15)).not.toBe('b');
  });

  it('moves a session whose worker is so queued that prefilling it elsewhere comes first', () => {
    const candidates = [
      candidate('a', 1, 100),
      candidate('b', 1, 20_000, [{ session: { key: 'resp_1', tokens: 5000 } }]),
    ];
    expect(policy().place(request({ sessionKey: 'resp_1' }), candidates).worker.id).toBe('a');
    // Less queued than twice what it would prefill again (for itself, and as work others wait for): it stays.
    const shorter = [candidate('a', 1, 100), candidate('b', 1, 9000, [{ session: { key: 'resp_1', tokens: 5000 } }])];
    expect(policy().place(request({ sessionKey: 'resp_1' }), shorter).worker.id).toBe('b');
  });

  it("trusts the edge's word for a worker whose reports are not in", () => {
    const candidates = [candidate('a', 0, 0), candidate('b', 1, 0, [], false)];
    const p = policy().place(request({ sessionKey: 'resp_1', sessionWorkerId: 'b' }), candidates);
    expect(p.worker.id).toBe('b');
    expect(p.reason).toBe('session');
  });

  it('believes the edge about a session kept a moment ago, unless the worker reported dropping it', () => {
    const fresh = [candidate('a', 0, 0), candidate('b', 1, 0)];
    const req = request({ sessionKey: 'resp_7', sessionWorkerId: 'b', sessionTokens: 3000 });
    expect(policy().place(req, fresh)).toMatchObject({
      worker: { id: 'b' },
      reason: 'session',
      expectedCachedTokens: 3000,
    });
    const b = candidate('b', 1, 0, [{ session: { key: 'resp_7', tokens: 3000 } }]);
    b.kv.apply({ snapshot: false, kept: [], removed: [{ cacheSalt: 'salt', sessionKey: 'resp_7' }] });
    expect(policy().place(req, [candidate('a', 0, 0), b]).worker.id).toBe('a');
  });

  it('sends a priority request where the wait is shortest and a flex one where the cache is', () => {
    const candidates = [candidate('a', 1, 8000, [{ session: { key: 'resp_1', tokens: 4000 } }]), candidate('b', 1, 0)];
    const place = (serviceTier: string) => policy().place(request({ sessionKey: 'resp_1', serviceTier }), candidates);
    expect(place('').worker.id).toBe('a'); // 8000 queued < 2 × 4000 cached + the move margin
    expect(place('priority').worker.id).toBe('b'); // 16000 weighted queue > 2 × 4000 cached + the move margin
    expect(place('flex').worker.id).toBe('a');
  });

  it('weighs busy workers against a long expected output', () => {
    const candidates = [candidate('a', 6, 0, [{ session: { key: 'resp_1', tokens: 1000 } }]), candidate('b', 4, 0)];
    const place = (expectedOutputTokens: number) =>
      policy({ epsilon: 1 }).place(request({ sessionKey: 'resp_1', expectedOutputTokens }), candidates);
    expect(place(0).worker.id).toBe('a');
    expect(place(80_000).worker.id).toBe('b'); // 6 × 4000 − 2 × 1000 − margin > 4 × 4000
  });

  it('places a new root by rendezvous hashing when nothing is known, the same way whatever the order', () => {
    const ids = ['w0', 'w1', 'w2', 'w3'];
    const counts = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const req = request({ prefixKey: `h:root-${i}` });
      const a = policy().place(
        req,
        ids.map((id) => candidate(id, 0)),
      );
      const b = policy().place(
        req,
        [...ids].reverse().map((id) => candidate(id, 0)),
      );
      expect(b.worker.id).toBe(a.worker.id);
      expect(a.reason).toBe('hash');
      counts.set(a.worker.id, (counts.get(a.worker.id) ?? 0) + 1);
    }
    for (const id of ids) expect(counts.get(id)).toBeGreaterThan(60);
  });

  it('never places a call above ⌈(1 + ε) × mean⌉, whatever the loads, queues and holdings', () => {
    const arb = fc.record({
      loads: fc.array(fc.nat(30), { minLength: 1, maxLength: 8 }),
      queued: fc.array(fc.nat(50_000), { minLength: 8, maxLength: 8 }),
      holder: fc.nat(7),
      tokens: fc.nat(100_000),
      epsilon: fc.double({ min: 0, max: 1, noNaN: true }),
      tier: fc.constantFrom('', 'priority', 'flex'),
      expected: fc.nat(10_000),
    });
    fc.assert(
      fc.property(arb, (x) => {
        const candidates = x.loads.map((load, i) =>
          candidate(`w${i}`, load, x.queued[i], i === x.holder ? [{ session: { key: 's', tokens: x.tokens } }] : []),
        );
        const p = policy({ epsilon: x.epsilon, sessionEpsilon: x.epsilon }).place(
          request({ sessionKey: 's', serviceTier: x.tier, expectedOutputTokens: x.expected }),
          candidates,
        );
        const total = x.loads.reduce((a, b) => a + b, 0);
        const chosen = candidates.find((c) => c.spec.id === p.worker.id)!;
        expect(chosen.load + 1).toBeLessThanOrEqual(loadCap(total, candidates.length, x.epsilon));
      }),
    );
  });

  it('spreads a hot root within the bound: one worker holds it until it is full, then the next', () => {
    // 200 new conversations of one root arrive while none finishes: each placement adds one running call.
    const ids = ['w0', 'w1', 'w2', 'w3'];
    const loads = new Map(ids.map((id) => [id, 0]));
    const holders = new Set<string>();
    const p = policy({ epsilon: 0.25 });
    for (let i = 0; i < 200; i++) {
      const candidates = ids.map((id) =>
        candidate(
          id,
          loads.get(id)!,
          0,
          holders.has(id) ? [{ session: { key: `c${id}`, tokens: 900, root: 'k:hot', rootTokens: 800 } }] : [],
        ),
      );
      const chosen = p.place(request({ prefixKey: 'k:hot' }), candidates).worker.id;
      loads.set(chosen, loads.get(chosen)! + 1);
      holders.add(chosen);
    }
    const max = Math.max(...loads.values());
    expect(max).toBeLessThanOrEqual(Math.ceil(1.25 * (200 / 4)));
    expect(Math.min(...loads.values())).toBeGreaterThan(0);
  });
});
