import { instantArgs, runWanted } from './instant';
import { renderInstantMarkdown } from './instant-report';
import { parseOptions } from './options';
import { buildReport } from './report-json';
import type { TurnRecord } from './rollout-runner';

function turn(mode: TurnRecord['mode'], t: number, firstOutputMs: number): TurnRecord {
  return {
    mode,
    tps: 1_000_000,
    phase: 'interleaved',
    rep: 1,
    position: 0,
    turn: t,
    outputType: 'function_call',
    requestBytes: 100,
    inputTokens: 1000 * t,
    cachedTokens: 0,
    outputTokens: 20,
    wallMs: 10,
    createdMs: 1,
    firstOutputMs,
    doneMs: 10,
    engineTtftMs: 0,
    engineFirstOutputMs: 0,
    engineMeasuredTtftMs: 0.5,
    engineMeasuredFirstOutputMs: 0.6,
    edgeOverheadMs: 2,
    overheadMs: firstOutputMs - 0.6,
    modelOverheadMs: firstOutputMs,
    stagesMs: { validate: 0.2, render: 0.3, ttft: 1.5 },
    workerMs: { prepare: 0.05, engine_read: 0.1, keep: 0.02 },
  };
}

describe('the instant-engine test', () => {
  it('runs 50 turns against an engine that costs nothing, growing to about 52k tokens', () => {
    const o = parseOptions(instantArgs(['--reps', '2']), '/repo');
    expect(o).toMatchObject({
      turns: 50,
      ttftMs: 0,
      reps: 2,
      soloReps: 0,
      modes: ['http-stateless', 'ws', 'grpc'],
      outputBytes: [1900, 5700],
    });
    expect(o.tps[0]).toBeGreaterThanOrEqual(1e6);
  });

  it('takes --modes, --plain-calls and --alone, and refuses a flag it does not take instead of ignoring it', () => {
    expect(parseOptions(instantArgs(['--modes', 'ws']), '/repo').modes).toEqual(['ws']);
    expect(runWanted([], 'plain-calls')).toBe(true);
    expect(runWanted(['--plain-calls', 'off'], 'plain-calls')).toBe(false);
    expect(runWanted(['--plain-calls', 'off'], 'alone')).toBe(true);
    expect(runWanted(['--alone', 'off'], 'alone')).toBe(false);
    expect(() => runWanted(['--plain-calls', 'no'], 'plain-calls')).toThrow(/on or off/);
    expect(() => instantArgs(['--turns', '10'])).toThrow(/not --turns/);
  });

  it('reports ws time to the first item against the floor + 1 ms target, with the hops and the edge stage by stage', () => {
    const options = parseOptions(instantArgs([]), '/repo');
    const records = Array.from({ length: 50 }, (_, i) => turn('ws', i + 1, i < 45 ? 4 : 6));
    const md = renderInstantMarkdown(
      buildReport(options, { summaries: [], ratios: [], targets: [], notes: [], records }),
      {
        generatedAt: 'x',
        rows: [],
        wsSum: 0.5,
        grpcSum: 2.5,
      },
    );
    expect(md).toContain('| ws | 4.00 | 6.00 | 1.50× | 50000 |');
    expect(md).toContain('= **3.00 ms** before the edge does any work');
    expect(md).toContain(
      '| ws time to first output item p50 at turn 50 (turns 46–50) <= floor + 1 ms (4.00 ms) | 6.00 ms (floor 3.00 ms) | **no** |',
    );
    expect(md).toContain('| ws flat: last 5 / first 5 <= 1.5× | 1.50× (4.00 → 6.00 ms) | yes |');
    expect(md).toContain('| … of which the simulator reading the prompt | 0.10 → 0.10 |');
    expect(md).toContain('| … … render (the new items to tokens) | 0.30 → 0.30 |');
  });

  it('puts multiplexed streams beside a gRPC call each, against the floor of the open stream', () => {
    const options = parseOptions(instantArgs([]), '/repo');
    const records = Array.from({ length: 50 }, (_, i) => turn('ws', i + 1, 4));
    const plain = Array.from({ length: 50 }, (_, i) => turn('ws', i + 1, 5.5));
    const md = renderInstantMarkdown(
      buildReport(options, { summaries: [], ratios: [], targets: [], notes: [], records }),
      { generatedAt: 'x', rows: [], wsSum: 0.5, grpcSum: 2.5, muxSum: 1 },
      plain,
    );
    expect(md).toContain(
      "on the edge's open multiplexed stream 1.00 ms = **1.50 ms** before the edge does any work (as a grpc-js call of its own: 2.50 ms, 3.00 ms in all)",
    );
    expect(md).toContain('| client: send → first output item | 4.00 → 4.00 | 5.50 → 5.50 |');
    expect(md).toContain('multiplexed streams 4.00 ms vs 5.50 ms at turns 46–50 (the default)');
  });

  it('puts the WebSocket rollout alone beside it interleaved, with the ratio at the last turns', () => {
    const options = parseOptions(instantArgs([]), '/repo');
    const records = Array.from({ length: 50 }, (_, i) => turn('ws', i + 1, 4));
    const alone = Array.from({ length: 50 }, (_, i) => turn('ws', i + 1, i < 45 ? 9 : 10));
    const floor = { generatedAt: 'x', rows: [], wsSum: 0.5, grpcSum: 2.5, muxSum: 1 };
    const report = buildReport(options, { summaries: [], ratios: [], targets: [], notes: [], records });
    const md = renderInstantMarkdown(report, floor, [], alone);
    expect(md).toContain('## One agent alone (WebSocket, measured side by side)');
    expect(md).toContain('| client: send → first output item | 4.00 → 4.00 | 9.00 → 10.0 |');
    expect(md).toContain(
      'One agent alone: 10.0 ms to the first output item at turns 46–50, 2.50× the interleaved 4.00 ms.',
    );
    expect(md).not.toContain('a gRPC call each |');
    expect(renderInstantMarkdown(report, floor)).not.toContain('One agent alone');
  });
});
