import { KeyedPacer } from './keyed-pacer';

const MB = 1_000_000;

describe('KeyedPacer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** The times (ms after the start) at which each body of `sizes` got through, all sent at once. */
  async function admitted(pacer: KeyedPacer, tenant: string, sizes: number[], start = Date.now()) {
    const at: number[] = [];
    const all = sizes.map((bytes, i) =>
      Promise.resolve(pacer.take(tenant, bytes)).then(() => (at[i] = Date.now() - start)),
    );
    await jest.advanceTimersByTimeAsync(60_000);
    await Promise.all(all);
    return at;
  }

  it('lets a burst through at once, then one body per its bytes at the rate, in arrival order', async () => {
    const pacer = new KeyedPacer({ perSecond: 4 * MB, burst: 8 * MB }, () => Date.now());
    const at = await admitted(pacer, 'h', [4 * MB, 4 * MB, 4 * MB, 4 * MB, 2 * MB]);
    // 8 MB of burst, then 4 MB/s: the third body goes when the second's debt (0) turns to credit.
    expect(at.slice(0, 2)).toEqual([0, 0]);
    expect(at[2]).toBeGreaterThan(0);
    expect(at[2]).toBeLessThanOrEqual(2);
    expect(at[3]).toBeGreaterThanOrEqual(1_000);
    expect(at[3]).toBeLessThanOrEqual(1_003);
    expect(at[4]).toBeGreaterThanOrEqual(2_000);
    expect(at[4]).toBeLessThanOrEqual(2_004);
    expect(pacer.waiting).toBe(0);
  });

  it('lets a body larger than the burst through into debt, which the next body waits out', async () => {
    const pacer = new KeyedPacer({ perSecond: 1 * MB, burst: 1 * MB }, () => Date.now());
    const at = await admitted(pacer, 'h', [5 * MB, 1]);
    expect(at[0]).toBe(0);
    expect(at[1]).toBeGreaterThanOrEqual(4_000);
    expect(at[1]).toBeLessThanOrEqual(4_003);
  });

  it("paces each tenant on its own: one tenant's debt never delays another", async () => {
    const pacer = new KeyedPacer({ perSecond: 1 * MB, burst: 1 * MB }, () => Date.now());
    const start = Date.now();
    const hostile = admitted(pacer, 'h', [1 * MB, 1 * MB, 1 * MB], start);
    expect(pacer.take('n', 1 * MB)).toBeUndefined(); // at once, while h waits
    expect(pacer.waiting).toBe(2);
    expect(await hostile).toEqual([0, expect.any(Number), expect.any(Number)]);
  });

  it('earns credit back while idle, up to the burst', async () => {
    const pacer = new KeyedPacer({ perSecond: 1 * MB, burst: 2 * MB }, () => Date.now());
    expect(pacer.take('h', 2 * MB)).toBeUndefined();
    expect(pacer.take('h', 1)).toBeDefined(); // no credit left
    await jest.advanceTimersByTimeAsync(60_000); // a minute idle earns the burst, not 60 MB
    const at = await admitted(pacer, 'h', [1 * MB, 1 * MB, 1 * MB]);
    expect(at.slice(0, 2)).toEqual([0, 0]);
    expect(at[2]).toBeGreaterThanOrEqual(1);
  });

  it('never waits when off (0 bytes per second)', () => {
    const pacer = new KeyedPacer({ perSecond: 0, burst: 1 }, () => Date.now());
    for (let i = 0; i < 10; i++) expect(pacer.take('h', 100 * MB)).toBeUndefined();
    expect(pacer.enabled).toBe(false);
  });

  it('charges work already done with spend, which the next take waits out', async () => {
    const pacer = new KeyedPacer({ perSecond: 500, burst: 100 }, () => Date.now());
    pacer.spend('h', 600); // 600 ms of CPU: a debt of 500
    const start = Date.now();
    const at = await admitted(pacer, 'h', [0], start);
    expect(at[0]).toBeGreaterThanOrEqual(1_000);
    expect(at[0]).toBeLessThanOrEqual(1_003);
    expect(pacer.take('n', 0)).toBeUndefined();
  });

  it('gives a taker up at its timeout: it rejects, is charged nothing, and the next taker is not held up', async () => {
    const pacer = new KeyedPacer({ perSecond: 1_000, burst: 100 }, () => Date.now());
    pacer.spend('h', 1_100); // a debt of 1,000 ms: the next take waits 1 s
    const timedOut = new Error('out of time');
    const late = pacer.take('h', 5_000, { timeoutMs: 200, onTimeout: () => timedOut });
    const verdict = late!.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    await jest.advanceTimersByTimeAsync(200);
    expect(await verdict).toBe(timedOut);
    // Had the 5,000 been charged, this take would wait 6 s; it waits out only the first debt.
    const start = Date.now();
    const at = await admitted(pacer, 'h', [0], start);
    expect(at[0]).toBeLessThanOrEqual(1_000);
  });

  it('gives a taker up when its signal aborts, and rejects at once when it already has', async () => {
    const pacer = new KeyedPacer({ perSecond: 1_000, burst: 100 }, () => Date.now());
    pacer.spend('h', 1_100);
    const controller = new AbortController();
    const waiting = pacer.take('h', 0, { signal: controller.signal })!.catch((err: unknown) => err);
    controller.abort(new Error('client gone'));
    expect(await waiting).toEqual(new Error('client gone'));
    await expect(pacer.take('h', 0, { signal: controller.signal })).rejects.toEqual(new Error('client gone'));
    await jest.advanceTimersByTimeAsync(2_000);
    expect(pacer.waiting).toBe(0);
  });

  it('stops counting a sleeping taker the moment its timeout gives it up, and clears its sleep timer', async () => {
    const pacer = new KeyedPacer({ perSecond: 1_000, burst: 100 }, () => Date.now());
    pacer.spend('h', 1_100); // a debt of 1,000 ms: the taker sleeps about 1 s for credit
    const late = pacer.take('h', 0, { timeoutMs: 200 })!.catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(0); // its turn comes and it falls asleep
    expect(pacer.waitingFor('h')).toBe(1);
    expect(jest.getTimerCount()).toBe(2); // its timeout and its sleep
    await jest.advanceTimersByTimeAsync(200);
    expect(await late).toEqual(new Error('no credit within 200 ms'));
    // 800 ms before its sleep would have ended: no longer counted, and no timer left behind.
    expect(pacer.waitingFor('h')).toBe(0);
    expect(pacer.waiting).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('stops counting a taker queued behind another the moment it is aborted', async () => {
    const pacer = new KeyedPacer({ perSecond: 1_000, burst: 100 }, () => Date.now());
    pacer.spend('h', 1_100);
    const first = pacer.take('h', 0)!.then(() => 'served');
    const controller = new AbortController();
    const second = pacer.take('h', 0, { signal: controller.signal })!.catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(0);
    expect(pacer.waitingFor('h')).toBe(2);
    controller.abort(new Error('client gone'));
    expect(await second).toEqual(new Error('client gone'));
    expect(pacer.waitingFor('h')).toBe(1); // the first still sleeps; the second has left
    await jest.advanceTimersByTimeAsync(1_001);
    expect(await first).toBe('served');
    expect(pacer.waitingFor('h')).toBe(0);
  });

  it('resolves a taker whose credit comes before its timeout', async () => {
    const pacer = new KeyedPacer({ perSecond: 1_000, burst: 100 }, () => Date.now());
    pacer.spend('h', 150); // a debt of 50 ms
    const done = pacer.take('h', 0, { timeoutMs: 1_000 })!.then(() => Date.now());
    const start = Date.now();
    await jest.advanceTimersByTimeAsync(1_000);
    expect((await done) - start).toBeLessThanOrEqual(60);
  });
});
