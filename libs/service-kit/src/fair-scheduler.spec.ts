import fc from 'fast-check';
import { FairScheduler, FairSchedulerError, type SlotLease } from './fair-scheduler';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('FairScheduler', () => {
  it('never lets one key take the reserved slots, so another key starts at once', async () => {
    const slots = new FairScheduler({ capacity: 4, reserve: 1 });
    const a = await Promise.all([slots.acquire('a'), slots.acquire('a'), slots.acquire('a')]);
    let fourth: SlotLease | undefined;
    void slots.acquire('a').then((lease) => (fourth = lease));
    await flush();
    expect(fourth).toBeUndefined();
    expect(slots.tryAcquire('b')).toBeDefined();
    expect(slots.inUse()).toBe(4);
    a[0].release();
    await flush();
    expect(fourth).toBeDefined();
  });

  it('serves a key with one waiting request before the second of a key with a thousand', async () => {
    const slots = new FairScheduler({ capacity: 1 });
    const order: string[] = [];
    const first = await slots.acquire('flood');
    const waits = Array.from({ length: 1_000 }, (_, i) =>
      slots.acquire('flood').then((lease) => {
        order.push(`flood${i}`);
        lease.release();
      }),
    );
    const neighbour = slots.acquire('neighbour').then((lease) => {
      order.push('neighbour');
      lease.release();
    });
    first.release();
    await Promise.all([...waits, neighbour]);
    expect(order.indexOf('neighbour')).toBeLessThan(order.indexOf('flood1'));
  });

  it('shares contended slots by weight and honours per-key caps', async () => {
    const slots = new FairScheduler({
      capacity: 6,
      shares: (key) => (key === 'gold' ? { weight: 2 } : key === 'capped' ? { maxConcurrent: 1 } : undefined),
    });
    const held = await Promise.all(Array.from({ length: 6 }, () => slots.acquire('filler')));
    const granted: string[] = [];
    for (const key of ['gold', 'silver', 'capped'])
      for (let i = 0; i < 6; i++) void slots.acquire(key).then(() => granted.push(key));
    for (const lease of held) lease.release();
    await flush();
    expect(slots.inUse('capped')).toBe(1);
    expect(slots.inUse('gold')).toBe(3);
    expect(slots.inUse('silver')).toBe(2);
    expect(granted).toHaveLength(6);
  });

  it('fails a wait that outlasts its timeout, an aborted one, a full queue and everything on close', async () => {
    const slots = new FairScheduler({ capacity: 1, maxQueuedPerKey: 2 });
    const held = await slots.acquire('a');
    await expect(slots.acquire('a', { timeoutMs: 10 })).rejects.toMatchObject({ reason: 'timeout' });
    const controller = new AbortController();
    const aborted = slots.acquire('a', { signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ reason: 'aborted' });
    const queued = [slots.acquire('a'), slots.acquire('a')];
    await expect(slots.acquire('a')).rejects.toMatchObject({ reason: 'queue_full' });
    slots.close();
    for (const q of queued) await expect(q).rejects.toBeInstanceOf(FairSchedulerError);
    await expect(slots.acquire('b')).rejects.toMatchObject({ reason: 'closed' });
    held.release();
    expect(slots.inUse()).toBe(0);
  });

  it('keeps its invariants under any sequence of requests, releases and timeouts (property)', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('acquire' as const), key: fc.constantFrom('a', 'b', 'c'), timeout: fc.boolean() }),
      fc.record({ kind: fc.constant('release' as const), index: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(op, { maxLength: 60 }),
        async (capacity, reserve, ops) => {
          const slots = new FairScheduler({
            capacity,
            reserve,
            shares: (k) => (k === 'c' ? { maxConcurrent: 1 } : undefined),
          });
          const cap = (key: string): number => (key === 'c' ? 1 : Math.max(1, capacity - reserve));
          const held: SlotLease[] = [];
          const settled: Promise<unknown>[] = [];
          for (const o of ops) {
            if (o.kind === 'acquire')
              settled.push(
                slots.acquire(o.key, o.timeout ? { timeoutMs: 1 } : {}).then(
                  (lease) => held.push(lease),
                  () => undefined,
                ),
              );
            else if (held.length > 0) held.splice(o.index % held.length, 1)[0].release();
            await flush();
            expect(slots.inUse()).toBeLessThanOrEqual(capacity);
            for (const key of ['a', 'b', 'c']) {
              expect(slots.inUse(key)).toBeLessThanOrEqual(cap(key));
              // Work-conserving: nobody waits while a slot is free for them.
              if (slots.waiting(key) > 0)
                expect(slots.inUse() === capacity || slots.inUse(key) === cap(key)).toBe(true);
            }
          }
          while (held.length > 0) held.pop()?.release();
          slots.close();
          await Promise.all(settled);
          while (held.length > 0) held.pop()?.release();
          expect(slots.inUse()).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
