import { get } from 'node:http';

/** The edge's per-stage histogram (apps/edge/src/edge-metrics.ts). */
export const STAGE_METRIC = 'fastloop_edge_turn_stage_seconds';
/** The inference worker's own time to first token (apps/inference/src/inference-metrics.ts). */
export const ENGINE_TTFT_METRIC = 'inference_ttft_seconds';
/** The worker's own time to the chunk that opened the first output item, as the edge saw it reported. */
export const ENGINE_FIRST_ITEM_METRIC = 'fastloop_edge_engine_first_item_seconds';
/** What the edge itself saw added before the first output item (request in → item out, minus the engine). */
export const EDGE_OVERHEAD_METRIC = 'fastloop_edge_first_item_overhead_seconds';

/** The inference worker's own time per call by part (apps/inference/src/inference-metrics.ts). */
export const WORKER_TIME_METRIC = 'inference_worker_seconds';
/** Its parts: before the engine, the engine reading the prompt, after the stream. */
export const WORKER_PARTS = ['prepare', 'engine_read', 'keep'] as const;

/** Stages in the order a turn passes them. */
export const STAGES = ['validate', 'load', 'route', 'render', 'safety', 'queue', 'ttft', 'stream', 'post'] as const;
/** The stages before the edge calls Generate: the edge's own pre-inference work. */
export const PRE_INFERENCE_STAGES = ['validate', 'load', 'route', 'render', 'safety', 'queue'] as const;

/** Sum (seconds) and count of one histogram series. */
export interface SeriesTotals {
  sum: number;
  count: number;
}

/** Series key (the key labels' values joined by `|`) → totals. */
export type HistogramSnapshot = Map<string, SeriesTotals>;

/** How much one series grew between two snapshots. */
export interface SeriesDelta {
  /** The key labels' values, in the order asked for. */
  labels: string[];
  sumMs: number;
  count: number;
}

/**
 * Parses the `_sum` and `_count` lines of histogram `metric` out of a Prometheus text page, keyed
 * by the values of `keyLabels` (other labels, such as the registry's `service`, are ignored).
 * Throws when the page does not declare the histogram.
 */
export function parseHistogram(text: string, metric: string, keyLabels: readonly string[]): HistogramSnapshot {
  // A metric the page does not declare (renamed, removed) must not read as "nothing happened".
  if (!new RegExp(`^# TYPE ${metric} histogram$`, 'm').test(text))
    throw new Error(`histogram ${metric} is not on this /metrics page`);
  const out: HistogramSnapshot = new Map();
  const re = new RegExp(`^${metric}_(sum|count)(?:\\{([^}]*)\\})?\\s+(\\S+)`, 'gm');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const labels = parseLabels(m[2] ?? '');
    const key = keyLabels.map((l) => labels[l] ?? '').join('|');
    const totals = out.get(key) ?? { sum: 0, count: 0 };
    totals[m[1] as 'sum' | 'count'] += Number(m[3]);
    out.set(key, totals);
  }
  return out;
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const m of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]] = m[2];
  return labels;
}

/** Series whose count grew from `before` to `after`, with the ms they added. */
export function diffHistograms(before: HistogramSnapshot, after: HistogramSnapshot): SeriesDelta[] {
  const out: SeriesDelta[] = [];
  for (const [key, a] of after) {
    const b = before.get(key) ?? { sum: 0, count: 0 };
    const count = a.count - b.count;
    if (count > 0) out.push({ labels: key.split('|'), sumMs: (a.sum - b.sum) * 1000, count });
  }
  return out;
}

/** Sums deltas by their first key label (for the stage histogram: stage → ms). */
export function msByFirstLabel(deltas: readonly SeriesDelta[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of deltas) out[d.labels[0]] = (out[d.labels[0]] ?? 0) + d.sumMs;
  return out;
}

/** What the benchmark reads from the stack's /metrics pages between two requests. */
export interface TurnMetrics {
  /** Edge stages by `stage|transport|cached`. */
  stages: HistogramSnapshot;
  /** The engine's measured TTFT by `engine`. */
  engineTtft: HistogramSnapshot;
  /** The engine's measured time to the chunk that opened the first output item, by `transport`. */
  engineFirstItem: HistogramSnapshot;
  /** The edge-observed overhead before the first output item, by `transport`. */
  edgeOverhead: HistogramSnapshot;
  /** The worker's own time by `part`. */
  workerTime: HistogramSnapshot;
}

/** What one turn added, from the snapshots before and after it. */
export function turnDelta(
  before: TurnMetrics,
  after: TurnMetrics,
): {
  stagesMs: Record<string, number>;
  engineTtftMs: number;
  generateCalls: number;
  engineFirstItemMs: number;
  edgeOverheadMs: number;
  workerMs: Record<string, number>;
} {
  const engine = diffHistograms(before.engineTtft, after.engineTtft);
  const firstItem = diffHistograms(before.engineFirstItem, after.engineFirstItem);
  const firstItemCount = firstItem.reduce((s, d) => s + d.count, 0);
  const edge = diffHistograms(before.edgeOverhead, after.edgeOverhead);
  const edgeCount = edge.reduce((s, d) => s + d.count, 0);
  return {
    stagesMs: msByFirstLabel(diffHistograms(before.stages, after.stages)),
    engineTtftMs: engine.reduce((s, d) => s + d.sumMs, 0),
    generateCalls: engine.reduce((s, d) => s + d.count, 0),
    // NaN unless exactly one response opened an item during the turn.
    engineFirstItemMs: firstItemCount === 1 ? firstItem[0].sumMs : NaN,
    edgeOverheadMs: edgeCount === 1 ? edge[0].sumMs : NaN,
    workerMs: msByFirstLabel(diffHistograms(before.workerTime, after.workerTime)),
  };
}

/** Scrapes the edge's and the inference worker's admin ports. */
export async function scrapeTurnMetrics(edgeAdminPort: number, inferenceAdminPort: number): Promise<TurnMetrics> {
  const [edge, inference] = await Promise.all([
    fetchText(edgeAdminPort, '/metrics'),
    fetchText(inferenceAdminPort, '/metrics'),
  ]);
  return {
    stages: parseHistogram(edge, STAGE_METRIC, ['stage', 'transport', 'cached']),
    engineTtft: parseHistogram(inference, ENGINE_TTFT_METRIC, ['engine']),
    engineFirstItem: parseHistogram(edge, ENGINE_FIRST_ITEM_METRIC, ['transport', 'cached']),
    edgeOverhead: parseHistogram(edge, EDGE_OVERHEAD_METRIC, ['transport', 'cached']),
    workerTime: parseHistogram(inference, WORKER_TIME_METRIC, ['part']),
  };
}

function fetchText(port: number, path: string, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get({ host, port, path, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(text) : reject(new Error(`GET ${path} on :${port}: HTTP ${res.statusCode}`)),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path} on :${port} timed out`)));
  });
}
