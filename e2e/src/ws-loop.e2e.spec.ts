import { schemaProblems } from '@fastloop/test-kit';
import { stackForThisFile } from './file-stack';
import { expectWellFormedStream, openaiClient, WsConversation } from './clients';
import { MetricsScrape } from './metrics';
import { weatherTool } from './stack-fixture';

const MODEL = 'fastloop-sim';

// Content prefix caching off: the worker reuses only the caller's own session, so `cached_tokens`
// on a continuation proves the turn was served from the connection's state (its session key), not
// from a stateless resend that any prefix cache would also have matched.
const stack = stackForThisFile({ INFERENCE_PREFIX_CACHING: 'false' });

describe('WebSocket mode with the SDK ResponsesWS', () => {
  let conv: WsConversation;
  beforeEach(() => {
    conv = new WsConversation();
  });
  afterEach(() => conv.close());

  it('runs a 3-turn tool loop sending only new items with previous_response_id, each continuation served from the connection cache', async () => {
    const before = await MetricsScrape.of(stack());
    let events = await conv.create({
      model: MODEL,
      input: 'Check the weather in Tokyo, please.',
      tools: [weatherTool],
      store: false,
    });
    let terminal = expectWellFormedStream(events);
    const outputs: string[] = [];
    const usages: any[] = [];
    for (let turn = 0; turn < 3; turn++) {
      expect(terminal.type).toBe('response.completed');
      const r = terminal.response;
      usages.push(r.usage);
      const item = r.output[r.output.length - 1];
      outputs.push(item.type);
      const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
      expect(done).toEqual(r.output);
      if (item.type !== 'function_call') break;
      expect(schemaProblems(weatherTool.parameters, JSON.parse(item.arguments))).toEqual([]);
      events = await conv.create({
        model: MODEL,
        previous_response_id: r.id,
        store: false,
        tools: [weatherTool],
        input: [{ type: 'function_call_output', call_id: item.call_id, output: '{"temp_c": 18}' }],
      });
      terminal = expectWellFormedStream(events);
      expect(terminal.response.previous_response_id).toBe(r.id);
    }
    expect(outputs).toEqual(['function_call', 'function_call', 'message']);
    // Later turns reuse the worker's session: at least the whole previous prompt is cached. The
    // first turn shares nothing (no content prefix caching).
    expect(usages[0].input_tokens_details.cached_tokens).toBe(0);
    for (let t = 1; t < usages.length; t++) {
      expect(usages[t].input_tokens).toBeGreaterThan(usages[t - 1].input_tokens);
      expect(usages[t].input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(usages[t - 1].input_tokens);
      expect(usages[t].input_tokens_details.cached_tokens).toBeLessThan(usages[t].input_tokens);
    }
    const after = await MetricsScrape.of(stack());
    expect(
      after.value('fastloop_edge_state_cache_lookups_total', { result: 'hit' }) -
        before.value('fastloop_edge_state_cache_lookups_total', { result: 'hit' }),
    ).toBe(2);
    expect(
      after.value('fastloop_edge_turns_total', { transport: 'websocket', cached: 'true' }) -
        before.value('fastloop_edge_turns_total', { transport: 'websocket', cached: 'true' }),
    ).toBe(2);
  });

  it('gets no cached tokens for the same conversation resent statelessly over HTTP (the contrast that makes the check above meaningful)', async () => {
    const client = openaiClient();
    const input: any[] = [{ role: 'user', content: 'Check the weather in Tokyo, please.' }];
    const first = await client.responses.create({ model: MODEL, input, tools: [weatherTool], store: false });
    const call = first.output[0] as any;
    input.push(call, { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c": 18}' });
    const second = await client.responses.create({ model: MODEL, input, tools: [weatherTool], store: false });
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    expect(second.usage!.input_tokens_details.cached_tokens).toBe(0);
  });

  it('resolves an item_reference to an item of the conversation, and answers an unknown one with a 400 naming it', async () => {
    const r = expectWellFormedStream(
      await conv.create({ model: MODEL, input: 'Weather in Quito?', tools: [weatherTool], store: false }),
    ).response;
    const call = r.output[0];
    const unknown = await conv.create({
      model: MODEL,
      previous_response_id: r.id,
      store: false,
      tools: [weatherTool],
      input: [{ type: 'item_reference', id: 'fc_unknown' }],
    });
    expect(unknown).toEqual([
      expect.objectContaining({ type: 'error', status: 400, error: expect.objectContaining({ param: 'input[0].id' }) }),
    ]);
    // The failed continuation evicted r: chain from a fresh turn.
    const r2 = expectWellFormedStream(
      await conv.create({ model: MODEL, input: 'Weather in Lima?', tools: [weatherTool], store: false }),
    ).response;
    const ok = await conv.create({
      model: MODEL,
      previous_response_id: r2.id,
      store: false,
      tools: [weatherTool],
      input: [
        { type: 'item_reference', id: r2.output[0].id },
        { type: 'function_call_output', call_id: r2.output[0].call_id, output: 'cool' },
      ],
    });
    expect(expectWellFormedStream(ok).type).toBe('response.completed');
    expect(call.id).toMatch(/^fc_/);
  });

  it('mixes a full-history turn without previous_response_id on the same socket', async () => {
    const events = await conv.create({ model: MODEL, input: 'Weather in Cairo?', tools: [weatherTool], store: false });
    const r = expectWellFormedStream(events).response;
    const call = r.output[0];
    const full = await conv.create({
      model: MODEL,
      store: false,
      tools: [weatherTool],
      instructions: 'Answer briefly.',
      input: [
        { role: 'user', content: 'Weather in Cairo?' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: 'hot' },
      ],
    });
    expect(expectWellFormedStream(full).type).toBe('response.completed');
  });

  it('warms up with generate: false and chains from the returned id', async () => {
    const warm = await conv.create({
      model: MODEL,
      generate: false,
      store: false,
      tools: [weatherTool],
      input: [{ role: 'developer', content: 'You are a travel agent.' }],
    });
    const t = expectWellFormedStream(warm);
    expect(t.type).toBe('response.completed');
    expect(t.response.output).toEqual([]);
    const next = await conv.create({
      model: MODEL,
      previous_response_id: t.response.id,
      store: false,
      tools: [weatherTool],
      input: 'Weather in Lisbon?',
    });
    expect(expectWellFormedStream(next).response.output[0].type).toBe('function_call');
  });

  it('queues a response.create sent while another runs and answers both in order', async () => {
    conv.ws.send({ type: 'response.create', model: MODEL, input: 'first', store: false } as never);
    conv.ws.send({ type: 'response.create', model: MODEL, input: 'second', store: false } as never);
    const a = await conv.collect();
    const b = await conv.collect();
    expectWellFormedStream(a);
    expectWellFormedStream(b);
    expect(a[0].response.id).not.toBe(b[0].response.id);
  });

  it('sends the opt-in responsesapi.websocket_timing event, just before the terminal event, only when asked for', async () => {
    const timed = new WsConversation(openaiClient(), { 'x-responsesapi-include-timing-metrics': 'true' });
    try {
      const first = await timed.create({ model: MODEL, input: 'Weather in Oslo?', tools: [weatherTool], store: false });
      const r = first.at(-1)!.response;
      const second = await timed.create({
        model: MODEL,
        previous_response_id: r.id,
        store: false,
        tools: [weatherTool],
        input: [{ type: 'function_call_output', call_id: r.output.at(-1).call_id, output: '{"temp_c": 4}' }],
      });
      for (const events of [first, second]) {
        const timing = events.at(-2)!;
        expect(timing.type).toBe('responsesapi.websocket_timing');
        expect(expectWellFormedStream(events.filter((e) => e !== timing)).type).toBe('response.completed');
        const m = timing.timing_metrics;
        expect(m.response_id).toBe(events[0].response.id);
        expect(m.num_engine_calls).toBe(1);
        const total = m.total_turn_time_s * 1000;
        // The split adds up: the API's own time and the engine's make the turn; TTFT within both.
        expect(m.responses_duration_excl_engine_and_client_tool_time_ms).toBeCloseTo(
          total - m.engine_service_total_ms,
          1,
        );
        expect(m.engine_service_ttft_total_ms).toBeGreaterThan(0);
        expect(m.engine_service_ttft_total_ms).toBeLessThanOrEqual(m.engine_service_total_ms);
        expect(m.engine_iapi_ttft_total_ms).toBeGreaterThanOrEqual(m.engine_service_ttft_total_ms);
        expect(m.pre_inference_ms).toBeGreaterThan(0);
        expect(m.pre_inference_ms + m.engine_iapi_ttft_total_ms).toBeLessThanOrEqual(total);
        // Between tokens: 0 when the answer came in one chunk (the worker's chunking depends on timing;
        // turn-timing.spec.ts checks the arithmetic).
        expect(m.engine_service_tbt_across_engine_calls_ms).toBeGreaterThanOrEqual(0);
        expect(m.engine_iapi_tbt_across_engine_calls_ms).toBeGreaterThanOrEqual(0);
      }
    } finally {
      timed.close();
    }
    // Not asked for: not sent.
    const plain = await conv.create({ model: MODEL, input: 'Weather in Rome?', tools: [weatherTool], store: false });
    expect(plain.some((e) => e.type === 'responsesapi.websocket_timing')).toBe(false);
  });
});
