import { stackForThisFile } from './file-stack';
import { expectWellFormedStream } from './clients';
import { openSession } from './grpc-session';
import { MetricsScrape } from './metrics';
import { weatherTool } from './stack-fixture';

const MODEL = 'fastloop-sim';

const stack = stackForThisFile();

describe('gRPC bidi stream (fastloop.responses.v1)', () => {
  it('runs the same tool loop as WebSocket mode over one stream', async () => {
    const s = openSession();
    const before = await MetricsScrape.of(stack());
    try {
      let events = await s.create({ model: MODEL, input: 'Weather in Nairobi?', tools: [weatherTool], store: false });
      let r = expectWellFormedStream(events).response;
      const kinds = [r.output[0].type];
      while (r.output[0].type === 'function_call') {
        events = await s.create({
          model: MODEL,
          previous_response_id: r.id,
          store: false,
          tools: [weatherTool],
          input: [{ type: 'function_call_output', call_id: r.output[0].call_id, output: 'rain' }],
        });
        r = expectWellFormedStream(events).response;
        kinds.push(r.output[0].type);
      }
      expect(kinds).toEqual(['function_call', 'function_call', 'message']);
      expect(r.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
      // Both continuations were served from the stream's own cache, not rebuilt or resent.
      const after = await MetricsScrape.of(stack());
      expect(
        after.value('fastloop_edge_state_cache_lookups_total', { result: 'hit' }) -
          before.value('fastloop_edge_state_cache_lookups_total', { result: 'hit' }),
      ).toBe(2);
      expect(
        after.value('fastloop_edge_turns_total', { transport: 'grpc', cached: 'true', status: 'completed' }) -
          before.value('fastloop_edge_turns_total', { transport: 'grpc', cached: 'true', status: 'completed' }),
      ).toBe(2);
      const bad = await s.create({ model: MODEL, input: 'x', previous_response_id: 'resp_nope' });
      expect(bad[0]).toMatchObject({ type: 'error', status: 400, error: { code: 'previous_response_not_found' } });
    } finally {
      s.close();
    }
  });

  it('sends the timing sideband before each terminal event when the metadata asks for it', async () => {
    const s = openSession(undefined, { 'x-responsesapi-include-timing-metrics': 'true' });
    try {
      const events = await s.create({ model: MODEL, input: 'Weather in Lima?', tools: [weatherTool], store: false });
      const timing = events.at(-2);
      expect(timing.type).toBe('responsesapi.websocket_timing');
      expect(timing.timing_metrics).toMatchObject({ response_id: events[0].response.id, num_engine_calls: 1 });
      expect(expectWellFormedStream(events.filter((e) => e !== timing)).type).toBe('response.completed');
    } finally {
      s.close();
    }
  });

  it('sends a client that asks for batches the events one piece of work emits as one message', async () => {
    const s = openSession(undefined, { 'x-fastloop-event-batch': 'true' });
    try {
      const events = await s.create({ model: MODEL, input: 'Weather in Oslo?', tools: [weatherTool], store: false });
      expect(expectWellFormedStream(events).type).toBe('response.completed');
      expect(s.messages).toBeLessThan(events.length);
    } finally {
      s.close();
    }
  });

  it('refuses a stream without a valid key', async () => {
    const s = openSession('wrong');
    const err = await new Promise<any>((resolve) => s.call.on('error', resolve));
    expect(err.code).toBe(16); // UNAUTHENTICATED
    s.close();
  });
});
