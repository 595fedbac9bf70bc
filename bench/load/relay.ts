import WebSocket from 'ws';
import { percentile } from '../agent-loop/summary';
import { EdgeWatch } from './phase-stats';

/** The p99 inter-delta gap may grow by at most this much over one stream's before a stream count counts as relayed. */
export const MAX_ADDED_P99_GAP_MS = 2;

/** One stream count of the relay test. */
export interface RelayStep {
  streams: number;
  /** Output tokens delivered per second over all streams. */
  tokensPerS: number;
  /** Gaps between consecutive text deltas of one response, at the client, ms. */
  gapP50Ms: number;
  gapP99Ms: number;
  /** gapP99Ms − the single stream's gapP99Ms. */
  addedP99Ms: number;
  edgeCpuPercent: number;
  errors: number;
}

/** The relay ceiling: every step, and the highest aggregate tokens/s within the added-gap bound. */
export interface RelayResult {
  streamTps: number;
  steps: RelayStep[];
  ceilingTokensPerS: number;
  ceilingStreams: number;
}

/**
 * One streaming client: sends a `response.create` (no tools, so the simulated model answers with
 * a long message), records when each `response.output_text.delta` frame arrives, and sends the
 * next as soon as one completes, until `deadline`.
 */
async function stream(wsUrl: string, apiKey: string, deadline: number, gaps: number[]): Promise<{ tokens: number; errors: number }> {
  const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${apiKey}` }, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let tokens = 0;
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
            const now = performance.now();
            if (!Number.isNaN(last)) gaps.push(now - last);
            last = now;
            return;
          }
          const event = JSON.parse(text) as { type: string; response?: { usage?: { output_tokens?: number } } };
          if (event.type === 'response.completed') tokens += event.response?.usage?.output_tokens ?? 0;
          else if (event.type !== 'response.failed' && event.type !== 'error') return;
          else errors++;
          done();
        };
        settle = done;
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ type: 'response.create', model: 'fastloop-sim', input: 'Explain the design of the relay in detail.', store: false }));
      });
    }
  } finally {
    ws.removeAllListeners('close');
    ws.close();
  }
  return { tokens, errors };
}

/**
 * Raises the number of concurrent streams (each at the engine's `streamTps`) step by step and
 * measures the gaps between text deltas at the client. A step is within bound while its p99 gap
 * exceeds the single stream's by at most {@link MAX_ADDED_P99_GAP_MS}; the ceiling is the highest
 * aggregate tokens/s of such a step. Stops after the first step out of bound.
 */
export async function runRelay(
  target: { wsUrl: string; apiKey: string; edgePid: number; edgeAdminPort: number },
  streamCounts: readonly number[],
  durationS: number,
  streamTps: number,
  progress: (line: string) => void,
): Promise<RelayResult> {
  const steps: RelayStep[] = [];
  let baseline = NaN;
  for (const streams of streamCounts) {
    progress(`relay: ${streams} stream(s) at ${streamTps} tokens/s each for ${durationS} s`);
    const watch = new EdgeWatch(target.edgePid, target.edgeAdminPort);
    await watch.start();
    const gaps: number[] = [];
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: streams }, () => stream(target.wsUrl, target.apiKey, t0 + durationS * 1000, gaps)));
    const elapsedS = (performance.now() - t0) / 1000;
    await watch.loadEnded();
    const edge = await watch.finish(500);
    const gapP99Ms = percentile(gaps, 0.99);
    if (Number.isNaN(baseline)) baseline = gapP99Ms;
    const step: RelayStep = {
      streams,
      tokensPerS: results.reduce((s, r) => s + r.tokens, 0) / elapsedS,
      gapP50Ms: percentile(gaps, 0.5),
      gapP99Ms,
      addedP99Ms: gapP99Ms - baseline,
      edgeCpuPercent: (edge.cpuMs / (elapsedS * 1000)) * 100,
      errors: results.reduce((s, r) => s + r.errors, 0),
    };
    steps.push(step);
    if (step.addedP99Ms > MAX_ADDED_P99_GAP_MS || step.errors > 0) break;
  }
  const within = steps.filter((s) => s.addedP99Ms <= MAX_ADDED_P99_GAP_MS && s.errors === 0);
  const best = within.reduce<RelayStep | undefined>((a, s) => (a === undefined || s.tokensPerS > a.tokensPerS ? s : a), undefined);
  return { streamTps, steps, ceilingTokensPerS: best?.tokensPerS ?? NaN, ceilingStreams: best?.streams ?? 0 };
}
