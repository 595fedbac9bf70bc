import { parseOptions } from './options';
import { buildReport, renderJson } from './report-json';
import { renderMarkdown } from './report-md';
import { renderSvg } from './report-svg';
import type { TurnRecord } from './rollout-runner';
import { checkTargets, ratios, summarizeMode } from './summary';

function records(mode: TurnRecord['mode'], overhead: (turn: number) => number): TurnRecord[] {
  return Array.from({ length: 12 }, (_, i) => ({
    mode,
    tps: 1000,
    phase: 'interleaved' as const,
    rep: 1,
    position: i % 2,
    turn: i + 1,
    outputType: i === 11 ? 'message' : 'function_call',
    requestBytes: 2048,
    inputTokens: 3000 + i * 700,
    cachedTokens: 0,
    outputTokens: 25,
    wallMs: 120,
    createdMs: 3,
    firstOutputMs: 100 + overhead(i + 1),
    doneMs: 120,
    engineTtftMs: 90,
    engineFirstOutputMs: 100,
    engineMeasuredTtftMs: 91,
    engineMeasuredFirstOutputMs: 99,
    edgeOverheadMs: 1,
    overheadMs: overhead(i + 1),
    modelOverheadMs: overhead(i + 1) + 1,
    stagesMs: { validate: 0.2, ttft: 93 },
  }));
}

function sampleReport() {
  const options = parseOptions(['--quick'], '/repo');
  const all = [...records('http-stateless', (t) => 2 + t), ...records('ws', () => 0.9)];
  const summaries = options.modes
    .filter((m) => m === 'ws' || m === 'http-stateless')
    .map((m) => summarizeMode(m, 1000, all));
  return buildReport(options, {
    summaries,
    ratios: ratios(summaries),
    targets: checkTargets(summaries),
    notes: ['a note'],
    records: all,
  });
}

describe('renderMarkdown', () => {
  it('writes one row per mode with the checkpoint overheads and the growth', () => {
    const md = renderMarkdown(sampleReport());
    expect(md).toContain(
      '| mode | rollout (s) | alone: rollout (s) | overhead t1–5 (ms) | overhead t6–10 (ms) | overhead t8–12 (ms) | last5/first5 |',
    );
    expect(md).toMatch(/\| http-stateless \| 1\.44 \| — \| 5\.00 \| 10\.0 \| 12\.0 \| 2\.40× \|/);
    expect(md).toMatch(/\| ws \| 1\.44 \| — \| 0\.90 \| 0\.90 \| 0\.90 \| 1\.00× \|/);
    expect(md).toContain('| 1000 | interleaved | ws / http-stateless rollout time | 1.00 |');
    expect(md).toContain('**Estimator** (one, throughout)');
    expect(md).toContain('- a note');
  });
});

describe('renderSvg', () => {
  it('draws one line per mode, a legend and both axis labels', () => {
    const svg = renderSvg(sampleReport().summaries);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg).toContain('>ws</text>');
    expect(svg).toContain('>http-stateless</text>');
    expect(svg).toContain('>turn</text>');
    expect(svg).toContain('overhead, ms (log scale)');
    expect(svg).toContain('1000 tokens/s');
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});

describe('renderJson', () => {
  it('rounds numbers to microseconds and keeps every record', () => {
    const parsed = JSON.parse(renderJson(sampleReport()));
    expect(parsed.records).toHaveLength(24);
    expect(parsed.options.turns).toBe(12);
    expect(parsed.options.outDir).toBeUndefined();
  });
});
