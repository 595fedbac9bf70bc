import { getProfile, type ConversationEntry } from '@fastloop/model-profiles';
import { tenantCacheSalt } from '@fastloop/service-kit';
import { SlotScheduler } from './slot-scheduler';
import { eventually, generate, startTestWorker, type TestWorker } from './testing/test-worker';

const profile = getProfile('harmony-o200k');
const user = (text: string): ConversationEntry => ({ kind: 'message', role: 'user', text });
const prompt = profile.render({ tools: [] }, [user('tell me a long story')]);
/** Long answers at 50 tokens/s: a stream holds its slot until cancelled. */
const slow = { SIM_TOKENS_PER_SECOND: '50', SIM_ANSWER_WORDS: '400', SIM_TTFT_MS: '0' };
const salt = tenantCacheSalt;

/** Opens a stream for `tenant`; resolves once its first token arrived (it holds a slot). */
function open(t: TestWorker, tenant: string) {
  const g = generate(t.client, { tokens: prompt, cacheSalt: salt(tenant), maxOutputTokens: 4096 }, 60_000);
  const settled = g.result.then(
    () => 'done',
    (err: { code?: string }) => err.code ?? 'error',
  );
  const started = new Promise<'started'>((resolve) => g.call.once('data', () => resolve('started')));
  return { call: g.call, settled, started };
}

describe('generation slots shared between tenants', () => {
  let t: TestWorker | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('keeps slots for another tenant while one tenant floods the worker with streams', async () => {
    t = await startTestWorker({ ...slow, INFERENCE_MAX_CONCURRENCY: '8', INFERENCE_SLOT_WAIT_MS: '60000' });
    const slots = t.worker.service;
    const flood = Array.from({ length: 10 }, () => open(t as TestWorker, 'hostile'));
    await Promise.all(flood.slice(0, 7).map((s) => s.started));
    // 7 of 8 slots: the eighth is reserved for everyone else; 3 of the flood wait.
    await eventually(() => slots.inFlightCount === 10);
    const neighbour = open(t, 'neighbour');
    await expect(neighbour.started).resolves.toBe('started');
    neighbour.call.cancel();
    // A second neighbour gets the slot back, ahead of the flood's waiting streams.
    await neighbour.settled;
    const second = open(t, 'neighbour');
    await expect(second.started).resolves.toBe('started');
    // When a flood stream ends, a waiting flood stream takes its slot (it waited instead of failing).
    flood[0].call.cancel();
    await expect(flood[7].started).resolves.toBe('started');
    for (const s of [...flood, second]) s.call.cancel();
    await Promise.all([...flood, second].map((s) => s.settled));
  });

  it('lets a call wait a bounded time for a slot, then fails it with a retryable worker_overloaded', async () => {
    t = await startTestWorker({ ...slow, INFERENCE_MAX_CONCURRENCY: '1', INFERENCE_SLOT_WAIT_MS: '300' });
    const first = open(t, 'a');
    await first.started;
    await expect(open(t, 'b').settled).resolves.toBe('worker_overloaded');
    const waiting = open(t, 'b');
    await new Promise((resolve) => setTimeout(resolve, 50));
    first.call.cancel();
    // The slot freed within the wait: served, not refused.
    await expect(waiting.started).resolves.toBe('started');
    waiting.call.cancel();
    await Promise.all([first.settled, waiting.settled]);
  });

  it('honours per-tenant caps and weights from INFERENCE_TENANT_SHARES', async () => {
    t = await startTestWorker({
      ...slow,
      INFERENCE_MAX_CONCURRENCY: '6',
      INFERENCE_SLOT_WAIT_MS: '60000',
      INFERENCE_TENANT_SHARES: JSON.stringify({ small: { maxConcurrent: 2 } }),
    });
    const streams = Array.from({ length: 3 }, () => open(t as TestWorker, 'small'));
    await Promise.all(streams.slice(0, 2).map((s) => s.started));
    await eventually(() => (t as TestWorker).worker.service.inFlightCount === 3);
    const other = open(t, 'other');
    await expect(other.started).resolves.toBe('started');
    const third = await Promise.race([streams[2].started, new Promise((r) => setTimeout(() => r('waiting'), 300))]);
    expect(third).toBe('waiting');
    for (const s of [...streams, other]) s.call.cancel();
    await Promise.all([...streams, other].map((s) => s.settled));
  });
});

describe('SlotScheduler', () => {
  it('keeps an eighth of the slots from any one tenant by default, and is work-conserving for the rest', async () => {
    const slots = new SlotScheduler({ capacity: 64, waitMs: 0 });
    const abort = new AbortController();
    const hostile = [];
    for (let i = 0; i < 56; i++) hostile.push(await slots.acquire(salt('h'), abort.signal));
    await expect(slots.acquire(salt('h'), abort.signal)).rejects.toMatchObject({
      code: 'worker_overloaded',
      retryable: true,
    });
    const others = [];
    for (let i = 0; i < 8; i++) others.push(await slots.acquire(salt(`n${i}`), abort.signal));
    expect(slots.inUse()).toBe(64);
    for (const lease of [...hostile, ...others]) lease.release();
  });
});
