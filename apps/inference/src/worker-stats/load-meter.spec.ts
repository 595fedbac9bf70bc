import type { Engine, EngineRequest } from '../engine';
import { LoadMeter } from './load-meter';

/** An engine whose chunks the test releases one by one. */
function scriptedEngine(): { engine: Engine; release: (chunk: number[] | 'end') => void; requests: EngineRequest[] } {
  const queue: ((value: number[] | 'end') => void)[] = [];
  const pending: (number[] | 'end')[] = [];
  const requests: EngineRequest[] = [];
  const next = () =>
    new Promise<number[] | 'end'>((resolve) => {
      const ready = pending.shift();
      if (ready !== undefined) resolve(ready);
      else queue.push(resolve);
    });
  return {
    requests,
    release: (chunk) => {
      const waiter = queue.shift();
      if (waiter) waiter(chunk);
      else pending.push(chunk);
    },
    engine: {
      name: 'sim',
      simulated: true,
      async *generate(request) {
        requests.push(request);
        for (;;) {
          const chunk = await next();
          if (chunk === 'end') return;
          yield chunk;
        }
      },
      close: async () => undefined,
    },
  };
}

const request = (
  promptTokens: number,
  cachedTokens: number,
  onPrefill?: EngineRequest['onPrefill'],
): EngineRequest => ({
  prompt: new Uint32Array(promptTokens),
  cachedTokens,
  maxOutputTokens: 10,
  stopTokens: new Set(),
  arrivedAt: 0,
  signal: new AbortController().signal,
  onPrefill,
});

describe('LoadMeter', () => {
  it('counts the uncached prompt of calls without a first token as queued, until their first chunk', async () => {
    const meter = new LoadMeter(() => 0);
    const { engine, release } = scriptedEngine();
    const metered = meter.meter(engine);
    const a = metered.generate(request(100, 40))[Symbol.asyncIterator]();
    const b = metered.generate(request(50, 0))[Symbol.asyncIterator]();
    const firstA = a.next();
    const firstB = b.next();
    await new Promise((r) => setImmediate(r));
    expect(meter.queuedPrefillTokens).toBe(60 + 50);
    release([1]);
    await firstA;
    expect(meter.queuedPrefillTokens).toBe(50);
    release('end');
    await firstB;
    expect(meter.queuedPrefillTokens).toBe(0);
  });

  it('takes what an engine with its own KV state reports it will evaluate', async () => {
    const meter = new LoadMeter(() => 0);
    const { engine, release, requests } = scriptedEngine();
    const seen: number[] = [];
    const it = meter
      .meter(engine)
      .generate(request(100, 0, (p) => seen.push(p.cachedTokens)))
      [Symbol.asyncIterator]();
    const first = it.next();
    await new Promise((r) => setImmediate(r));
    requests[0].onPrefill!({ cachedTokens: 90, evaluatedTokens: 10 });
    expect(seen).toEqual([90]); // the worker's own callback still runs
    expect(meter.queuedPrefillTokens).toBe(10);
    release([7]);
    await first;
    expect(meter.queuedPrefillTokens).toBe(0);
    await it.return?.(undefined);
  });

  it('gives back what a cancelled call had queued', async () => {
    const meter = new LoadMeter(() => 0);
    const { engine, release } = scriptedEngine();
    const it = meter.meter(engine).generate(request(30, 0))[Symbol.asyncIterator]();
    const first = it.next();
    await new Promise((r) => setImmediate(r));
    expect(meter.queuedPrefillTokens).toBe(30);
    release('end'); // what an engine does when its call's signal aborts: it ends without a token
    expect(await first).toEqual({ done: true, value: undefined });
    expect(meter.queuedPrefillTokens).toBe(0);
  });

  it('averages prefill and decode rates over the last five seconds', async () => {
    let now = 10_000;
    const meter = new LoadMeter(() => now);
    const { engine, release } = scriptedEngine();
    const it = meter.meter(engine).generate(request(500, 0))[Symbol.asyncIterator]();
    const first = it.next();
    release([1, 2, 3, 4, 5]);
    await first;
    expect(meter.prefillTokensPerSecond()).toBe(100);
    expect(meter.decodeTokensPerSecond()).toBe(1);
    now += 6_000;
    expect(meter.prefillTokensPerSecond()).toBe(0);
    await it.return?.(undefined);
  });
});
