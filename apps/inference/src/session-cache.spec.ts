import fc from 'fast-check';
import { SessionCache } from './session-cache';

const seq = (n: number, start = 0) => Uint32Array.from({ length: n }, (_, i) => start + i);

describe('SessionCache', () => {
  it('returns the sequence a session was last given', () => {
    const cache = new SessionCache({ maxTokens: 100, maxEntries: 10 });
    cache.set('a', seq(3));
    cache.set('a', seq(5, 7));
    expect(Array.from(cache.get('a')!)).toEqual([7, 8, 9, 10, 11]);
    expect(cache.totalTokens).toBe(5);
    expect(cache.size).toBe(1);
  });

  it('evicts the least recently used session when over its token budget', () => {
    const evicted: string[] = [];
    const cache = new SessionCache({ maxTokens: 10, maxEntries: 10, onEvict: (key) => evicted.push(key) });
    cache.set('a', seq(4));
    cache.set('b', seq(4));
    cache.get('a'); // a is now more recent than b
    cache.set('c', seq(4));
    expect(evicted).toEqual(['b']);
    expect(cache.has('a')).toBe(true);
    expect(cache.has('b')).toBe(false);
    expect(cache.totalTokens).toBe(8);
  });

  it('evicts the least recently used session when over its count', () => {
    const evicted: string[] = [];
    const cache = new SessionCache({ maxTokens: 1000, maxEntries: 2, onEvict: (key) => evicted.push(key) });
    cache.set('a', seq(1));
    cache.set('b', seq(1));
    cache.set('c', seq(1));
    expect(evicted).toEqual(['a']);
    expect(cache.size).toBe(2);
  });

  it('does not keep a sequence larger than the whole budget, and drops the older one of that session', () => {
    const cache = new SessionCache({ maxTokens: 10, maxEntries: 10 });
    cache.set('a', seq(5));
    cache.set('b', seq(3));
    cache.set('a', seq(11));
    expect(cache.has('a')).toBe(false);
    expect(cache.has('b')).toBe(true);
    expect(cache.totalTokens).toBe(3);
  });

  it('keeps nothing when its count bound is zero', () => {
    const cache = new SessionCache({ maxTokens: 10, maxEntries: 0 });
    cache.set('a', seq(1));
    expect(cache.size).toBe(0);
  });

  it('never exceeds either bound and keeps its token count exact, whatever the operations', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 6 }), len: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 6 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 6 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 5 }), fc.array(op, { maxLength: 60 }), (maxTokens, maxEntries, ops) => {
        const cache = new SessionCache({ maxTokens, maxEntries });
        const model = new Map<string, number>(); // key → length, in recency order
        for (const o of ops) {
          const key = `k${o.key}`;
          if (o.kind === 'set') {
            cache.set(key, seq(o.len));
            model.delete(key);
            if (o.len <= maxTokens && maxEntries > 0) model.set(key, o.len);
            let total = [...model.values()].reduce((a, b) => a + b, 0);
            while (total > maxTokens || model.size > maxEntries) {
              const [oldest, len] = model.entries().next().value!;
              model.delete(oldest);
              total -= len;
            }
          } else if (o.kind === 'get') {
            const got = cache.get(key);
            expect(got?.length).toBe(model.get(key));
            if (model.has(key)) {
              const len = model.get(key)!;
              model.delete(key);
              model.set(key, len);
            }
          } else {
            cache.delete(key);
            model.delete(key);
          }
          expect(cache.totalTokens).toBeLessThanOrEqual(maxTokens);
          expect(cache.size).toBeLessThanOrEqual(maxEntries);
          expect(cache.totalTokens).toBe([...model.values()].reduce((a, b) => a + b, 0));
          expect(cache.size).toBe(model.size);
        }
      }),
    );
  });
});
