import fc from 'fast-check';
import { pickRendezvous, RoundRobin } from './worker-picker';
import type { WorkerSpec } from './workers';

const worker = (id: string): WorkerSpec => ({ id, address: `${id}.local:1` });
const workersArb = fc
  .uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 8 })
  .map((ids) => ids.map(worker));

describe('pickRendezvous', () => {
  it('returns undefined when no worker is healthy', () => {
    expect(pickRendezvous('k', [])).toBeUndefined();
  });

  it('picks the same worker for a key whatever the order of the list', () => {
    fc.assert(
      fc.property(workersArb, fc.string(), (workers, key) => {
        expect(pickRendezvous(key, [...workers].reverse())).toBe(pickRendezvous(key, workers));
      }),
    );
  });

  it('keeps a key on its worker when any other worker fails or joins', () => {
    fc.assert(
      fc.property(workersArb, fc.string(), fc.nat(), (workers, key, n) => {
        const chosen = pickRendezvous(key, workers)!;
        const others = workers.filter((w) => w !== chosen);
        const without = others.length ? others[n % others.length] : undefined;
        expect(
          pickRendezvous(
            key,
            workers.filter((w) => w !== without),
          ),
        ).toBe(chosen);
        // Ids in workersArb are at most 8 chars, so this one is new.
        const newcomer = worker('newcomer-9');
        expect([chosen, newcomer]).toContain(pickRendezvous(key, [...workers, newcomer]));
      }),
    );
  });

  it('moves a key to the best remaining worker when its own worker fails', () => {
    fc.assert(
      fc.property(
        workersArb.filter((ws) => ws.length > 1),
        fc.string(),
        (workers, key) => {
          const chosen = pickRendezvous(key, workers)!;
          const next = pickRendezvous(
            key,
            workers.filter((w) => w !== chosen),
          );
          expect(next).toBeDefined();
          expect(next).not.toBe(chosen);
        },
      ),
    );
  });

  it('spreads keys evenly enough over workers', () => {
    const workers = ['a', 'b', 'c', 'd'].map(worker);
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const id = pickRendezvous(`conversation-${i}`, workers)!.id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (const w of workers) expect(counts.get(w.id)).toBeGreaterThan(800);
  });
});

describe('RoundRobin', () => {
  it('cycles through the workers it is given', () => {
    const rr = new RoundRobin();
    const workers = ['a', 'b', 'c'].map(worker);
    expect([1, 2, 3, 4, 5, 6].map(() => rr.next(workers)?.id)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    expect(rr.next([])).toBeUndefined();
  });
});
