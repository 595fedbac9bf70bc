import type { Stack } from '@fastloop/launcher';
import { expectWellFormedStream, WsConversation } from './clients';
import { stackForThisFile } from './file-stack';
import { guardWorkerForThisFile } from './guard-worker';
import { MetricsScrape } from './metrics';
import { describeWhenAvailable, testModel } from '@fastloop/test-kit';

const MODEL = 'fastloop-sim';
const PLANTED = 'project falcon';

/** The safety service's guard counters. */
async function counters(stack: Stack) {
  const m = await MetricsScrape.of(stack, 'safety');
  return {
    sent: m.value('safety_guard_prompt_tokens_total'),
    prefilled: m.value('safety_guard_prefill_tokens_total'),
    cached: m.value('safety_guard_cached_tokens_total'),
    allow: m.value('safety_guard_calls_total', { result: 'allow' }),
    block: m.value('safety_guard_calls_total', { result: 'block' }),
    failed:
      m.value('safety_guard_calls_total', { result: 'unavailable' }) +
      m.value('safety_guard_calls_total', { result: 'unreadable' }),
  };
}

const question = (t: number) => `Turn ${t}: please summarise the notes in file-${t}.md for me, briefly and plainly.`;

// The policy (guard) model at process level: safety asks the stack's own inference worker, whose
// simulated engine plays a guard that answers `unsafe` when the new text names a planted term.
describe('a guard model on the stack’s simulated worker', () => {
  const stack = stackForThisFile({
    SAFETY_GUARD_ADDRESS: 'inference',
    SAFETY_GUARD_DEFAULT: 'true',
    SIM_GUARD_BLOCK_TERMS: PLANTED,
    SIM_ANSWER_WORDS: '12',
    // One output-moderation call per turn (the final one): the guard calls per turn are then fixed.
    EDGE_OUTPUT_MODERATION_FLUSH_MS: '60000',
    EDGE_OUTPUT_MODERATION_FLUSH_CHARS: '100000',
  });
  const guardCounters = () => counters(stack());

  it('judges every turn of a WebSocket conversation, prefilling only the new tokens, and blocks the planted term', async () => {
    const conv = new WsConversation();
    try {
      const prefilled: number[] = [];
      const cached: number[] = [];
      let previous: string | undefined;
      let before = await guardCounters();
      for (let t = 0; t < 6; t++) {
        const events = await conv.create({
          model: MODEL,
          input: question(t),
          store: false,
          ...(previous ? { previous_response_id: previous } : {}),
        });
        const done = expectWellFormedStream(events);
        expect(done.type).toBe('response.completed');
        previous = done.response.id;
        const after = await guardCounters();
        expect(after.allow).toBeGreaterThan(before.allow);
        expect(after.block + after.failed).toBe(before.block + before.failed);
        // Reuse per guard call: a turn's output is one or two calls (the first text goes at once, the
        // rest with the final batch), as the engine's chunks fall.
        prefilled.push(after.prefilled - before.prefilled);
        cached.push((after.cached - before.cached) / (after.allow - before.allow));
        before = after;
      }
      // Per turn the guard's worker prefills about the same (the new items), while what it reuses grows
      // with the conversation (output moderation continues the conversation's guard session).
      for (let t = 2; t < 6; t++) {
        expect(prefilled[t]).toBeGreaterThan(0);
        expect(prefilled[t]).toBeLessThan(prefilled[1] * 1.5);
        expect(cached[t]).toBeGreaterThan(cached[t - 1]);
      }
      expect(prefilled[5]).toBeLessThan(cached[5] / 2);

      const blocked = await conv.create({
        model: MODEL,
        input: `Now tell me everything about ${PLANTED.toUpperCase()}.`,
        store: false,
        previous_response_id: previous,
      });
      expect(blocked).toEqual([
        expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'invalid_prompt' }) }),
      ]);
      expect(blocked[0].error.message).toContain('guard-model');
      expect(blocked[0].error.message.toLowerCase()).not.toContain(PLANTED);
      const afterBlock = await guardCounters();
      expect(afterBlock.block).toBe(before.block + 1);

      // A block evicts the turn it continued (as for the rules); a new conversation starts a new guard session.
      const fresh = await conv.create({ model: MODEL, input: question(6), store: false });
      expect(expectWellFormedStream(fresh).type).toBe('response.completed');
      expect((await guardCounters()).allow).toBeGreaterThan(afterBlock.allow);
    } finally {
      conv.close();
    }
  });
});

// The same mechanism with a real model as the guard: stories260K through llama.cpp on its own worker
// process, owned by this test. Its verdicts mean nothing; what is shown is that the verdict is
// constrained (the grammar of the guard's response format), that each turn reuses the guard's KV
// prefix, and that the worker prefills per turn about what is new.
describeWhenAvailable(testModel())('a real guard model (llamacpp on stories260K) on a worker of its own', () => {
  const guard = guardWorkerForThisFile();
  const stack = stackForThisFile(() => ({
    ...guard.stackEnv(),
    SIM_ANSWER_WORDS: '3',
    // Output moderation's calls are guard calls of their own (continuing the conversation's session);
    // off here, the worker serves one guard call per turn and its per-turn prefill is what is new.
    EDGE_OUTPUT_MODERATION: 'false',
  }));

  it('answers only verdicts, reuses its KV prefix every turn and prefills about what is new', async () => {
    const conv = new WsConversation();
    try {
      const prefilled: number[] = [];
      const reused: number[] = [];
      let previous: string | undefined;
      let before = { ...(await counters(stack())), ...(await guard.tokens()) };
      for (let t = 0; t < 4; t++) {
        const events = await conv.create({
          model: MODEL,
          input: `Tom saw a cat ${t}.`,
          store: false,
          ...(previous ? { previous_response_id: previous } : {}),
        });
        const done = expectWellFormedStream(events);
        expect(done.type).toBe('response.completed');
        previous = done.response.id;
        const after = { ...(await counters(stack())), ...(await guard.tokens()) };
        expect(after.allow + after.block).toBeGreaterThan(before.allow + before.block);
        expect(after.failed).toBe(0); // every completion was `safe` or `unsafe`: the grammar held
        // What safety was told was prefilled is what llama.cpp's own token meter counted on the
        // worker (this worker serves only the guard): the same number on both sides of the wire.
        expect(after.prefilled - before.prefilled).toBe(after.evaluated - before.evaluated);
        prefilled.push(after.prefilled - before.prefilled);
        reused.push(after.cached - before.cached);
        // The worker prefilled nothing of the history: at most what safety sent this turn. Sent is
        // counted by safety, prefilled by llama.cpp's meter, so a wrong skip (history evaluated
        // again, whatever the engine planned) fails here.
        expect(prefilled[t]).toBeLessThanOrEqual(after.sent - before.sent);
        before = after;
      }
      expect(reused[0]).toBe(0);
      for (let t = 1; t < 4; t++) {
        expect(prefilled[t]).toBeLessThan(prefilled[0]); // the first turn also prefilled the policy header
        if (t > 1) expect(prefilled[t]).toBeLessThan(prefilled[1] * 1.5);
        expect(reused[t]).toBeGreaterThan(reused[t - 1]);
      }
    } finally {
      conv.close();
    }
  });
});
