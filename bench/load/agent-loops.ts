import { WsTurnClient } from '../agent-loop/clients/ws-client';
import { Conversation } from '../agent-loop/conversation';
import { percentile } from '../agent-loop/summary';
import type { CorpusFile } from '../agent-loop/source-corpus';
import { createWorkload, rolloutNonce } from '../agent-loop/workload';
import {
  firstOutputByKind,
  splitFirstOutput,
  type FirstOutputByKind,
  type FirstOutputSplit,
  type PlacedTurn,
  type TimedTurn,
} from './first-output-split';
import { EdgeWatch, type EdgeUsage } from './phase-stats';
import { loopDelays, sampleProcess } from './process-stats';

/** One concurrency level of WebSocket agent loops. */
export interface LoopsResult {
  loops: number;
  durationS: number;
  turns: number;
  /** Turns that failed (any error); the loop then starts a new conversation. */
  errors: number;
  /** Failures by message (cut to 100 characters, digits masked), so a report says what failed. */
  errorKinds: Record<string, number>;
  turnsPerS: number;
  /** Output tokens streamed per second (the responses' usage.output_tokens). */
  tokensPerS: number;
  firstOutputP50Ms: number;
  firstOutputP99Ms: number;
  /** Where first output went at the median and in the p99 tail, from the edge's timing events. */
  firstOutputSplit?: FirstOutputSplit;
  /** First output of opening turns, of continuations, and after the level's start burst. */
  firstOutputByKind?: FirstOutputByKind;
  /** Edge CPU time per completed turn, ms. */
  edgeCpuMsPerTurn: number;
  /** CPU time per completed turn of each process the target names (and the load generator's own), ms. */
  cpuMsPerTurnByProcess?: Record<string, number>;
  /** Event-loop delay p99 over the level of each service the target names an admin port of, ms. */
  eventLoopP99MsByProcess?: Record<string, number>;
  /** The longest event-loop delay over the level of each of those services, ms. */
  eventLoopMaxMsByProcess?: Record<string, number>;
  edge: EdgeUsage;
}

/** Options of {@link runLoops}. */
export interface LoopsOptions {
  /** How long the edge settles after the load before its memory is read (ms; default 3,000). */
  settleMs?: number;
  /** Goes into every conversation's nonce (see {@link runLoops}); default `load`. */
  scope?: string;
  /**
   * Told when the loops start and when they end: the window between the forced full GCs the edge
   * watch takes before and after (a probe measuring beside the loops must not time those).
   */
  onLoad?: { started(): void; ended(): void };
}

/** Where and how the loops connect. */
export interface LoopTarget {
  wsUrl: string;
  apiKey: string;
  edgePid: number;
  edgeAdminPort: number;
  /** Processes whose CPU per turn is reported beside the edge's (name → pid): the stack's other services. */
  processes?: Readonly<Record<string, number>>;
  /** Admin ports of those processes (name → port), whose event-loop delay over the level is reported. */
  adminPorts?: Readonly<Record<string, number>>;
}

/** Name of the benchmark's own process (the loops' WebSocket clients) in {@link LoopsResult.cpuMsPerTurnByProcess}. */
export const LOAD_GENERATOR = 'load generator';

/**
 * Runs `loops` concurrent WebSocket agent loops for `durationS`: each plays agent-loop rollouts
 * (instructions, ten tools, a tool output of real source per call) of up to `turns` turns on its
 * own socket, then starts a new conversation on a new socket, until the time is up. Each
 * conversation has its own nonce, so no two share a prefix; `scope` goes into the nonces, so two
 * runs with the same seed play the same rollouts without finding each other's prompts in the
 * worker's prefix cache. Starts are spread over the first second (or tenth of the duration), as
 * independent agents would arrive.
 */
