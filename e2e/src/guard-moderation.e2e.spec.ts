import { describeWhenAvailable, testModel } from '@fastloop/test-kit';
import { expectWellFormedStream, WsConversation } from './clients';
import { stackForThisFile } from './file-stack';
import { guardWorkerForThisFile } from './guard-worker';
import { MetricsScrape } from './metrics';

// Output moderation with a real guard model (stories260K through llama.cpp on a worker of its own):
// the output's calls continue the conversation's guard session and the next turn goes on from the
// output's, so the worker never loses the conversation's sequence (no prefix_miss, no conversation
// classified again) and never prefills the history again.
describeWhenAvailable(testModel())('output moderation with a llamacpp guard', () => {
  // The window the guard's sequence grows in: three turns of the first test fit with room to spare
  // (at stories260K's own 512 they reach the edge on the third turn, depending on how the output is
  // batched), and the second test outgrows it on purpose.
  const guard = guardWorkerForThisFile({ contextSize: 2048 });
  const stack = stackForThisFile(() => ({
    ...guard.stackEnv(),
    // Short plain answers: the guard's sequence holds the policy header, every input item and
    // every output batch (and the output again as next turn's items).
    SIM_TOOL_CALLS: '0',
    SIM_ANSWER_WORDS: '3',
    EDGE_OUTPUT_MODERATION: 'true',
  }));

  it('continues one guard sequence through input and output, turn after turn', async () => {
    const counters = async () => {
      const m = await MetricsScrape.of(stack(), 'safety');
      const { evaluated, cached } = await guard.tokens();
      return {
        calls:
          m.value('safety_guard_calls_total', { result: 'allow' }) +
          m.value('safety_guard_calls_total', { result: 'block' }),
        prefixMiss: m.value('safety_guard_calls_total', { result: 'prefix_miss' }),
        errors: m.value('safety_classifications_total', { verdict: 'error' }),
        sent: m.value('safety_guard_prompt_tokens_total'),
        evaluated,
        cached,
        outputBatches: m.value('safety_output_batches_total'),
      };
    };
    const conv = new WsConversation();
    try {
      const reusedPerCall: number[] = [];
      let previous: string | undefined;
      const start = await counters();
      let before = start;
      for (let t = 0; t < 3; t++) {
        const events = await conv.create({
          model: 'fastloop-sim',
          input: `Tom saw a cat ${t}.`,
          store: false,
          ...(previous ? { previous_response_id: previous } : {}),
        });
        expect(expectWellFormedStream(events).type).toBe('response.completed');
        previous = events.at(-1)!.response.id;
        const after = await counters();
        expect(after.outputBatches).toBeGreaterThan(before.outputBatches); // the output was judged
        // The worker prefilled at most what safety sent this turn: never the history again.
        expect(after.evaluated - before.evaluated).toBeLessThanOrEqual(after.sent - before.sent);
        reusedPerCall.push((after.cached - before.cached) / (after.calls - before.calls));
        before = after;
      }
      expect(before.prefixMiss - start.prefixMiss).toBe(0);
      expect(before.errors - start.errors).toBe(0); // no state refused, no conversation classified again
      for (let t = 1; t < 3; t++) expect(reusedPerCall[t]).toBeGreaterThan(reusedPerCall[t - 1]);
    } finally {
      conv.close();
    }
  });
  it("goes on judging a conversation longer than the guard model's context, in a fresh window", async () => {
    const guardCalls = async () => {
      const m = await MetricsScrape.of(stack(), 'safety');
      const calls = (result: string) => m.value('safety_guard_calls_total', { result });
      return {
        contextFull: calls('context_full'),
        judged: calls('allow') + calls('block'),
        failed: calls('unavailable') + calls('unreadable'),
      };
    };
    // ~900 tokens of story per turn: four turns are far more than the guard's window holds.
    const story = 'Tom saw a big cat in the park. '.repeat(60);
    const conv = new WsConversation();
    try {
      const start = await guardCalls();
      let previous: string | undefined;
      for (let t = 0; t < 4; t++) {
        const events = await conv.create({
          model: 'fastloop-sim',
          input: `${story}Turn ${t}.`,
          store: false,
          ...(previous ? { previous_response_id: previous } : {}),
        });
        expect(expectWellFormedStream(events).type).toBe('response.completed');
        previous = events.at(-1)!.response.id;
      }
      const end = await guardCalls();
      expect(end.contextFull - start.contextFull).toBeGreaterThan(0); // the window was outgrown...
      expect(end.failed - start.failed).toBe(0); // ...and every call still gave a verdict
      expect(end.judged - start.judged).toBeGreaterThanOrEqual(8); // input and output, every turn
    } finally {
      conv.close();
    }
  });
});
