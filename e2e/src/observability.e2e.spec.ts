import { expectWellFormedStream, openaiClient, WsConversation } from './clients';
import { stackForThisFile } from './file-stack';
import { MetricsScrape } from './metrics';

const MODEL = 'fastloop-sim';
const stack = stackForThisFile();

describe('observability', () => {
  it('times every stage of a turn on the edge /metrics, by transport and cached, once per turn', async () => {
    const before = await MetricsScrape.of(stack());
    const conv = new WsConversation();
    try {
      const first = expectWellFormedStream(
        await conv.create({ model: MODEL, input: 'first turn', store: false }),
      ).response;
      expectWellFormedStream(
        await conv.create({ model: MODEL, previous_response_id: first.id, input: 'second turn', store: false }),
      );
    } finally {
      conv.close();
    }
    await openaiClient().responses.create({ model: MODEL, input: 'plain http', store: false });
    await new Promise((res) => setTimeout(res, 100)); // the `post` stage is recorded just after the terminal event
    const after = await MetricsScrape.of(stack());
    const delta = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);

    for (const stage of ['validate', 'load', 'safety', 'route', 'render', 'queue', 'ttft', 'stream', 'post']) {
      expect([
        stage,
        delta('fastloop_edge_turn_stage_seconds_count', { stage, transport: 'websocket', cached: 'true' }),
      ]).toEqual([stage, 1]);
      expect([
        stage,
        delta('fastloop_edge_turn_stage_seconds_count', { stage, transport: 'http', cached: 'false' }),
      ]).toEqual([stage, 1]);
    }
    expect(
      delta('fastloop_edge_turn_stage_seconds_count', { stage: 'render', transport: 'websocket', cached: 'false' }),
    ).toBe(1);
    expect(delta('fastloop_edge_state_cache_lookups_total', { result: 'hit' })).toBe(1);
    expect(delta('fastloop_edge_turns_total', { transport: 'websocket', status: 'completed' })).toBe(2);
    expect(delta('fastloop_edge_turns_total', { transport: 'http', status: 'completed' })).toBe(1);
    expect(delta('fastloop_edge_first_item_overhead_seconds_count', { transport: 'websocket', cached: 'true' })).toBe(
      1,
    );
    expect(delta('fastloop_edge_engine_first_item_seconds_count', { transport: 'http', cached: 'false' })).toBe(1);
  });
});
