import type { TurnRecord } from './agents';

/** A window of the run: steady state, or one replica's rolling restart. */
export interface Phase {
  readonly name: string;
  readonly from: number;
  readonly to: number;
}

/** What the clients saw of the turns they started within one phase. */
export interface PhaseStats {
  readonly phase: string;
  readonly durationMs: number;
  readonly completed: number;
  readonly failed: number;
  /** previous_response_not_found answers (store: false chains whose edge went), each resent in full. */
  readonly notFound: number;
  /** Turns sent again because their connection closed before the server started them. */
  readonly resent: number;
  readonly firstOutputP50Ms: number;
  readonly firstOutputP99Ms: number;
}

/** The q-quantile (nearest rank) of `values`; NaN when empty. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Counts and first-output quantiles of the turns started within `phase`. */
export function phaseStats(records: readonly TurnRecord[], phase: Phase): PhaseStats {
  const inside = records.filter((r) => r.startedAt >= phase.from && r.startedAt < phase.to);
  const firstOutput = inside
    .filter((r) => r.outcome === 'completed' && r.firstOutputMs !== undefined)
    .map((r) => r.firstOutputMs!);
  return {
    phase: phase.name,
    durationMs: phase.to - phase.from,
    completed: inside.filter((r) => r.outcome === 'completed').length,
    failed: inside.filter((r) => r.outcome === 'failed').length,
    notFound: inside.filter((r) => r.outcome === 'not_found').length,
    resent: inside.filter((r) => r.outcome === 'resent').length,
    firstOutputP50Ms: percentile(firstOutput, 0.5),
    firstOutputP99Ms: percentile(firstOutput, 0.99),
  };
}

/** Usage per tenant as the clients saw it: the sum over their completed responses. */
export function clientUsage(
  records: readonly TurnRecord[],
  tenantOf: (agent: string) => string,
): Map<string, UsageTotals> {
  const totals = new Map<string, UsageTotals>();
  for (const r of records) {
    if (r.outcome !== 'completed' || !r.usage) continue;
    const t = totals.get(tenantOf(r.agent)) ?? { responses: 0, input_tokens: 0, cached_tokens: 0, output_tokens: 0 };
    t.responses++;
    t.input_tokens += r.usage.input;
    t.cached_tokens += r.usage.cached;
    t.output_tokens += r.usage.output;
    totals.set(tenantOf(r.agent), t);
  }
  return totals;
}

export interface UsageTotals {
  responses: number;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
}
