import { startStack, type Stack } from '@fastloop/launcher';
import type { SimPaceSettings } from './engine-model';
import type { BenchOptions } from './options';
import { runRound, type TurnRecord } from './rollout-runner';
import type { CorpusFile } from './source-corpus';
import { createWorkload } from './workload';

/** The API key the benchmark's stacks accept. */
export const BENCH_API_KEY = 'sk-bench-agent-loop';

/** Writes one progress line (stderr). */
export type Progress = (line: string) => void;

/**
 * The stack environment for one TPS setting. The sim's speed is per process, hence one stack per
 * setting; SIM_TOOL_CALLS = turns − 1 makes a rollout exactly `turns` turns (tool calls, then an
 * answer of SIM_ANSWER_WORDS, default 40, words). Jitter off, so the engine model is exact.
 */
export function stackEnv(options: BenchOptions, tps: number): Record<string, string> {
  return {
    SIM_TOOL_CALLS: String(options.turns - 1),
    SIM_TOKENS_PER_SECOND: String(tps),
    SIM_TTFT_MS: String(options.ttftMs),
    SIM_PREFILL_TOKENS_PER_SECOND: String(options.prefillTps),
    SIM_JITTER: '0',
    INFERENCE_PREFIX_CACHING: String(options.prefixCaching),
    FASTLOOP_API_KEYS: BENCH_API_KEY,
  };
}

/**
 * Starts a private stack for `tps`, warms every mode up with a short unrecorded rollout (another
 * seed, so nothing it renders is reused by the measured rollouts), runs `reps` measured rounds,
 * and stops the stack. A service crash fails the run with the service's log tail.
 */
export async function runTps(options: BenchOptions, tps: number, corpus: readonly CorpusFile[], progress: Progress): Promise<TurnRecord[]> {
  progress(`[tps=${tps}] starting the stack (SIM_TOOL_CALLS=${options.turns - 1}, SIM_TTFT_MS=${options.ttftMs})`);
  const stack = await startStack({ port: 0, privateRedis: true, logLevel: 'warn', env: stackEnv(options, tps) });
  try {
    return await raceCrash(stack, runRounds(stack, options, tps, corpus, progress));
  } finally {
    await stack.stop();
  }
}

async function runRounds(stack: Stack, options: BenchOptions, tps: number, corpus: readonly CorpusFile[], progress: Progress): Promise<TurnRecord[]> {
  const pace: SimPaceSettings = { ttftMs: options.ttftMs, prefillTokensPerSecond: options.prefillTps, tokensPerSecond: tps };
  const adminPorts = { edge: stack.services.edge.ports.admin, inference: stack.services.inference.ports.admin };
  const endpoints = { url: stack.url, wsUrl: stack.wsUrl, grpcAddress: stack.grpcAddress, apiKey: stack.apiKey };
  const common = { modes: options.modes, endpoints, adminPorts, pace };
  if (options.warmupTurns > 0) {
    progress(`[tps=${tps}] warm-up: ${options.warmupTurns} turns per mode (not recorded)`);
    const warm = createWorkload({ seed: options.seed + 7919, outputBytes: options.outputBytes, corpus });
    await runRound({ ...common, workload: warm, turns: options.warmupTurns, rep: 0 });
  }
  const workload = createWorkload({ seed: options.seed, outputBytes: options.outputBytes, corpus });
  const records: TurnRecord[] = [];
  for (let rep = 1; rep <= options.reps; rep++) {
    const tag = options.reps > 1 ? ` rep ${rep}/${options.reps}` : '';
    const round = await runRound({
      ...common,
      workload,
      turns: options.turns,
      rep,
      onTurn: (mode, turn) => progress(`[tps=${tps}]${tag} ${mode} turn ${turn}/${options.turns}`),
    });
    records.push(...round);
  }
  return records;
}

async function raceCrash<T>(stack: Stack, work: Promise<T>): Promise<T> {
  const crash = stack.crashed.then((c): never => {
    const how = c.exit.signal ? `was killed by ${c.exit.signal}` : `exited with code ${c.exit.code}`;
    throw new Error(`${c.service} ${how} during the benchmark\n${stack.tail(c.service, 40)}`);
  });
  crash.catch(() => undefined);
  try {
    return await Promise.race([work, crash]);
  } catch (err) {
    process.stderr.write(`\nservice logs (last 20 lines each; full logs in ${stack.logDir}):\n${stack.tail(undefined, 20)}\n`);
    throw err;
  }
}
