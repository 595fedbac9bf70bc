import { KvView } from '../fleet/kv-view';
import { PendingLoad } from './pending-load';
import type { Candidate, PlacementRequest } from './placement-types';
import { HashPolicy, LeastLoadedPolicy, RoundRobinPolicy } from './simple-policies';

const candidate = (id: string, load = 0, queuedTokens = 0): Candidate => ({
  spec: { id, address: `${id}:1` },
  load,
  queuedTokens,
  maxConcurrency: Infinity,
  statsKnown: true,
  kv: new KvView(),
});
const request = (over: Partial<PlacementRequest> = {}): PlacementRequest => ({
  affinityKey: '',
  sessionKey: '',
  cacheSalt: '',
  sessionWorkerId: '',
  sessionTokens: 0,
  prefixKey: '',
  serviceTier: '',
  expectedOutputTokens: 0,
  ...over,
});

describe('simple placement policies', () => {
  const three = ['a', 'b', 'c'].map((id) => candidate(id));

  it('round robin cycles and asks to be asked again every request', () => {
    const rr = new RoundRobinPolicy();
    const picks = Array.from({ length: 6 }, () => rr.place(request({ sessionKey: 's' }), three));
    expect(picks.map((p) => p.worker.id)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    expect(picks[0]).toMatchObject({ reason: 'round_robin', reuseMs: 0 });
  });

  it('least loaded takes the fewest running calls, then the least queue', () => {
    const ll = new LeastLoadedPolicy();
    expect(ll.place(request(), [candidate('a', 3), candidate('b', 1), candidate('c', 2)]).worker.id).toBe('b');
    expect(ll.place(request(), [candidate('a', 1, 500), candidate('b', 1, 100)]).worker.id).toBe('b');
    expect(ll.place(request(), three)).toMatchObject({ reason: 'least_loaded', reuseMs: 0 });
  });

  it('hash keeps a key on its worker with no reuse bound, and round-robins without a key', () => {
    const hash = new HashPolicy();
    const p = hash.place(request({ affinityKey: 'conv-1' }), three);
    expect(hash.place(request({ affinityKey: 'conv-1' }), [...three].reverse()).worker.id).toBe(p.worker.id);
    expect(p).toMatchObject({ reason: 'hash', reuseMs: undefined });
    expect(hash.place(request(), three).reason).toBe('round_robin');
  });
});

describe('PendingLoad', () => {
  it('counts decisions newer than the last report, and forgets them after half a second', () => {
    let now = 1_000;
    const pending = new PendingLoad(() => now);
    pending.add('a');
    now = 1_010;
    pending.add('a');
    expect(pending.count('a', 0)).toBe(2);
    expect(pending.count('a', 1_025)).toBe(1); // a report at 1,025 may miss what was decided after 1,005
    expect(pending.count('a', 1_100)).toBe(0);
    now = 1_600;
    expect(pending.count('a', 0)).toBe(0);
    expect(pending.count('b', 0)).toBe(0);
  });
});
