import { diffHistograms, msByFirstLabel, parseHistogram, STAGE_METRIC, turnDelta } from './metrics-scrape';

const page = (validate: number, count: number) => `# HELP ${STAGE_METRIC} Time spent in each stage of a turn
# TYPE ${STAGE_METRIC} histogram
${STAGE_METRIC}_bucket{le="0.001",service="edge",stage="validate",transport="websocket",cached="true"} ${count}
${STAGE_METRIC}_sum{service="edge",stage="validate",transport="websocket",cached="true"} ${validate}
${STAGE_METRIC}_count{service="edge",stage="validate",transport="websocket",cached="true"} ${count}
${STAGE_METRIC}_sum{service="edge",stage="render",transport="sse",cached="false"} 0.5
${STAGE_METRIC}_count{service="edge",stage="render",transport="sse",cached="false"} 3
# TYPE inference_ttft_seconds histogram
inference_ttft_seconds_sum{service="inference",engine="sim"} ${count * 0.08}
inference_ttft_seconds_count{service="inference",engine="sim"} ${count}
# TYPE fastloop_edge_engine_first_item_seconds histogram
fastloop_edge_engine_first_item_seconds_sum{service="edge",transport="websocket",cached="true"} ${count * 0.09}
fastloop_edge_engine_first_item_seconds_count{service="edge",transport="websocket",cached="true"} ${count}
# TYPE fastloop_edge_first_item_overhead_seconds histogram
fastloop_edge_first_item_overhead_seconds_sum{service="edge",transport="websocket",cached="true"} ${count * 0.002}
fastloop_edge_first_item_overhead_seconds_count{service="edge",transport="websocket",cached="true"} ${count}
# TYPE inference_worker_seconds histogram
inference_worker_seconds_sum{service="inference",engine="sim",part="prepare"} ${count * 0.0003}
inference_worker_seconds_count{service="inference",engine="sim",part="prepare"} ${count}
`;

describe('parseHistogram', () => {
  it('reads the sum and count of each series keyed by the asked labels', () => {
    const snap = parseHistogram(page(0.002, 4), STAGE_METRIC, ['stage', 'transport', 'cached']);
    expect(snap.get('validate|websocket|true')).toEqual({ sum: 0.002, count: 4 });
    expect(snap.get('render|sse|false')).toEqual({ sum: 0.5, count: 3 });
    expect(snap.size).toBe(2);
  });

  it('throws for a histogram the page does not declare, instead of reading it as no samples', () => {
    expect(() => parseHistogram(page(0.002, 4), 'fastloop_edge_turn_stage_secs', ['stage'])).toThrow(
      /fastloop_edge_turn_stage_secs is not on this \/metrics page/,
    );
  });
});

describe('diffHistograms', () => {
  it('returns only the series that grew, in ms', () => {
    const before = parseHistogram(page(0.002, 4), STAGE_METRIC, ['stage', 'transport', 'cached']);
    const after = parseHistogram(page(0.0035, 5), STAGE_METRIC, ['stage', 'transport', 'cached']);
    const d = diffHistograms(before, after);
    expect(d).toHaveLength(1);
    expect(d[0].labels).toEqual(['validate', 'websocket', 'true']);
    expect(d[0].sumMs).toBeCloseTo(1.5);
    expect(msByFirstLabel(d).validate).toBeCloseTo(1.5);
  });

  it("gives a turn its stage times and the engine's measured TTFT", () => {
    const snap = (n: number, v: number) => ({
      stages: parseHistogram(page(v, n), STAGE_METRIC, ['stage', 'transport', 'cached']),
      engineTtft: parseHistogram(page(v, n), 'inference_ttft_seconds', ['engine']),
      engineFirstItem: parseHistogram(page(v, n), 'fastloop_edge_engine_first_item_seconds', ['transport', 'cached']),
      edgeOverhead: parseHistogram(page(v, n), 'fastloop_edge_first_item_overhead_seconds', ['transport', 'cached']),
      workerTime: parseHistogram(page(v, n), 'inference_worker_seconds', ['part']),
    });
    const t = turnDelta(snap(4, 0.002), snap(5, 0.003));
    expect(t.generateCalls).toBe(1);
    expect(t.engineTtftMs).toBeCloseTo(80);
    expect(t.engineFirstItemMs).toBeCloseTo(90);
    expect(t.edgeOverheadMs).toBeCloseTo(2);
    expect(turnDelta(snap(4, 0.002), snap(6, 0.003)).engineFirstItemMs).toBeNaN();
    expect(t.stagesMs.validate).toBeCloseTo(1);
    expect(t.workerMs.prepare).toBeCloseTo(0.3);
  });
});
