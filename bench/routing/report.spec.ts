import type { PolicyRunData, TurnRecord } from './run-policy';
import { spread, summarize, summarizeKill, verdictOf } from './report';

const turn = (endMs: number, ttftMs: number, inputTokens = 1000, cachedTokens = 900, ok = true): TurnRecord => ({
  endMs,
  ok,
  ttftMs,
  inputTokens,
  cachedTokens,
  outputTokens: 40,
});

const run = (policy: string, turns: TurnRecord[], over: Partial<PolicyRunData> = {}): PolicyRunData => ({
  policy,
  durationS: 10,
  turns,
  errorKinds: {},
  workers: [
    { id: 'a', requests: 30, promptTokens: 1000, cachedTokens: 800, completionTokens: 10, meanInFlight: 3 },
    { id: 'b', requests: 10, promptTokens: 1000, cachedTokens: 800, completionTokens: 10, meanInFlight: 1 },
  ],
  placements: { session: 3 },
  sessionMoves: 1,
  retries: 0,
  loadAvg: [1, 2],
  ...over,
});

describe('routing report', () => {
  it('computes throughput, TTFT, hit rate and prefill per turn from completed turns only', () => {
    const s = summarize(run('x', [turn(1, 100), turn(2, 300, 2000, 1000), turn(3, NaN, 0, 0, false)]));
    expect(s).toMatchObject({ turns: 2, failedTurns: 1, turnsPerS: 0.2, ttftP50Ms: 200, prefillPerTurn: 550 });
    expect(s.hitRate).toBeCloseTo(1900 / 3000);
    expect(s.requestSpread).toBe(1.5);
    expect(s.inFlightSpread).toBe(1.5);
  });

  it('leaves a killed worker out of the spread and compares the windows around the kill', () => {
    const data = run(
      'cache-aware',
      [turn(1_000, 100), turn(4_000, 200), turn(6_000, 900), turn(7_000, NaN, 0, 0, false)],
      {
        kill: { atMs: 5_000, worker: 'b' },
        retries: 3,
      },
    );
    expect(summarize(data).requestSpread).toBe(1);
    expect(summarizeKill(data, 5)).toMatchObject({
      worker: 'b',
      failedTurns: 1,
      retries: 3,
      before: { turnsPerS: 0.4, ttftP50Ms: 150 },
      after: { turnsPerS: 0.2, ttftP50Ms: 900 },
    });
  });

  it('judges cache-aware against round robin with the issue’s targets', () => {
    const ca = summarize(run('cache-aware', [turn(1, 100), turn(2, 100), turn(3, 100), turn(4, 100)]));
    const rr = summarize(run('round-robin', [turn(1, 500), turn(2, 500)]));
    const v = verdictOf([ca, rr])!;
    expect(v.throughputX).toBe(2);
    expect(v.ttftP50X).toBe(5);
    expect(v.targets).toEqual({ throughput2x: true, ttft4x: true, spread125: false });
    expect(verdictOf([ca])).toBeUndefined();
  });

  it('measures spread as max over mean', () => {
    expect(spread([1, 1, 2])).toBeCloseTo(1.5);
    expect(spread([])).toBeNaN();
  });
});
