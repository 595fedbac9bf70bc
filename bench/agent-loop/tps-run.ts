import { startStack, type Stack } from '@fastloop/launcher';
import { LINK_PRESETS, startLinkEmulator, type LinkEmulator } from '../link/link-emulator';
import type { Endpoints } from './clients/open-client';
import type { SimPaceSettings } from './engine-model';
import { MODES, type BenchOptions, type Mode } from './options';
import { runRound, type Phase, type TurnRecord } from './rollout-runner';
import type { CorpusFile } from './source-corpus';
import { createWorkload, rolloutNonce, type Workload } from './workload';

/** Writes one progress line (stderr). */
export type Progress = (line: string) => void;

/**
 * The API key of each mode's rollouts. Each is its own tenant (`key:tenant` in FASTLOOP_API_KEYS),
 * so a worker whose prefix cache is scoped per tenant cannot serve one mode with another's prefix
 * either (the per-rollout nonce already prevents it by content).
 */
export const MODE_API_KEYS: Readonly<Record<Mode, string>> = Object.fromEntries(
  MODES.map((m) => [m, `sk-bench-${m}`]),
) as Record<Mode, string>;

/**
 * The stack environment for one TPS setting. The sim's speed is per process, hence stacks per
 * setting; SIM_TOOL_CALLS = turns − 1 makes a rollout exactly `turns` turns (tool calls, then an
 * answer of SIM_ANSWER_WORDS, default 40, words). Jitter off, so the engine model is exact.
 */
export function stackEnv(
  options: Pick<BenchOptions, 'turns' | 'ttftMs' | 'prefillTps' | 'prefixCaching'>,
  tps: number,
): Record<string, string> {
  return {
    SIM_TOOL_CALLS: String(options.turns - 1),
    SIM_TOKENS_PER_SECOND: String(tps),
    SIM_TTFT_MS: String(options.ttftMs),
    SIM_PREFILL_TOKENS_PER_SECOND: String(options.prefillTps),
    SIM_JITTER: '0',
    INFERENCE_PREFIX_CACHING: String(options.prefixCaching),
    FASTLOOP_API_KEYS: MODES.map((m) => `${MODE_API_KEYS[m]}:bench-${m}`).join(','),
  };
}

/**
 * All rollouts at one TPS setting, each repetition on a fresh stack (fresh worker and edge caches,
 * fresh Redis), every rollout with its own nonce:
 * 1. `reps` interleaved rounds (all modes, turn by turn, balanced order);
 * 2. `soloReps` rounds in which each mode runs alone on its own fresh stack (the order of the
 *    modes rotates per round).
 * Each stack first runs a short unrecorded warm-up with yet other nonces.
 */
export async function runTps(
  options: BenchOptions,
  tps: number,
  corpus: readonly CorpusFile[],
  progress: Progress,
): Promise<TurnRecord[]> {
  const records: TurnRecord[] = [];
  const run = (phase: Phase, rep: number, modes: readonly Mode[], tag: string) =>
    withStack(options, tps, progress, tag, async (stack) => {
      const links: LinkEmulator[] = [];
      try {
        return await runMeasured(stack, options, tps, corpus, progress, { phase, rep, modes, tag, links });
      } finally {
        await Promise.all(links.map((l) => l.close()));
      }
    });
  const firstRep = options.firstRep ?? 1;
  for (let rep = firstRep; rep < firstRep + options.reps; rep++) {
    records.push(
      ...(await run(
        'interleaved',
        rep,
        options.modes,
        `[tps=${tps}] interleaved rep ${rep}/${firstRep + options.reps - 1}`,
      )),
    );
  }
  for (let rep = 1; rep <= options.soloReps; rep++) {
    const shift = (rep - 1) % options.modes.length;
    const order = [...options.modes.slice(shift), ...options.modes.slice(0, shift)];
    for (const mode of order)
      records.push(...(await run('solo', rep, [mode], `[tps=${tps}] solo ${mode} rep ${rep}/${options.soloReps}`)));
  }
  return records;
}

