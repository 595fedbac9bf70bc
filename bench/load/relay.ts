import { getPriority, setPriority } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { percentile } from '../agent-loop/summary';
import { EdgeWatch } from './phase-stats';
import { FreezeProbe, gapLessFreezes, stealMs, type Freeze } from './freeze-probe';
import { fetchMetrics, loopDelays, sampleProcess } from './process-stats';

/** The p99 stall (time-weighted inter-delta gap) may grow by at most this much over one stream's before a stream count counts as relayed. */
export const MAX_ADDED_P99_GAP_MS = 2;

/** Seconds one stream runs before the first step, unmeasured. */
const WARM_UP_S = 3;

/**
 * The first step (one stream: the bound's reference) runs this many times as long as the others:
 * its p99 stall otherwise came from the fewest gaps of any step (~19 gaps above the p99 in 8 s) and
 * moved 7.4–9.7 ms from run to run, which moved the ceiling between 1 and 4 streams.
 */
export const REFERENCE_DURATION_FACTOR = 3;

/** One stream count of the relay test. */
export interface RelayStep {
  streams: number;
  /** Output tokens delivered per second over all streams. */
  tokensPerS: number;
  /** Gaps between consecutive text delta frames of one response, at the client, per frame, ms. */
  gapP50Ms: number;
  gapP99Ms: number;
  /** The same gaps weighted by their length ({@link timeWeightedPercentile}): how long text stalls, ms. */
  stallP50Ms: number;
  stallP99Ms: number;
  /**
   * The p99 stall with the time the whole machine was paused taken out of each gap (a
   * {@link FreezeProbe} saw it: every process stalls at once, the idle ones too), ms.
   */
  stallP99LessPausesMs: number;
  /**
   * Time the machine was paused during the step (the probe's; 0 when the probe could not be reniced
   * above the stack, as then the stack's own load could delay it), ms, and its steal time, % of one core.
   */
  machinePausedMs: number;
  stealPercent: number;
  /** stallP99LessPausesMs − the first step's: the bound of the ceiling. */
  addedP99Ms: number;
  edgeCpuPercent: number;
  /** Edge CPU time per 1,000 tokens relayed, ms. */
  edgeCpuMsPer1kTokens: number;
  /** Safety service CPU time per 1,000 tokens relayed, ms (its output moderation's share of the relay). */
  safetyCpuMsPer1kTokens: number;
  /** Batches of output safety moderated per second (`safety_output_batches_total` over the step). */
  moderationBatchesPerS: number;
  /** Tokens per TokenChunk message the worker wrote (its inference_* counters over the step). */
  tokensPerChunk: number;
  /** Tokens per `response.output_text.delta` frame the client received. */
  tokensPerDelta: number;
  /**
   * The longest event-loop delay over the step of the edge, the other services and the load
   * generator itself (`client`, whose delay delays the arrival it times), ms: a stall of one of
   * them is a gap of every stream it carries.
   */
  eventLoopMaxMsByProcess?: Record<string, number>;
  errors: number;
}

/** The stack the relay test drives. */
export interface RelayTarget {
  wsUrl: string;
  apiKey: string;
  edgePid: number;
  edgeAdminPort: number;
  workerAdminPort: number;
  safetyPid: number;
  safetyAdminPort: number;
  /** The other services' admin ports, by name (their event-loop delay). */
  adminPorts?: Readonly<Record<string, number>>;
}

/** The relay ceiling: every step, and the highest aggregate tokens/s within the added-gap bound. */
export interface RelayResult {
  streamTps: number;
  steps: RelayStep[];
  ceilingTokensPerS: number;
  ceilingStreams: number;
  /** Whether machine pauses were taken out of the gaps (the probe ran reniced above the stack). */
  pausesTakenOut?: boolean;
  /** Whether the client (this process's event loop) ran reniced above the stack while it timed the steps. */
  clientReniced?: boolean;
}

/** How far above the stack the client runs while timing (nice −5; the probe has −10). */
const CLIENT_NICE_BOOST = 5;

/**
 * Raises the calling thread's priority (the event loop that times the frames) by
 * {@link CLIENT_NICE_BOOST}, and returns how to put it back; undefined when not allowed (no
 * CAP_SYS_NICE). On 2 cores the stack's processes at 8 streams kept the client from a core for up to
 * 40–60 ms at a time (its own event-loop delay, in the report), and a frame read late is timed as
 * a stall of the stack: a client on its own machine, as real ones are, sees no such wait.
 */
function boostClient(): (() => void) | undefined {
  try {
    const before = getPriority();
    setPriority(before - CLIENT_NICE_BOOST);
    return () => setPriority(before);
  } catch {
    return undefined;
  }
}

/**
 * One streaming client: sends a `response.create` (no tools, so the simulated model answers with
 * a long message), records when each `response.output_text.delta` frame arrives, and sends the
 * next as soon as one completes, until `deadline`.
 */
