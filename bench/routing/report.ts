import { fmt, percentile } from '../agent-loop/summary';
import type { PolicyRunData, TurnRecord } from './run-policy';

/** The figures of one policy's run. */
export interface PolicySummary {
  policy: string;
  durationS: number;
  turns: number;
  failedTurns: number;
  turnsPerS: number;
  outputTokensPerS: number;
  ttftP50Ms: number;
  ttftP99Ms: number;
  /** Σ cached / Σ input tokens over completed turns. */
  hitRate: number;
  /** Prompt tokens prefilled (not cached) per completed turn. */
  prefillPerTurn: number;
  /** Per worker: requests served and mean in-flight calls, and the spread max / mean of each. */
  workers: { id: string; requests: number; uncachedTokens: number; meanInFlight: number }[];
  requestSpread: number;
  inFlightSpread: number;
  placements: Record<string, number>;
  sessionMoves: number;
  retries: number;
  loadAvg: [number, number];
  errorKinds: Record<string, number>;
}

/** What killing one worker mid-run cost. */
export interface KillSummary {
  worker: string;
  atS: number;
  /** Turns that failed (the client saw response.failed or an error) from the kill on. */
  failedTurns: number;
  /** Turns the edge re-sent to another worker before their first token (invisible to clients). */
  retries: number;
  windowS: number;
  before: WindowFigures;
  after: WindowFigures;
}

/** Figures over a time window of a run. */
export interface WindowFigures {
  turnsPerS: number;
  ttftP50Ms: number;
  ttftP99Ms: number;
  hitRate: number;
}

/** Summarizes one run; `excludeWorker` leaves the killed worker out of the spread (it served half a run). */
export function summarize(run: PolicyRunData): PolicySummary {
  const ok = run.turns.filter((t) => t.ok);
  const input = sum(ok.map((t) => t.inputTokens));
  const cached = sum(ok.map((t) => t.cachedTokens));
  const live = run.workers.filter((w) => w.id !== run.kill?.worker);
  const workers = run.workers.map((w) => ({
    id: w.id,
    requests: w.requests,
    uncachedTokens: w.promptTokens - w.cachedTokens,
    meanInFlight: w.meanInFlight,
  }));
  return {
    policy: run.policy,
    durationS: run.durationS,
    turns: ok.length,
    failedTurns: run.turns.length - ok.length,
    turnsPerS: ok.length / run.durationS,
    outputTokensPerS: sum(ok.map((t) => t.outputTokens)) / run.durationS,
    ttftP50Ms: percentile(
      ok.map((t) => t.ttftMs),
      0.5,
    ),
    ttftP99Ms: percentile(
      ok.map((t) => t.ttftMs),
      0.99,
    ),
    hitRate: input > 0 ? cached / input : 0,
    prefillPerTurn: ok.length > 0 ? (input - cached) / ok.length : 0,
    workers,
    requestSpread: spread(live.map((w) => w.requests)),
    inFlightSpread: spread(live.map((w) => w.meanInFlight)),
    placements: run.placements,
    sessionMoves: run.sessionMoves,
    retries: run.retries,
    loadAvg: run.loadAvg,
    errorKinds: run.errorKinds,
  };
}

/** Before / after figures around the kill, over `windowS` seconds each side. */
export function summarizeKill(run: PolicyRunData, windowS: number): KillSummary | undefined {
  if (!run.kill) return undefined;
  const at = run.kill.atMs;
  const w = windowS * 1000;
  return {
    worker: run.kill.worker,
    atS: at / 1000,
    failedTurns: run.turns.filter((t) => !t.ok && t.endMs >= at).length,
    retries: run.retries,
    windowS,
    before: windowFigures(
      run.turns.filter((t) => t.endMs >= at - w && t.endMs < at),
      windowS,
    ),
    after: windowFigures(
      run.turns.filter((t) => t.endMs >= at && t.endMs < at + w),
      windowS,
    ),
  };
}

