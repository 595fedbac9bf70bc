import { cpus } from 'node:os';
import type { BenchOptions } from './options';
import type { TurnRecord } from './rollout-runner';
import type { ModeSummary, Ratio, TargetCheck } from './summary';

/** Everything one run produced; written as agent-loop.json and rendered to Markdown and SVG. */
export interface BenchReport {
  generatedAt: string;
  environment: { node: string; platform: string; cpus: number; cpuModel: string };
  options: Omit<BenchOptions, 'outDir'>;
  /** How the engine's share was computed (see engine-model.ts). */
  method: string;
  summaries: ModeSummary[];
  ratios: Ratio[];
  targets: TargetCheck[];
  /** Observations worth a reader's attention (mismatched prompts across modes, failures). */
  notes: string[];
  records: TurnRecord[];
}

export const METHOD =
  "overheadMs = firstOutputMs - engineMeasuredFirstOutputMs (the worker's engine_elapsed_ms on the chunk that opened the first item), falling back to " +
  'firstOutputMs - (engineMeasuredTtftMs + engineFirstOutputMs - engineTtftMs), then to modelOverheadMs; ' +
  'modelOverheadMs = firstOutputMs - engineFirstOutputMs; engineTtftMs = SIM_TTFT_MS + (input_tokens - cached_tokens) * 1000 / SIM_PREFILL_TOKENS_PER_SECOND; ' +
  'engineFirstOutputMs = emission time of the completion token that opens the first output item under the sim schedule (first token at engineTtftMs, ' +
  'then chunks at max(next due, last + 5 ms), token i due at engineTtftMs + i * 1000 / SIM_TOKENS_PER_SECOND). Client times start just before the request body is serialized.';

/** Assembles the report object. */
export function buildReport(
  options: BenchOptions,
  parts: Pick<BenchReport, 'summaries' | 'ratios' | 'targets' | 'notes' | 'records'>,
): BenchReport {
  const { outDir: _outDir, ...rest } = options;
  const cpu = cpus();
  return {
    generatedAt: new Date().toISOString(),
    environment: {
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: cpu.length,
      cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    },
    options: rest,
    method: METHOD,
    ...parts,
  };
}

/** Numbers rounded to µs (ms with 3 decimals): enough for the report, and the file stays small. */
const round = (_key: string, v: unknown) =>
  typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v;

/** Pretty JSON, except one line per turn record, so the file stays readable and diffable. */
export function renderJson(report: BenchReport): string {
  const { records, ...rest } = report;
  const head = JSON.stringify(rest, round, 2).replace(/\n}$/, '');
  const lines = records.map((r) => `    ${JSON.stringify(r, round)}`);
  return `${head},\n  "records": [\n${lines.join(',\n')}\n  ]\n}\n`;
}