async function stream(
  wsUrl: string,
  apiKey: string,
  deadline: number,
  gaps: Array<[from: number, to: number]>,
): Promise<{ tokens: number; deltas: number; errors: number }> {
  const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${apiKey}` }, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let tokens = 0;
  let deltas = 0;
  let completedDeltas = 0;
  let errors = 0;
  // The one response in flight ends with a terminal event, or with the socket closing under it.
  let settle: (() => void) | undefined;
  ws.once('close', () => {
    errors++;
    settle?.();
  });
  try {
    while (performance.now() < deadline && ws.readyState === WebSocket.OPEN) {
      await new Promise<void>((resolve) => {
        let last = NaN;
        const done = () => {
          ws.off('message', onMessage);
          settle = undefined;
          resolve();
        };
        const onMessage = (data: WebSocket.RawData) => {
          const text = data.toString();
          // Only the arrival time matters for deltas; parse the rare other events in full.
          if (text.includes('"response.output_text.delta"')) {
            const now = wallClock();
            if (!Number.isNaN(last)) gaps.push([last, now]);
            last = now;
            deltas++;
            return;
          }
          const event = JSON.parse(text) as { type: string; response?: { usage?: { output_tokens?: number } } };
          if (event.type === 'response.completed') {
            tokens += event.response?.usage?.output_tokens ?? 0;
            // Deltas of a response that did not complete are not in any token count either.
            completedDeltas = deltas;
          } else if (event.type === 'response.failed' || event.type === 'error') errors++;
          else return;
          done();
        };
        settle = done;
        ws.on('message', onMessage);
        ws.send(
          JSON.stringify({
            type: 'response.create',
            model: 'fastloop-sim',
            input: 'Explain the design of the relay in detail.',
            store: false,
          }),
        );
      });
    }
  } finally {
    ws.removeAllListeners('close');
    ws.close();
  }
  return { tokens, deltas: completedDeltas, errors };
}

/** Wall-clock ms with sub-ms precision (the freeze probe's clock). */
const wallClock = () => performance.timeOrigin + performance.now();

/**
 * The gap a random instant of the streams falls in, at quantile `q`: each gap weighted by its own
 * length. A per-frame percentile changes with the chunking alone: frames written together arrive
 * ~0 ms apart, so splitting the same text into more frames adds near-zero gaps and lowers the
 * per-frame p99 although no text arrives sooner. Weighted by length those gaps count for nothing,
 * so the figure compares chunkings: it moves only when text really waits longer.
 */
export function timeWeightedPercentile(gaps: readonly number[], q: number): number {
  const sorted = gaps.filter((g) => Number.isFinite(g) && g > 0).sort((a, b) => a - b);
  const total = sorted.reduce((s, g) => s + g, 0);
  if (total === 0) return NaN;
  let seen = 0;
  for (const g of sorted) {
    seen += g;
    if (seen >= q * total) return g;
  }
  return sorted[sorted.length - 1];
}

/**
 * Raises the number of concurrent streams (each at the engine's `streamTps`) step by step and
 * measures the gaps between text deltas at the client. A step is within bound while its p99 stall
 * ({@link timeWeightedPercentile} of the gaps) exceeds the single stream's by at most
 * {@link MAX_ADDED_P99_GAP_MS}; the ceiling is the highest aggregate tokens/s of such a step.
 * Stops after the first step out of bound.
 */
export async function runRelay(
  target: RelayTarget,
  streamCounts: readonly number[],
  durationS: number,
  streamTps: number,
  progress: (line: string) => void,
): Promise<RelayResult> {
  const steps: RelayStep[] = [];
  let baseline = NaN;
  const probe = FreezeProbe.start();
  const restorePriority = boostClient();
  try {
    // The first step is the reference of the others: on a fresh stack it would also pay the services'
    // warm-up (code compiled on first use, their first collections), an event-loop stall of 20–50 ms
    // in each, counted as stall of the reference (p99 9 ms one run, 15 ms the next).
    progress(`relay: warming up (1 stream for ${WARM_UP_S} s, not measured)`);
    await stream(target.wsUrl, target.apiKey, performance.now() + WARM_UP_S * 1000, []);
    for (const streams of streamCounts) {
      const reference = Number.isNaN(baseline);
      const seconds = reference ? durationS * REFERENCE_DURATION_FACTOR : durationS;
      const step = await relayStep(target, probe, streams, seconds, streamTps, progress);
      if (reference) baseline = step.stallP99LessPausesMs;
      step.addedP99Ms = step.stallP99LessPausesMs - baseline;
      steps.push(step);
      if (step.addedP99Ms > MAX_ADDED_P99_GAP_MS || step.errors > 0) break;
    }
  } finally {
    restorePriority?.();
    await probe.stop();
  }
  const within = steps.filter((s) => s.addedP99Ms <= MAX_ADDED_P99_GAP_MS && s.errors === 0);
  const best = within.reduce<RelayStep | undefined>(
    (a, s) => (a === undefined || s.tokensPerS > a.tokensPerS ? s : a),
    undefined,
  );
  return {
    streamTps,
    steps,
    ceilingTokensPerS: best?.tokensPerS ?? NaN,
    ceilingStreams: best?.streams ?? 0,
    pausesTakenOut: probe.reniced,
    clientReniced: restorePriority !== undefined,
  };
}

/** One step: `streams` concurrent streams for `durationS`; its `addedP99Ms` is left for the caller. */
async function relayStep(
  target: RelayTarget,
  probe: FreezeProbe,
  streams: number,
  durationS: number,
  streamTps: number,
  progress: (line: string) => void,
): Promise<RelayStep> {
  progress(`relay: ${streams} stream(s) at ${streamTps} tokens/s each for ${durationS} s`);
  const watch = new EdgeWatch(target.edgePid, target.edgeAdminPort);
  await watch.start();
  const workerBefore = chunkCounters(await fetchMetrics(target.workerAdminPort));
  const safetyBefore = {
    cpuMs: sampleProcess(target.safetyPid).cpuMs,
    batches: outputBatches(await fetchMetrics(target.safetyAdminPort)),
  };
  await loopDelays(target.adminPorts ?? {}); // a scrape resets prom-client's event-loop histogram
  const clientLoop = monitorEventLoopDelay({ resolution: 1 });
  clientLoop.enable();
  const spans: Array<[number, number]> = [];
  const stealBefore = stealMs();
  const t0 = performance.now();
  const from = wallClock();
  const results = await Promise.all(
    Array.from({ length: streams }, () => stream(target.wsUrl, target.apiKey, t0 + durationS * 1000, spans)),
  );
  const elapsedS = (performance.now() - t0) / 1000;
  const steal = stealMs() - stealBefore;
  // Only a probe above the stack's priority tells the machine's pauses from the stack's own load:
  // at normal priority nothing is taken out of the gaps (and no pause is reported).
  const freezes: Freeze[] = probe.reniced ? probe.within(from, wallClock()) : [];
  clientLoop.disable();
  const delays = await loopDelays(target.adminPorts ?? {});
  await watch.loadEnded();
  const safetyCpuMs = sampleProcess(target.safetyPid).cpuMs - safetyBefore.cpuMs;
  const batches = outputBatches(await fetchMetrics(target.safetyAdminPort)) - safetyBefore.batches;
  const edge = await watch.finish(500);
  const workerAfter = chunkCounters(await fetchMetrics(target.workerAdminPort));
  const tokens = results.reduce((s, r) => s + r.tokens, 0);
  const gaps = spans.map(([a, b]) => b - a);
  return {
    streams,
    tokensPerS: tokens / elapsedS,
    gapP50Ms: percentile(gaps, 0.5),
    gapP99Ms: percentile(gaps, 0.99),
    stallP50Ms: timeWeightedPercentile(gaps, 0.5),
    stallP99Ms: timeWeightedPercentile(gaps, 0.99),
    stallP99LessPausesMs: timeWeightedPercentile(
      spans.map(([a, b]) => gapLessFreezes(a, b, freezes)),
      0.99,
    ),
    machinePausedMs: freezes.reduce((s, [a, b]) => s + (b - a), 0),
    stealPercent: (steal / (elapsedS * 1000)) * 100,
    addedP99Ms: NaN,
    edgeCpuPercent: (edge.cpuMs / (elapsedS * 1000)) * 100,
    edgeCpuMsPer1kTokens: (edge.cpuMs / tokens) * 1000,
    safetyCpuMsPer1kTokens: (safetyCpuMs / tokens) * 1000,
    moderationBatchesPerS: batches / elapsedS,
    tokensPerChunk: (workerAfter.tokens - workerBefore.tokens) / (workerAfter.chunks - workerBefore.chunks),
    tokensPerDelta: tokens / results.reduce((s, r) => s + r.deltas, 0),
    eventLoopMaxMsByProcess: { edge: edge.eventLoopMaxMs, ...delays.max, client: clientLoop.max / 1e6 },
    errors: results.reduce((s, r) => s + r.errors, 0),
  };
}

/** Batches of streamed output the safety service moderated so far, from its /metrics page. */
export function outputBatches(metricsText: string): number {
  const m = /^safety_output_batches_total(?:\{[^}]*\})?\s+(\S+)/m.exec(metricsText);
  return m ? Number(m[1]) : 0;
}

/** The worker's completion tokens and TokenChunk messages so far, from its /metrics page. */
export function chunkCounters(metricsText: string): { tokens: number; chunks: number } {
  const total = (name: string) => {
    let sum = 0;
    for (const m of metricsText.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'gm'))) sum += Number(m[1]);
    return sum;
  };
  return { tokens: total('inference_completion_tokens_total'), chunks: total('inference_token_chunks_total') };
}
