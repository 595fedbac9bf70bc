import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { openWsSession } from '../testing/ws-session';
import { TurnTiming } from './turn-timing';

describe('TurnTiming', () => {
  let now = 0;
  let clock: jest.SpyInstance;
  beforeEach(() => {
    now = 0;
    clock = jest.spyOn(performance, 'now').mockImplementation(() => now);
  });
  afterEach(() => clock.mockRestore());
  const chunk = (tokens: number, engineElapsedMs: number) =>
    ({ tokens: Array.from({ length: tokens }, (_, i) => i), engineElapsedMs }) as never;

  it("splits a turn into the API's own time and the engine's, summed over its Generate calls", () => {
    const timing = new TurnTiming(-2); // the request reached the edge 2 ms before the pipeline's clock
    now = 3;
    timing.callSent(); // a first call, whose worker failed before any token
    now = 4;
    timing.callSent(); // the retry
    now = 10;
    timing.chunk(chunk(2, 5)); // first tokens: 6 ms after the call at the edge, 5 ms by the engine's clock
    now = 14;
    timing.chunk(chunk(0, 6)); // an empty chunk does not count
    timing.chunk(chunk(4, 9));
    now = 20;
    const m = timing.event('resp_1').timing_metrics;
    expect(m).toEqual({
      response_id: 'resp_1',
      total_turn_time_s: 0.022,
      responses_duration_excl_engine_and_client_tool_time_ms: 13,
      pre_inference_ms: 5,
      engine_service_total_ms: 9,
      engine_service_ttft_total_ms: 5,
      engine_iapi_ttft_total_ms: 6,
      engine_service_tbt_across_engine_calls_ms: 1, // (9 − 5) ms over 4 later tokens
      engine_iapi_tbt_across_engine_calls_ms: 1, // (14 − 10) ms over 4 later tokens
      num_engine_calls: 2,
    });
  });

  it('times the first token when it reached the edge, not when it was read after a late input verdict', () => {
    const timing = new TurnTiming(0);
    now = 1;
    timing.callSent();
    now = 4;
    timing.firstArrived(); // 3 ms after the call
    now = 30;
    timing.firstArrived(); // only the first arrival counts
    timing.chunk(chunk(1, 2)); // read once the verdict came, 29 ms after the call
    now = 31;
    expect(timing.event('resp_3').timing_metrics).toMatchObject({
      engine_service_ttft_total_ms: 2,
      engine_iapi_ttft_total_ms: 3,
    });
  });

  it('takes the arrival of the first chunk with tokens, not of an empty one', () => {
    const timing = new TurnTiming(0);
    timing.callSent();
    now = 2;
    timing.arrived({ event: { $case: 'chunk', value: chunk(0, 1) } } as never); // no tokens yet
    now = 5;
    timing.arrived({ event: { $case: 'chunk', value: chunk(2, 4) } } as never);
    now = 9;
    timing.chunk(chunk(2, 4)); // read after the verdict
    expect(timing.event('resp_4').timing_metrics.engine_iapi_ttft_total_ms).toBe(5);
  });

  it('reports zeros for the engine when no call was made (generate: false, or a failure before it)', () => {
    const timing = new TurnTiming(0);
    now = 1.5;
    expect(timing.event('resp_2').timing_metrics).toMatchObject({
      total_turn_time_s: 0.0015,
      responses_duration_excl_engine_and_client_tool_time_ms: 1.5,
      pre_inference_ms: 1.5,
      engine_service_total_ms: 0,
      num_engine_calls: 0,
    });
  });
});

describe('the timing event of a turn whose input verdict comes after its first token', () => {
  it("gives the engine's time to first token as it reached the edge, the verdict's wait left out", async () => {
    const backends = new FakeBackends();
    const classify = backends.classify.bind(backends);
    backends.classify = async (req) => {
      await new Promise((r) => setTimeout(r, 200)); // the fake worker answers at once; the verdict lags
      return classify(req);
    };
    const { create } = openWsSession(fakeDeps(backends, true).deps, { timing: true });
    // A first turn loads what rendering needs (the tokenizer's tables): a cold render on a loaded
    // machine outlasted the verdict's lag, and the verdict then came before the first token.
    await create({ input: 'warm up' });
    const events = await create({ input: 'hi' });
    const m = events.find((e) => e.type === 'responsesapi.websocket_timing').timing_metrics;
    expect(events.at(-1).type).toBe('response.completed');
    expect(m.pre_inference_ms + m.engine_iapi_ttft_total_ms).toBeLessThan(150); // read after the verdict: ≥ 200
    expect(m.total_turn_time_s * 1000).toBeGreaterThanOrEqual(199);
  });
});
