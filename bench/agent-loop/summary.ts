import { PRE_INFERENCE_STAGES, STAGES, WORKER_PARTS } from './metrics-scrape';
import type { Mode } from './options';
import type { Phase, TurnRecord } from './rollout-runner';

/** The q-th quantile (0..1) of `values` with linear interpolation; NaN for none. */
export function percentile(values: readonly number[], q: number): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const pos = Math.min(Math.max(q, 0), 1) * (v.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

export const median = (values: readonly number[]) => percentile(values, 0.5);

/**
 * THE ESTIMATOR, used for every per-turn figure in the report and the README: the median of the
 * pooled turn records (every repetition) in a window of five turns. "First 5" is turns 1–5, "last
 * 5" turns N−4…N, growth is last 5 / first 5; the checkpoint columns are the windows ending at
 * turns 5, 10, 25 and N. Rollout time is the median over repetitions of the rollout's summed turn
 * wall times. (One turn of one rollout is a single sample; a median needs several.)
 */
export const ESTIMATOR =
  'every per-turn figure is the median of the pooled turn records of all repetitions in a window of five turns ' +
  '(first 5 = turns 1–5, last 5 = turns N−4…N, growth = last 5 / first 5; columns "tA–B" are such windows); ' +
  "rollout time is the median over repetitions of the sum of the rollout's turn wall times";

/** The windows the report quotes: five turns ending at turns 5, 10, 25 and the last, where the rollout has them. */
export function checkpointWindows(turns: number): [number, number][] {
  const ends = [...new Set([5, 10, 25, turns].filter((t) => t <= turns))].sort((a, b) => a - b);
  return ends.map((end) => [Math.max(1, end - 4), end]);
}

/** The estimator over `records` whose turn lies in [from, to]. */
export function windowMedian(
  records: readonly TurnRecord[],
  from: number,
  to: number,
  value: (r: TurnRecord) => number,
): number {
  return median(records.filter((r) => r.turn >= from && r.turn <= to).map(value));
}

/** One mode at one TPS setting, in one phase (interleaved with the other modes, or alone). */
export interface ModeSummary {
  mode: Mode;
  tps: number;
  phase: Phase;
  reps: number;
  turns: number;
  /** Median over repetitions of the rollout's summed turn wall times, ms. */
  rolloutMs: number;
  /** Turn → median over repetitions of that turn's overhead, ms (the chart's line). */
  overheadByTurn: Record<number, number>;
  /** `"from–to"` → the estimator over that window (see {@link checkpointWindows}). */
  overheadWindows: Record<string, number>;
  /** The estimator over the first and the last five turns, and their ratio. */
  overheadFirst5: number;
  overheadLast5: number;
  growthLast5: number;
  /** The estimator over the last 5 turns of the overhead against the sim's timing model alone (see TurnRecord.modelOverheadMs). */
  modelOverheadLast5: number;
  /** The worker's own time per turn by part (prepare, engine_read, keep, and their total), the estimator over the first and the last five turns, ms. */
  worker: { early: Record<string, number>; late: Record<string, number> };
  /** Median over turns 2..N (pooled) of the client time to `response.created`, ms. */
  createdP50Ms: number;
  /** Where the overhead goes, the estimator over the first 5 (`early`) and the last 5 turns (`late`). */
  parts: { early: OverheadParts; late: OverheadParts };
  /** Mean ms per turn of each edge stage (from /metrics), over every turn and repetition. */
  stageMeanMs: Record<string, number>;
  /** The last turn's prompt size: what the conversation grew to. */
  finalInputTokens: number;
  /** Sum of request bytes over the rollout (first repetition). */
  requestBytes: number;
  /** Turns in which this mode went first (interleaved rounds; the design balances it). */
  wentFirst: number;
}

/**
 * The overhead of a turn split by where it was measured (ms):
 * `preInference` the edge's stages before Generate (validate, route, render, safety wait, queue);
 * `inferenceHop` the edge's ttft stage minus the worker's own measured TTFT (request encoding, the
 * gRPC hop, prompt assembly, the first chunk back); `engineLate` the worker's measured TTFT minus the
 * modelled one (timer lateness, sim work past its TTFT; not part of the overhead, which subtracts
 * the measured TTFT, but shown since the model-based overhead includes it); `untimed` the remainder: the client's
 * encode/send/receive, and edge work outside its stage timer (HTTP body read and JSON parse, the
 * `previous_response_id` store load on HTTP, event framing and delivery).
 */
export interface OverheadParts {
  overhead: number;
  /** The edge's own view: request in → first output item out, minus the engine (no client legs). */
  edgeObserved: number;
  toCreated: number;
  preInference: number;
  inferenceHop: number;
  engineLate: number;
  untimed: number;
}

/** The p50 of each part over `records`. */
export function overheadParts(records: readonly TurnRecord[]): OverheadParts {
  const pre = (r: TurnRecord) => PRE_INFERENCE_STAGES.reduce((s, k) => s + (r.stagesMs[k] ?? 0), 0);
  const hop = (r: TurnRecord) => (r.stagesMs.ttft ?? NaN) - r.engineMeasuredTtftMs;
  const late = (r: TurnRecord) => r.engineMeasuredTtftMs - r.engineTtftMs;
  return {
    overhead: median(records.map((r) => r.overheadMs)),
    edgeObserved: median(records.map((r) => r.edgeOverheadMs)),
    toCreated: median(records.map((r) => r.createdMs)),
    preInference: median(records.map(pre)),
    inferenceHop: median(records.map(hop)),
    engineLate: median(records.map(late)),
    untimed: median(records.map((r) => r.overheadMs - pre(r) - hop(r))),
  };
}

/** Summarises the records of one mode at one TPS setting in one phase. */
export function summarizeMode(
  mode: Mode,
  tps: number,
  records: readonly TurnRecord[],
  phase: Phase = 'interleaved',
): ModeSummary {
  const own = records.filter((r) => r.mode === mode && r.tps === tps && r.phase === phase);
  const reps = [...new Set(own.map((r) => r.rep))];
  const turns = Math.max(0, ...own.map((r) => r.turn));
  const overheadByTurn: Record<number, number> = {};
  for (let t = 1; t <= turns; t++) overheadByTurn[t] = median(own.filter((r) => r.turn === t).map((r) => r.overheadMs));
  const overheadWindows: Record<string, number> = {};
  for (const [from, to] of checkpointWindows(turns))
    overheadWindows[`${from}–${to}`] = windowMedian(own, from, to, (r) => r.overheadMs);
  const lastFrom = Math.max(1, turns - 4);
  const first5 = windowMedian(own, 1, 5, (r) => r.overheadMs);
  const last5 = windowMedian(own, lastFrom, turns, (r) => r.overheadMs);
  const stageMeanMs: Record<string, number> = {};
  for (const stage of STAGES) {
    const values = own.map((r) => r.stagesMs[stage] ?? 0);
    stageMeanMs[stage] = values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
  }
  const last = own.filter((r) => r.turn === turns);
  return {
    mode,
    tps,
    phase,
    reps: reps.length,
    turns,
    rolloutMs: median(reps.map((rep) => own.filter((r) => r.rep === rep).reduce((s, r) => s + r.wallMs, 0))),
    overheadByTurn,
    overheadWindows,
    overheadFirst5: first5,
    overheadLast5: last5,
    growthLast5: last5 / first5,
    modelOverheadLast5: windowMedian(own, lastFrom, turns, (r) => r.modelOverheadMs),
    worker: { early: workerParts(own, 1, 5), late: workerParts(own, lastFrom, turns) },
    createdP50Ms: median(own.filter((r) => r.turn > 1).map((r) => r.createdMs)),
    parts: {
      early: overheadParts(own.filter((r) => r.turn <= 5)),
      late: overheadParts(own.filter((r) => r.turn >= lastFrom)),
    },
    stageMeanMs,
    finalInputTokens: median(last.map((r) => r.inputTokens)),
    requestBytes: own.filter((r) => r.rep === reps[0]).reduce((s, r) => s + r.requestBytes, 0),
    wentFirst: own.filter((r) => r.position === 0).length,
  };
}

/** The estimator over [from, to] of each part of the worker's own time, and of their sum. */
function workerParts(records: readonly TurnRecord[], from: number, to: number): Record<string, number> {
  const part = (name: string) => (r: TurnRecord) => (r.workerMs ? (r.workerMs[name] ?? 0) : NaN);
  const out: Record<string, number> = {};
  for (const name of WORKER_PARTS) out[name] = windowMedian(records, from, to, part(name));
  out.total = windowMedian(records, from, to, (r) => WORKER_PARTS.reduce((s, name) => s + part(name)(r), 0));
  return out;
}

/** A side-by-side comparison measured in the same run. */
export interface Ratio {
  tps: number;
  phase: Phase;
  label: string;
  /** a / b. */
  value: number;
}

/** Rollout-time ratios between the modes at each TPS setting and phase, and overhead ratios (interleaved). */
export function ratios(summaries: readonly ModeSummary[]): Ratio[] {
  const out: Ratio[] = [];
  const pairs: [Mode, Mode][] = [
    ['ws', 'http-stateless'],
    ['grpc', 'http-stateless'],
    ['http-previous', 'http-stateless'],
    ['ws', 'http-previous'],
    ['grpc', 'ws'],
  ];
  for (const phase of ['interleaved', 'solo'] as const) {
    for (const tps of [...new Set(summaries.map((s) => s.tps))]) {
      const by = new Map(summaries.filter((s) => s.tps === tps && s.phase === phase).map((s) => [s.mode, s]));
      for (const [a, b] of pairs) {
        const sa = by.get(a);
        const sb = by.get(b);
        if (!sa || !sb) continue;
        out.push({ tps, phase, label: `${a} / ${b} rollout time`, value: sa.rolloutMs / sb.rolloutMs });
        if (phase === 'interleaved')
          out.push({
            tps,
            phase,
            label: `${a} / ${b} overhead, last 5 turns`,
            value: sa.overheadLast5 / sb.overheadLast5,
          });
      }
    }
  }
  return out;
}

/** The targets, checked against what was measured. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

/**
 * The targets of the interleaved comparison: WebSocket overhead flat (last 5 / first 5 ≤ 1.5,
 * the estimator), and at 1,000 tokens/s the WebSocket rollout against `http-stateless`, labelled
 * with the engine's prefix caching since that decides how much a stateless request costs the
 * engine. (The API's own floor, ≤ 5 ms to the first item, is the instant-engine test's target.)
 */
export function checkTargets(
  summaries: readonly ModeSummary[],
  engine: { prefixCaching: boolean } = { prefixCaching: true },
): TargetCheck[] {
  const out: TargetCheck[] = [];
  for (const ws of summaries.filter((s) => s.mode === 'ws' && s.phase === 'interleaved')) {
    out.push({
      target: `[tps=${ws.tps}] ws overhead flat: last 5 turns / first 5 <= 1.5x`,
      measured: `${fmt(ws.growthLast5)}x (${fmt(ws.overheadFirst5)} → ${fmt(ws.overheadLast5)} ms)`,
      met: ws.growthLast5 <= 1.5,
    });
    const base = summaries.find((s) => s.mode === 'http-stateless' && s.tps === ws.tps && s.phase === 'interleaved');
    if (base && ws.tps === 1000) {
      const faster = 1 - ws.rolloutMs / base.rolloutMs;
      const caching = engine.prefixCaching ? 'on' : 'off';
      out.push({
        target: `[tps=1000] ws rollout >= 50% faster than http-stateless (engine prefix caching ${caching})`,
        measured: `${fmt(faster * 100)}% faster`,
        met: faster >= 0.5,
      });
    }
  }
  return out;
}

/** Plain-language notes on how each mode's overhead moved with the history. */
export function growthNotes(summaries: readonly ModeSummary[]): string[] {
  const out: string[] = [];
  for (const s of summaries.filter((x) => x.phase === 'interleaved')) {
    const { early, late } = s.parts;
    const verdict =
      s.growthLast5 > 1.5
        ? 'grows with the history'
        : s.growthLast5 < 1 / 1.5
          ? 'shrinks (warm-up or noise)'
          : 'is flat';
    const movers = (['preInference', 'inferenceHop', 'untimed'] as const)
      .filter((k) => late[k] - early[k] > 1)
      .map((k) => `${k} ${fmt(early[k])} → ${fmt(late[k])} ms`);
    out.push(
      `[tps=${s.tps}] ${s.mode}: overhead ${verdict} (p50 first 5 turns ${fmt(s.overheadFirst5)} ms, last 5 ${fmt(s.overheadLast5)} ms, ${fmt(s.growthLast5)}×)` +
        (movers.length > 0 ? `; grew: ${movers.join(', ')}.` : '.'),
    );
  }
  return out;
}

/** A number for reports: 3 significant digits, at most 2 decimals. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  const a = Math.abs(n);
  if (a >= 100) return n.toFixed(0);
  if (a >= 10) return n.toFixed(1);
  return n.toFixed(2);
}
