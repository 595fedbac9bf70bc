import type { ClientReadableStream } from '@grpc/grpc-js';
import type { inferenceV1 } from '@fastloop/proto';
import { eventually, generate, startTestWorker, type TestWorker } from '../testing/test-worker';

const prompt = (n: number, start = 1) => Array.from({ length: n }, (_, i) => start + (i % 1000));

/** Everything a stats stream said, and the view a router builds from it. */
function watch(t: TestWorker): {
  call: ClientReadableStream<inferenceV1.WorkerStats>;
  messages: inferenceV1.WorkerStats[];
  held: Map<string, inferenceV1.HeldSequence>;
  ended: Promise<void>;
} {
  const call = t.client.watchWorkerStats({ minIntervalMs: 5 });
  const messages: inferenceV1.WorkerStats[] = [];
  const held = new Map<string, inferenceV1.HeldSequence>();
  call.on('data', (m: inferenceV1.WorkerStats) => {
    messages.push(m);
    if (m.snapshot) held.clear();
    for (const r of m.removed) held.delete(`${r.cacheSalt}/${r.sessionKey}`);
    for (const k of m.kept) held.set(`${k.cacheSalt}/${k.sessionKey}`, k);
  });
  const ended = new Promise<void>((resolve) => {
    call.on('end', resolve);
    call.on('error', () => resolve());
  });
  return { call, messages, held, ended };
}

describe('WatchWorkerStats', () => {
  let t: TestWorker;
  afterEach(async () => t?.close());

  it('reports what the worker keeps, with roots a continuation inherits, and what it drops', async () => {
    t = await startTestWorker({ INFERENCE_SESSION_CACHE_TOKENS: '5000', SIM_ANSWER_WORDS: '3' });
    const stats = watch(t);
    await eventually(() => stats.messages.length > 0);
    expect(stats.messages[0]).toMatchObject({
      workerId: 'sim-0',
      snapshot: true,
      kept: [],
      load: { inFlight: 0, kvTokens: 0, kvCapacityTokens: 5000, maxConcurrency: 64 },
    });
    expect(stats.messages[0].instanceId).toMatch(/^[0-9a-f]{16}$/);

    const first = await generate(t.client, {
      sessionKey: 'resp_1',
      cacheSalt: 'tenant-a',
      prefixKey: 'k:agent',
      tokens: prompt(200),
      maxOutputTokens: 8,
    }).result;
    await eventually(() => stats.held.has('tenant-a/resp_1'));
    expect(stats.held.get('tenant-a/resp_1')).toEqual({
      cacheSalt: 'tenant-a',
      sessionKey: 'resp_1',
      tokens: 200 + first.tokens.length,
      prefixKey: 'k:agent',
      rootTokens: 200,
    });

    await generate(t.client, {
      sessionKey: 'resp_2',
      parentSessionKey: 'resp_1',
      cacheSalt: 'tenant-a',
      prefixLen: 200 + first.tokens.length,
      tokens: prompt(10, 2000),
      maxOutputTokens: 8,
    }).result;
    await eventually(() => stats.held.has('tenant-a/resp_2') && !stats.held.has('tenant-a/resp_1'));
    expect(stats.held.get('tenant-a/resp_2')).toMatchObject({ prefixKey: 'k:agent', rootTokens: 200 });

    // Others fill the cache (5,000 tokens): the conversation is evicted and reported gone.
    for (let i = 0; i < 6; i++)
      await generate(t.client, { sessionKey: `other_${i}`, tokens: prompt(1000, i * 7), maxOutputTokens: 2 }).result;
    await eventually(() => !stats.held.has('tenant-a/resp_2'));
    await eventually(() => stats.messages.at(-1)!.load!.kvTokens <= 5000 && stats.held.size >= 1);
  });

  it('shows calls in flight and the prefill queued ahead of a new one', async () => {
    t = await startTestWorker({
      SIM_SHARED_PREFILL: 'true',
      SIM_PREFILL_TOKENS_PER_SECOND: '2000',
      SIM_TOKENS_PER_SECOND: '1000',
    });
    const stats = watch(t);
    await eventually(() => stats.messages.length > 0);
    // Two calls of 1,000 uncached tokens each: half a second of prefill each, one after the other.
    const calls = [1, 2].map((i) =>
      generate(t.client, { sessionKey: `q${i}`, tokens: prompt(1000, i), maxOutputTokens: 4 }),
    );
    await eventually(() => stats.messages.some((m) => m.load!.inFlight === 2 && m.load!.queuedPrefillTokens === 2000));
    await Promise.all(calls.map((c) => c.result));
    await eventually(() => {
      const load = stats.messages.at(-1)!.load!;
      return load.inFlight === 0 && load.queuedPrefillTokens === 0 && load.prefillTokensPerSecond > 0;
    });
  });

  it('ends every stream when the worker drains, and refuses new ones', async () => {
    t = await startTestWorker();
    const stats = watch(t);
    await eventually(() => stats.messages.length > 0);
    t.worker.stats.drain();
    await stats.ended;
    const again = watch(t);
    await again.ended;
    expect(again.messages).toEqual([]);
  });
});
