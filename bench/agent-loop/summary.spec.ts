import type { Mode } from './options';
import type { TurnRecord } from './rollout-runner';
import { checkpointWindows, checkTargets, fmt, percentile, ratios, summarizeMode } from './summary';

function record(mode: Mode, turn: number, overheadMs: number, extra: Partial<TurnRecord> = {}): TurnRecord {
  return {
    mode,
    tps: 1000,
    phase: 'interleaved',
    rep: 1,
    position: 0,
    turn,
    outputType: 'function_call',
    requestBytes: 1000,
    inputTokens: 1000 * turn,
    cachedTokens: 0,
    outputTokens: 20,
    wallMs: 100,
    createdMs: 2,
    firstOutputMs: 90 + overheadMs,
    doneMs: 100,
    engineTtftMs: 80,
    engineFirstOutputMs: 90,
    engineMeasuredTtftMs: 81,
    engineMeasuredFirstOutputMs: 89,
    edgeOverheadMs: 1,
    overheadMs,
    modelOverheadMs: overheadMs + 1,
    stagesMs: { validate: 0.1, route: 0.1, render: 0.2, safety: 0.5, queue: 0.1, ttft: 83, stream: 10, post: 0.01 },
    ...extra,
  };
}

describe('percentile', () => {
  it('interpolates between the closest ranks and ignores non-finite values', () => {
    expect(percentile([3, 1, 2], 0.5)).toBe(2);
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(percentile([1, 2, 3, 4], 0)).toBe(1);
    expect(percentile([1, 2, 3, 4], 1)).toBe(4);
    expect(percentile([5, NaN, Infinity], 0.5)).toBe(5);
    expect(percentile([], 0.5)).toBeNaN();
  });
});

describe('checkpointWindows', () => {
  it('quotes the five turns ending at turns 5, 10, 25 and the last, where they exist', () => {
    expect(checkpointWindows(50)).toEqual([
      [1, 5],
      [6, 10],
      [21, 25],
      [46, 50],
    ]);
    expect(checkpointWindows(12)).toEqual([
      [1, 5],
      [6, 10],
      [8, 12],
    ]);
    expect(checkpointWindows(3)).toEqual([[1, 3]]);
  });
});

describe('summarizeMode', () => {
  it('takes the median of the pooled records of every window of five turns, and the median per turn for the chart', () => {
    const records = [1, 2, 3].flatMap((rep) =>
      Array.from({ length: 10 }, (_, i) => record('ws', i + 1, (i + 1) * rep, { rep, position: i % 2 })),
    );
    const s = summarizeMode('ws', 1000, records);
    expect(s.reps).toBe(3);
    expect(s.turns).toBe(10);
    expect(s.overheadByTurn[1]).toBe(2);
    expect(s.overheadByTurn[10]).toBe(20);
    // Turns 1–5 of reps 1..3: {1..5, 2..10 step 2, 3..15 step 3} pooled → the 8th of 15 is 5.
    expect(s.overheadWindows).toEqual({ '1–5': 5, '6–10': 16 });
    expect(s.overheadFirst5).toBe(5);
    expect(s.overheadLast5).toBe(16);
    expect(s.growthLast5).toBe(3.2);
    expect(s.wentFirst).toBe(15);
    expect(s.rolloutMs).toBe(1000);
    expect(s.stageMeanMs.safety).toBeCloseTo(0.5);
    expect(s.parts.late.preInference).toBeCloseTo(1.0);
    expect(s.parts.late.inferenceHop).toBeCloseTo(2);
    expect(s.parts.late.engineLate).toBeCloseTo(1);
  });
});

describe('ratios and targets', () => {
  it('compares modes measured at the same TPS and checks the issue targets', () => {
    const ws = Array.from({ length: 10 }, (_, i) => record('ws', i + 1, 0.8, { wallMs: 40 }));
    const http = Array.from({ length: 10 }, (_, i) => record('http-stateless', i + 1, 5, { wallMs: 100 }));
    const summaries = [summarizeMode('http-stateless', 1000, http), summarizeMode('ws', 1000, ws)];
    expect(summaries[1].modelOverheadLast5).toBeCloseTo(1.8);
    expect(ratios(summaries).find((r) => r.label === 'ws / http-stateless rollout time')?.value).toBeCloseTo(0.4);
    const targets = checkTargets(summaries);
    expect(targets.map((t) => t.met)).toEqual([true, true]);
    expect(targets[1].measured).toBe('60.0% faster');
  });
});

describe('summaries by phase', () => {
  it('keep interleaved and alone rollouts apart and compare each among its own', () => {
    const inter = Array.from({ length: 6 }, (_, i) => record('ws', i + 1, 1, { wallMs: 50 }));
    const solo = Array.from({ length: 6 }, (_, i) => record('ws', i + 1, 1, { wallMs: 30, phase: 'solo' }));
    const base = Array.from({ length: 6 }, (_, i) =>
      record('http-stateless', i + 1, 9, { wallMs: 100, phase: 'solo' }),
    );
    const summaries = [
      summarizeMode('ws', 1000, [...inter, ...solo, ...base]),
      summarizeMode('ws', 1000, [...inter, ...solo], 'solo'),
      summarizeMode('http-stateless', 1000, base, 'solo'),
    ];
    expect(summaries.map((s) => s.rolloutMs)).toEqual([300, 180, 600]);
    expect(ratios(summaries)).toEqual([
      { tps: 1000, phase: 'solo', label: 'ws / http-stateless rollout time', value: 0.3 },
    ]);
  });
});

describe('fmt', () => {
  it('keeps about three significant digits', () => {
    expect(fmt(1234.5)).toBe('1235');
    expect(fmt(12.345)).toBe('12.3');
    expect(fmt(0.1234)).toBe('0.12');
    expect(fmt(NaN)).toBe('n/a');
  });
});