function windowFigures(turns: readonly TurnRecord[], windowS: number): WindowFigures {
  const ok = turns.filter((t) => t.ok);
  const input = sum(ok.map((t) => t.inputTokens));
  return {
    turnsPerS: ok.length / windowS,
    ttftP50Ms: percentile(
      ok.map((t) => t.ttftMs),
      0.5,
    ),
    ttftP99Ms: percentile(
      ok.map((t) => t.ttftMs),
      0.99,
    ),
    hitRate: input > 0 ? sum(ok.map((t) => t.cachedTokens)) / input : 0,
  };
}

/** max / mean of positive values (1 = perfectly even; NaN without values). */
export function spread(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const mean = sum(values) / values.length;
  return mean > 0 ? Math.max(...values) / mean : NaN;
}

function sum(values: readonly number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}

/** Everything the report says. */
export interface RoutingReport {
  date: string;
  machine: { cpus: number; node: string; loadAvgBefore: number };
  settings: Record<string, string | number>;
  policies: PolicySummary[];
  kill?: KillSummary;
  /** Against round robin: throughput ×, p50 TTFT ÷, and whether the targets hold. */
  verdict?: {
    throughputX: number;
    ttftP50X: number;
    maxSpread: number;
    targets: { throughput2x: boolean; ttft4x: boolean; spread125: boolean };
  };
}

/** The verdict of cache-aware against round robin, when both ran. */
export function verdictOf(policies: readonly PolicySummary[]): RoutingReport['verdict'] {
  const ca = policies.find((p) => p.policy === 'cache-aware');
  const rr = policies.find((p) => p.policy === 'round-robin');
  if (!ca || !rr) return undefined;
  const throughputX = ca.turnsPerS / rr.turnsPerS;
  const ttftP50X = rr.ttftP50Ms / ca.ttftP50Ms;
  const maxSpread = Math.max(ca.requestSpread, ca.inFlightSpread);
  return {
    throughputX,
    ttftP50X,
    maxSpread,
    targets: { throughput2x: throughputX >= 2, ttft4x: ttftP50X >= 4, spread125: maxSpread <= 1.25 },
  };
}