interface Measured {
  phase: Phase;
  rep: number;
  modes: readonly Mode[];
  tag: string;
  /** Link emulators started for this stack, closed with it. */
  links: LinkEmulator[];
}

/**
 * Where clients connect: the stack itself, or (with `--link`) link emulators in front of the
 * edge's HTTP/WebSocket port and its gRPC port. /metrics scrapes never go through the link.
 */
async function linkedEndpoints(stack: Stack, options: BenchOptions, links: LinkEmulator[]): Promise<Endpoints> {
  const direct = { url: stack.url, wsUrl: stack.wsUrl, grpcAddress: stack.grpcAddress, apiKey: stack.apiKey };
  if (options.link === 'none') return direct;
  const profile = LINK_PRESETS[options.link];
  const http = await startLinkEmulator({ host: '127.0.0.1', port: stack.port }, profile);
  links.push(http);
  const grpcPort = Number(stack.grpcAddress.slice(stack.grpcAddress.lastIndexOf(':') + 1));
  const grpc = await startLinkEmulator({ host: '127.0.0.1', port: grpcPort }, profile);
  links.push(grpc);
  return {
    ...direct,
    url: `http://127.0.0.1:${http.port}`,
    wsUrl: `ws://127.0.0.1:${http.port}/v1/responses`,
    grpcAddress: `127.0.0.1:${grpc.port}`,
  };
}

async function runMeasured(
  stack: Stack,
  options: BenchOptions,
  tps: number,
  corpus: readonly CorpusFile[],
  progress: Progress,
  m: Measured,
): Promise<TurnRecord[]> {
  const pace: SimPaceSettings = {
    ttftMs: options.ttftMs,
    prefillTokensPerSecond: options.prefillTps,
    tokensPerSecond: tps,
  };
  const adminPorts = { edge: stack.services.edge.ports.admin, inference: stack.services.inference.ports.admin };
  const endpoints = await linkedEndpoints(stack, options, m.links);
  const common = { modes: m.modes, endpoints, apiKeys: MODE_API_KEYS, adminPorts, pace };
  const workloads = (key: (mode: Mode) => string, seed: number) =>
    new Map(
      m.modes.map(
        (mode) =>
          [
            mode,
            createWorkload({ seed, outputBytes: options.outputBytes, corpus, nonce: rolloutNonce(seed, key(mode)) }),
          ] as const,
      ),
    );
  if (options.warmupTurns > 0) {
    progress(`${m.tag}: warm-up, ${options.warmupTurns} turns per mode (not recorded)`);
    const warm = workloads((mode) => `warm|${m.phase}|${mode}|${m.rep}|${tps}`, options.seed + 7919);
    await runRound({ ...common, workloads: warm, phase: m.phase, turns: options.warmupTurns, rep: 1 });
  }
  const measured: ReadonlyMap<Mode, Workload> = workloads((mode) => `${m.phase}|${mode}|${m.rep}|${tps}`, options.seed);
  return runRound({
    ...common,
    workloads: measured,
    phase: m.phase,
    turns: options.turns,
    rep: m.rep,
    onTurn: (mode, turn) => progress(`${m.tag} ${mode} turn ${turn}/${options.turns}`),
  });
}

/** Starts a private stack for `tps`, runs `work` on it, and stops it. A service crash fails the run with its log tail. */
async function withStack<T>(
  options: BenchOptions,
  tps: number,
  progress: Progress,
  tag: string,
  work: (stack: Stack) => Promise<T>,
): Promise<T> {
  progress(`${tag}: starting a fresh stack (SIM_TOOL_CALLS=${options.turns - 1}, SIM_TTFT_MS=${options.ttftMs})`);
  const stack = await startStack({
    port: 0,
    privateRedis: true,
    logLevel: 'warn',
    env: { ...stackEnv(options, tps), ...options.extraEnv },
  });
  try {
    return await raceCrash(stack, work(stack));
  } finally {
    await stack.stop();
  }
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
    process.stderr.write(
      `\nservice logs (last 20 lines each; full logs in ${stack.logDir}):\n${stack.tail(undefined, 20)}\n`,
    );
    throw err;
  }
}