export async function runLoops(
  target: LoopTarget,
  loops: number,
  durationS: number,
  turns: number,
  corpus: readonly CorpusFile[],
  seed: number,
  options: LoopsOptions = {},
): Promise<LoopsResult> {
  const { settleMs = 3000, scope = 'load', onLoad } = options;
  const watch = new EdgeWatch(target.edgePid, target.edgeAdminPort);
  await watch.start();
  const processes = { ...target.processes, [LOAD_GENERATOR]: process.pid };
  const cpuBefore = cpuOf(processes);
  await loopDelays(target.adminPorts ?? {}); // a scrape resets prom-client's event-loop histogram
  onLoad?.started();
  const firstOutput: number[] = [];
  const timed: TimedTurn[] = [];
  const placed: PlacedTurn[] = [];
  let completed = 0;
  let errors = 0;
  const errorKinds: Record<string, number> = {};
  let outputTokens = 0;
  const t0 = performance.now();
  const deadline = t0 + durationS * 1000;
  const spread = Math.min(1000, (durationS * 1000) / 10);
  const loop = async (id: number) => {
    await new Promise((r) => setTimeout(r, (spread * id) / loops));
    for (let conv = 0; performance.now() < deadline; conv++) {
      const workload = createWorkload({
        seed,
        outputBytes: [2800, 8192],
        corpus,
        nonce: rolloutNonce(seed, `${scope}|${loops}|${id}|${conv}`),
      });
      const conversation = new Conversation('ws', workload);
      let client: WsTurnClient | undefined;
      try {
        // The timing event (one more frame per turn) splits first output hop by hop.
        client = await WsTurnClient.open(target.wsUrl, target.apiKey, { timing: true });
        for (let turn = 1; turn <= turns && !conversation.done && performance.now() < deadline; turn++) {
          const sentAtS = (performance.now() - t0) / 1000;
          const result = await client.send(conversation.nextBody());
          conversation.accept(result.response, turn);
          completed++;
          firstOutput.push(result.firstOutputMs);
          placed.push({ turn, sentAtS, firstOutputMs: result.firstOutputMs });
          if (result.timing) timed.push({ firstOutputMs: result.firstOutputMs, timing: result.timing });
          outputTokens += result.response.usage.output_tokens;
        }
      } catch (err) {
        errors++;
        const kind = (err instanceof Error ? err.message : String(err)).slice(0, 100).replace(/\d+/g, 'N');
        errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 100));
      } finally {
        await client?.close();
      }
    }
  };
  await Promise.all(Array.from({ length: loops }, (_, i) => loop(i)));
  onLoad?.ended();
  const cpuAfter = cpuOf(processes);
  const delays = await loopDelays(target.adminPorts ?? {});
  const elapsedS = (performance.now() - t0) / 1000;
  await watch.loadEnded();
  const edge = await watch.finish(settleMs);
  return {
    loops,
    durationS: elapsedS,
    turns: completed,
    errors,
    errorKinds,
    turnsPerS: completed / elapsedS,
    tokensPerS: outputTokens / elapsedS,
    firstOutputP50Ms: percentile(firstOutput, 0.5),
    firstOutputP99Ms: percentile(firstOutput, 0.99),
    firstOutputSplit: splitFirstOutput(timed),
    firstOutputByKind: firstOutputByKind(placed, durationS),
    edgeCpuMsPerTurn: edge.cpuMs / Math.max(1, completed),
    cpuMsPerTurnByProcess: Object.fromEntries(
      Object.entries(cpuAfter).map(([name, ms]) => [name, (ms - (cpuBefore[name] ?? ms)) / Math.max(1, completed)]),
    ),
    eventLoopP99MsByProcess: delays.p99,
    eventLoopMaxMsByProcess: delays.max,
    edge,
  };
}

/** CPU time so far of each process, ms; a process that is gone is left out. */
function cpuOf(processes: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(processes)) {
    try {
      out[name] = sampleProcess(pid).cpuMs;
    } catch {
      // exited (a restarted service has a new pid): its figure would be wrong, so there is none
    }
  }
  return out;
}