/** The report as Markdown. */
export function renderMarkdown(r: RoutingReport): string {
  const lines: string[] = [];
  const s = r.settings;
  lines.push(
    '# Routing: cache-aware, load-bounded placement against round robin, least-loaded and hashing',
    '',
    `Run ${r.date} with \`npm run bench:routing\` (bench/routing): real processes (edge, safety, router, ${s.workers} inference workers ` +
      `running the **simulated accelerator**, billing, Redis), ${s.conversations} concurrent WebSocket agent conversations per policy for ${s.durationS} s each, ` +
      `every policy on a fresh stack (cold caches) in the same run. Machine: ${r.machine.cpus} CPUs, ${r.machine.node}, 1-min load average ${fmt(r.machine.loadAvgBefore)} before the run ` +
      '(other engineers share this machine; per-policy load averages are in the table).',
    '',
    `Workload: ${s.roots} shared system prompts (instructions ≈ 2,000 tokens + ${s.tools} tools), new conversations drawn ${s.rootWeights} (a few hot roots), ` +
      `each with its own task and ${s.outputBytes}-character tool outputs of real source, up to ${s.turns} turns (tool calls, then an answer), then a new conversation; ` +
      `between turns the agent runs its tool for ${s.thinkMs} ms on average (0.5–1.5×). ` +
      'Clients send `prompt_cache_key` = the root (OpenAI’s grouping of requests that share a prefix) and chain turns with `previous_response_id` on one socket.',
    '',
    `Simulated workers: one prefill queue each (\`SIM_SHARED_PREFILL\`) at ${s.prefillTps} uncached tokens/s, decode ${s.decodeTps} tokens/s per call, ` +
      `base TTFT ${s.ttftMs} ms, KV (session cache) bounded to ${s.kvTokens} tokens per worker with LRU eviction.`,
    '',
    '| policy | turns/s | output tok/s | TTFT p50 (ms) | TTFT p99 (ms) | cache hit rate | prefilled tokens / turn | requests max/mean | in-flight max/mean | failed turns | load avg (start → end) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const p of r.policies)
    lines.push(
      `| ${p.policy} | ${fmt(p.turnsPerS)} | ${fmt(p.outputTokensPerS)} | ${fmt(p.ttftP50Ms)} | ${fmt(p.ttftP99Ms)} | ${(100 * p.hitRate).toFixed(1)}% | ${fmt(p.prefillPerTurn)} | ${fmt(p.requestSpread)} | ${fmt(p.inFlightSpread)} | ${p.failedTurns} | ${fmt(p.loadAvg[0])} → ${fmt(p.loadAvg[1])} |`,
    );
  if (r.verdict) {
    const v = r.verdict;
    const mark = (ok: boolean) => (ok ? 'met' : '**not met**');
    lines.push(
      '',
      `**cache-aware against round robin:** ${fmt(v.throughputX)}× the throughput (target ≥ 2×: ${mark(v.targets.throughput2x)}), ` +
        `${fmt(v.ttftP50X)}× lower p50 TTFT (target ≥ 4×: ${mark(v.targets.ttft4x)}), busiest worker ${fmt(v.maxSpread)}× the mean ` +
        `(requests served and mean in-flight calls; target ≤ 1.25×: ${mark(v.targets.spread125)}).`,
    );
  }
  lines.push('', '## Per worker', '');
  for (const p of r.policies) {
    const reasons = Object.entries(p.placements)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    lines.push(
      `- **${p.policy}**: ${p.workers.map((w) => `${w.id} ${w.requests} req / ${fmt(w.uncachedTokens / 1000)}k prefilled / ${fmt(w.meanInFlight)} in flight`).join('; ')}. ` +
        `Placements: ${reasons || 'n/a'}; sessions moved ${p.sessionMoves}; retried on another worker ${p.retries}.` +
        (Object.keys(p.errorKinds).length > 0 ? ` Errors: ${JSON.stringify(p.errorKinds)}.` : ''),
    );
  }
  if (r.kill) {
    const k = r.kill;
    lines.push(
      '',
      '## What one killed worker costs',
      '',
      `A second cache-aware run SIGKILLs ${k.worker} ${fmt(k.atS)} s in (no drain: the process is gone). ` +
        `${k.retries} turn(s) were re-sent to another worker before their first token (invisible to the client), ` +
        `${k.failedTurns} turn(s) failed after their first token (\`response.failed\`; the agent's next turn lands elsewhere and prefills its history again).`,
      '',
      `| ${k.windowS} s window | turns/s | TTFT p50 (ms) | TTFT p99 (ms) | cache hit rate |`,
      '|---|---:|---:|---:|---:|',
      `| before the kill | ${fmt(k.before.turnsPerS)} | ${fmt(k.before.ttftP50Ms)} | ${fmt(k.before.ttftP99Ms)} | ${(100 * k.before.hitRate).toFixed(1)}% |`,
      `| after the kill | ${fmt(k.after.turnsPerS)} | ${fmt(k.after.ttftP50Ms)} | ${fmt(k.after.ttftP99Ms)} | ${(100 * k.after.hitRate).toFixed(1)}% |`,
    );
  }
  lines.push(
    '',
    '## Reading it',
    '',
    '- **TTFT** is the client’s time from sending `response.create` to the first `response.output_item.added`; on this simulator it is the prefill queue ahead of the turn plus the turn’s own uncached tokens at the prefill rate, so it is what placement decides.',
    '- **round-robin** and **least-loaded** re-place every turn (reuse_ms 0), as a load balancer in front of the workers would; **hash** is the router before this change (rendezvous on `prompt_cache_key`, pinned until the worker fails), so a hot root lands on one worker; **cache-aware** (apps/router/README.md) places new conversations where their root is, within ⌈(1 + ε) × mean⌉ running calls (ε = 0.2), and keeps a conversation where its prefix is up to ⌈1.5 × mean⌉ unless its worker is so queued that prefilling it elsewhere comes first.',
    '- **requests max/mean** is the busiest worker’s share of the requests served; **in-flight max/mean** the busiest worker’s mean running calls (the router’s view, sampled every 250 ms) over the mean.',
    '- The spread columns compare workers that ran the whole time (the killed one is left out).',
    '',
  );
  return lines.join('\n');
}
