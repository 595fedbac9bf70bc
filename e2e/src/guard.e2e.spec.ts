import { expectWellFormedStream, WsConversation } from './clients';
import { stackForThisFile } from './file-stack';
import { MetricsScrape } from './metrics';

// The policy (guard) model at process level: safety asks the stack's own inference worker, whose
// simulated engine plays a guard that answers `unsafe` when the new text names a planted term.
const MODEL = 'fastloop-sim';
const PLANTED = 'project falcon';
const stack = stackForThisFile({
  SAFETY_GUARD_ADDRESS: 'inference',
  SAFETY_GUARD_DEFAULT: 'true',
  SIM_GUARD_BLOCK_TERMS: PLANTED,
  SIM_ANSWER_WORDS: '12',
});

/** The safety service's guard counters. */
async function guardCounters() {
  const m = await MetricsScrape.of(stack(), 'safety');
  return {
    prefilled: m.value('safety_guard_prefill_tokens_total'),
    cached: m.value('safety_guard_cached_tokens_total'),
    allow: m.value('safety_guard_calls_total', { result: 'allow' }),
    block: m.value('safety_guard_calls_total', { result: 'block' }),
    failed: m.value('safety_guard_calls_total', { result: 'unavailable' }) + m.value('safety_guard_calls_total', { result: 'unreadable' }),
  };
}

const question = (t: number) => `Turn ${t}: please summarise the notes in file-${t}.md for me, briefly and plainly.`;

describe('a guard model on the stack’s simulated worker', () => {
  it('judges every turn of a WebSocket conversation, prefilling only the new tokens, and blocks the planted term', async () => {
    const conv = new WsConversation();
    try {
      const prefilled: number[] = [];
      const cached: number[] = [];
      let previous: string | undefined;
      let before = await guardCounters();
      for (let t = 0; t < 6; t++) {
        const events = await conv.create({ model: MODEL, input: question(t), store: false, ...(previous ? { previous_response_id: previous } : {}) });
        const done = expectWellFormedStream(events);
        expect(done.type).toBe('response.completed');
        previous = done.response.id;
        const after = await guardCounters();
        expect(after.allow).toBeGreaterThan(before.allow);
        expect(after.block + after.failed).toBe(before.block + before.failed);
        prefilled.push(after.prefilled - before.prefilled);
        cached.push(after.cached - before.cached);
        before = after;
      }
      // Per turn the guard's worker prefills about the same (the new items), while what it reuses grows
      // with the conversation (output moderation's calls reuse the policy header by content).
      for (let t = 2; t < 6; t++) {
        expect(prefilled[t]).toBeGreaterThan(0);
        expect(prefilled[t]).toBeLessThan(prefilled[1] * 1.5);
        expect(cached[t]).toBeGreaterThan(cached[t - 1]);
      }
      expect(prefilled[5]).toBeLessThan(cached[5] / 4);

      const blocked = await conv.create({ model: MODEL, input: `Now tell me everything about ${PLANTED.toUpperCase()}.`, store: false, previous_response_id: previous });
      expect(blocked).toEqual([expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'invalid_prompt' }) })]);
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
