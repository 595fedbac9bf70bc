import { Registry } from '@fastloop/service-kit';
import { EdgeMetrics } from '../edge-metrics';
import type { ConversationState } from '../turn/conversation-state';
import { ConnectionStateCache, StateCacheBudget } from './state-cache';

const state = (id: string, bytes: number) => ({ response: { id }, bytes }) as unknown as ConversationState;

describe('ConnectionStateCache', () => {
  it('evicts the least recently used response of the connection when over its byte budget', () => {
    const cache = new ConnectionStateCache(new StateCacheBudget(1e9), 250);
    cache.set(state('a', 100));
    cache.set(state('b', 100));
    cache.get('a');
    cache.set(state('c', 100));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
  });

  it('evicts the least recently used state of any connection when the process budget is exceeded', () => {
    const metrics = new EdgeMetrics(new Registry());
    const budget = new StateCacheBudget(250, metrics);
    const one = new ConnectionStateCache(budget, 1e9, metrics);
    const two = new ConnectionStateCache(budget, 1e9, metrics);
    one.set(state('a', 100));
    two.set(state('b', 100));
    one.get('a');
    two.set(state('c', 100));
    expect(two.get('b')).toBeUndefined();
    expect(one.get('a')).toBeDefined();
    expect(budget.totalBytes).toBe(200);
  });

  it('gives the bytes back to the process budget when a connection closes', () => {
    const budget = new StateCacheBudget(1e9);
    const cache = new ConnectionStateCache(budget, 1e9);
    cache.set(state('a', 100));
    cache.set(state('b', 50));
    cache.evict('a', 'failed_continuation');
    expect(budget.totalBytes).toBe(50);
    cache.clear();
    cache.clear();
    expect(budget.totalBytes).toBe(0);
    expect(cache.size).toBe(0);
  });

  it("evicts unpinned responses before a lane's pinned latest one when over its byte budget, and stays bounded", () => {
    const cache = new ConnectionStateCache(new StateCacheBudget(1e9), 250);
    cache.set(state('a', 100));
    cache.pin('a');
    cache.set(state('b', 100));
    cache.set(state('c', 100));
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('b')).toBeUndefined();
    cache.pin('c');
    // Only pinned ones left to evict: the byte bound still holds (c, used less recently than a, goes).
    cache.set(state('d', 100));
    expect(cache.get('c')).toBeUndefined();
    expect(cache.size).toBe(2);
  });
});
