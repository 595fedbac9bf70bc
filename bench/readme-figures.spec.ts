import { parseOptions } from './agent-loop/options';
import { buildReport } from './agent-loop/report-json';
import type { TurnRecord } from './agent-loop/rollout-runner';
import { summarizeMode } from './agent-loop/summary';
import { agentLoopFigures, floorAndLoadFigures, floorFigures, linkFigures } from './readme-figures';
import { suiteSteps } from './run-all';

function records(
  mode: TurnRecord['mode'],
  phase: TurnRecord['phase'],
  wallMs: number,
  overheadMs: number,
): TurnRecord[] {
  return Array.from({ length: 12 }, (_, i) => ({
    mode,
    tps: 1000,
    phase,
    rep: 1,
    position: 0,
    turn: i + 1,
    outputType: 'function_call',
    requestBytes: 1000,
    inputTokens: 100,
    cachedTokens: 0,
    outputTokens: 10,
    wallMs,
    createdMs: 1,
    firstOutputMs: 50,
    doneMs: wallMs,
    engineTtftMs: 40,
    engineFirstOutputMs: 45,
    engineMeasuredTtftMs: 41,
    engineMeasuredFirstOutputMs: 46,
    edgeOverheadMs: 2,
    overheadMs,
    modelOverheadMs: overheadMs,
    stagesMs: {},
    workerMs: { prepare: 0.1, engine_read: 0.2, keep: 0.05 },
  }));
}

function report(wall: Record<string, number>) {
  const options = parseOptions(['--quick', '--modes', 'http-stateless,http-previous,ws'], '/repo');
  const all = Object.entries(wall).flatMap(([m, w]) => [
    ...records(m as TurnRecord['mode'], 'interleaved', w, 3),
    ...records(m as TurnRecord['mode'], 'solo', w / 2, 3),
  ]);
  const summaries = (['interleaved', 'solo'] as const).flatMap((phase) =>
    options.modes.map((m) => summarizeMode(m, 1000, all, phase)),
  );
  return buildReport(options, { summaries, ratios: [], targets: [], notes: [], records: all });
}

describe('the README benchmark figures', () => {
  it('quote the committed report with its estimator, interleaved and alone', () => {
    const lines = agentLoopFigures(report({ 'http-stateless': 1000, 'http-previous': 800, ws: 500 }), undefined).join(
      '\n',
    );
    expect(lines).toContain('| at 1000 tok/s | http-stateless | http-previous | ws |');
    expect(lines).toContain('| rollout, prefix caching on, interleaved (s) | 12.0 | 9.60 | 6.00 |');
    expect(lines).toContain('| rollout, prefix caching on, one agent alone (s) | 6.00 | 4.80 | 3.00 |');
    expect(lines).toContain("| worker's own time per turn, last 5 (ms) | 0.35 | 0.35 | 0.35 |");
    expect(lines).toContain('Estimator: every per-turn figure is the median');
  });

  it('give the WebSocket gain per link preset', () => {
    expect(linkFigures([['home', report({ 'http-stateless': 1000, 'http-previous': 800, ws: 500 })]])).toContain(
      '| home | 50.0% | 37.5% |',
    );
  });
});

describe('the transport floor figure', () => {
  it('quotes each hop from the report, the open stream as the floor when measured', () => {
    const rows = [
      { hop: 'gRPC (grpc-js): Generate call → handler', p50: 0.65 },
      { hop: 'gRPC (grpc-js): chunk write → client', p50: 0.42 },
      { hop: 'gRPC stream (mux): Generate start → handler', p50: 0.2 },
      { hop: 'gRPC stream (mux): chunk write → client', p50: 0.3 },
    ];
    const [line] = floorFigures({ rows, wsSum: 0.13, grpcSum: 1.07, muxSum: 0.5 });
    expect(line).toContain(
      "a Generate call as a grpc-js call of its own 0.65 there + 0.42 ms back (1.07 ms), on the edge's open multiplexed stream 0.20 there + 0.30 ms back (0.50 ms): 0.63 ms before",
    );
    expect(floorFigures(undefined)).toEqual([]);
  });
});

describe('the instant-engine figure', () => {
  it('quotes the rollout interleaved, with a gRPC call each and alone when those ran', () => {
    const options = parseOptions(['--turns', '12', '--modes', 'ws'], '/repo');
    const report = (firstOutputMs: number) =>
      buildReport(options, {
        summaries: [],
        ratios: [],
        targets: [],
        notes: [],
        records: records('ws', 'interleaved', 100, 5).map((r) => ({ ...r, firstOutputMs })),
      });
    const [, line] = floorAndLoadFigures(report(4), 1.5, undefined, report(6), report(9));
    expect(line).toContain('WebSocket time to the first output item 4.00 ms at turns 1–5, 4.00 ms at turns 8–12');
    expect(line).toContain('instead of the multiplexed streams, 6.00 ms at turns 8–12; one agent alone');
    expect(line).toMatch(
      /one agent alone \(the WebSocket rollout with nothing else running\), 9.00 ms at turns 8–12\.$/,
    );
    expect(floorAndLoadFigures(report(4), 1.5, undefined)[1]).toMatch(/measured in the same run\.$/);
  });
});

describe('bench:full', () => {
  it('runs every suite, the link presets and the side by side, writing under one folder', () => {
    const steps = suiteSteps(false, '/out');
    expect(steps.map(([, script]) => script)).toEqual([
      'bench/agent-loop/main.ts',
      'bench/agent-loop/main.ts',
      'bench/agent-loop/main.ts',
      'bench/agent-loop/main.ts',
      'bench/agent-loop/main.ts',
      'bench/agent-loop/link-report.ts',
      'bench/agent-loop/instant.ts',
      'bench/micro/transport-floor.bench.ts',
      'bench/load/main.ts',
      'bench/load/first-text.ts',
      'bench/engines/main.ts',
      'bench/engines/tool-call-turns.ts',
    ]);
    expect(steps[1][2]).toEqual(['--prefix-caching', 'off', '--tps', '1000', '--out', '/out/prefix-caching-off']);
    expect(suiteSteps(true, '/q').every(([, s, args]) => !s.endsWith('main.ts') || args.includes('--quick'))).toBe(
      true,
    );
  });
});
