import type { RouteDecision } from './conversation-state';
import { RouteCache } from './route-cache';

const decision = (workerId: string) => ({ workerId, model: 'm' }) as RouteDecision;

describe('RouteCache', () => {
  it('reuses a decision until its time to live runs out', () => {
    let now = 0;
    const cache = new RouteCache(1000, 10, () => now);
    cache.set('k', decision('w1'));
    now = 999;
    expect(cache.get('k')?.workerId).toBe('w1');
    now = 1000;
    expect(cache.get('k')).toBeUndefined();
  });

  it('forgets every decision for a worker that failed', () => {
    const cache = new RouteCache(1000);
    cache.set('a', decision('w1'));
    cache.set('b', decision('w2'));
    cache.forgetWorker('w1');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
  });

  it('keeps at most its bound of entries and caches nothing with a zero ttl', () => {
    const cache = new RouteCache(1000, 2);
    ['a', 'b', 'c'].forEach((k) => cache.set(k, decision(k)));
    expect(cache.size).toBe(2);
    const off = new RouteCache(0);
    off.set('a', decision('w'));
    expect(off.get('a')).toBeUndefined();
  });
});
