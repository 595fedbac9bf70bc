/**
 * Capacity benchmark: many agents on one edge. Against the real stack with the simulated engine:
 * 1. N concurrent WebSocket agent loops (10, 100, 500) for a bounded time each;
 * 2. the relay ceiling: K streams at 4,000 tokens/s each, raised until the added p99 stall between
 *    text deltas exceeds 2 ms;
 * 3. memory per idle WebSocket connection with 10,000 open.
 * Writes load.{json,md,svg}. See bench/load/README.md.
 *
 *   npm run bench:load -- --quick
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startStack, type Stack } from '@fastloop/launcher';
import { SERVICE_NODE_ARGS_ENV } from '@fastloop/service-kit';
import { loadCorpus } from '../agent-loop/source-corpus';
import { fmt } from '../agent-loop/summary';
import { ProfileSamples } from '../profile/cpu-profile';
import { runLoops, type LoopsResult } from './agent-loops';
import { edgeCpuParts, type EdgeCpuParts } from './edge-parts';
import { runIdle } from './idle';
import { LoadOptionsError, parseLoadOptions, type LoadOptions } from './options';
import { runRelay } from './relay';
import { buildLoadReport, renderLoadMarkdown } from './report';
import { renderLoadSvg } from './report-svg';

const REPO_ROOT = resolve(__dirname, '..', '..');
const API_KEY = 'sk-bench-load';
const progress = (line: string) => process.stderr.write(`${line}\n`);

/** Stack settings shared by both stacks: room for every loop's Generate call and session. */
const COMMON_ENV = {
  FASTLOOP_API_KEYS: `${API_KEY}:bench-load`,
  SIM_JITTER: '0',
  INFERENCE_MAX_CONCURRENCY: '4096',
  INFERENCE_SESSION_CACHE_TOKENS: '16000000',
  EDGE_WS_MAX_QUEUED: '16',
  // One tenant opens every connection here (10,000 idle ones at most): lift the edge's caps
  // (1,000 per tenant by default) above what the benchmark opens, so it measures memory, not the cap.
  EDGE_MAX_CONNECTIONS: '30000',
  EDGE_MAX_CONNECTIONS_PER_TENANT: '30000',
  // The edge's admin port then answers POST /debug/gc: heap is measured after a full collection,
  // so what a level leaves behind is not confused with garbage not yet collected. Flags the caller
  // set (e.g. --cpu-prof) are kept.
  [SERVICE_NODE_ARGS_ENV]: [process.env[SERVICE_NODE_ARGS_ENV], '--expose-gc'].filter(Boolean).join(' '),
};

async function withStack<T>(env: Record<string, string>, work: (stack: Stack) => Promise<T>): Promise<T> {
  const stack = await startStack({ port: 0, privateRedis: true, logLevel: 'warn', env: { ...COMMON_ENV, ...env } });
  try {
    const crash = stack.crashed.then((c): never => {
      throw new Error(`${c.service} exited during the load benchmark\n${stack.tail(c.service, 40)}`);
    });
    crash.catch(() => undefined);
    return await Promise.race([work(stack), crash]);
  } finally {
    await stack.stop();
  }
}

const target = (stack: Stack) => ({
  wsUrl: stack.wsUrl,
  apiKey: API_KEY,
  edgePid: stack.services.edge.pid,
  edgeAdminPort: stack.services.edge.ports.admin,
  workerAdminPort: stack.services.inference.ports.admin,
  safetyPid: stack.services.safety.pid,
  safetyAdminPort: stack.services.safety.ports.admin,
  processes: Object.fromEntries(others(stack).map(([name, info]) => [name, info.pid])),
  adminPorts: Object.fromEntries(others(stack).map(([name, info]) => [name, info.ports.admin])),
});

/** The stack's services but the edge (whose figures the loops take themselves). */
const others = (stack: Stack) => Object.entries(stack.services).filter(([name]) => name !== 'edge');

/** The agent loops' engine: tool calls until the rollout's last turn, at the options' speed. */
const loopsEnv = (options: LoadOptions) => ({
  SIM_TOOL_CALLS: String(options.turns - 1),
  SIM_TOKENS_PER_SECOND: String(options.tps),
  SIM_TTFT_MS: '50',
});

const warmUp = (stack: Stack, options: LoadOptions, corpus: ReturnType<typeof loadCorpus>) => {
  progress('loops: warm-up (10 loops, 5 s, not recorded)');
  return runLoops(target(stack), 10, 5, options.turns, corpus, options.seed + 7919);
};

async function agentLoops(options: LoadOptions): Promise<LoopsResult[]> {
  const corpus = loadCorpus(REPO_ROOT);
  return withStack(loopsEnv(options), async (stack) => {
    await warmUp(stack, options, corpus);
    const out: LoopsResult[] = [];
    for (const n of options.loops) {
      progress(`loops: ${n} concurrent WebSocket agent loops for ${options.durationS} s`);
      const r = await runLoops(target(stack), n, options.durationS, options.turns, corpus, options.seed, {
        settleMs: options.quick ? 3000 : 10_000,
      });
      progress(
        `  ${fmt(r.turnsPerS)} turns/s, first output p50 ${fmt(r.firstOutputP50Ms)} ms p99 ${fmt(r.firstOutputP99Ms)} ms, ${r.errors} errors`,
      );
      out.push(r);
    }
    return out;
  });
}

/**
 * Sampling interval of the profiled level, µs: ~10,000 of the edge's samples in a level. The
 * profiler still costs: every service runs under it, and the committed level ran at 229 turns/s
 * against 394 unprofiled, 3.13 against 1.80 ms of edge CPU per turn; only its shares are used.
 */
const PROFILE_INTERVAL_US = 2000;
/** The profiled level runs at most this long: enough samples (~10,000), little time. */
const PROFILE_LEVEL_S = 20;

/**
 * One level of `loops` loops on a fresh stack whose services run under the V8 CPU profiler; the edge's
 * profile (written when the stack stops) is split by part over the level's window (edge-parts.ts).
 * A stack of its own: the measured levels run unprofiled.
 */
async function profiledLevel(options: LoadOptions, loops: number): Promise<EdgeCpuParts> {
  const corpus = loadCorpus(REPO_ROOT);
  const dir = mkdtempSync(join(tmpdir(), 'fastloop-load-profile-'));
  const profileArgs = [`--cpu-prof`, `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${PROFILE_INTERVAL_US}`];
  const env = {
    ...loopsEnv(options),
    [SERVICE_NODE_ARGS_ENV]: [COMMON_ENV[SERVICE_NODE_ARGS_ENV], ...profileArgs].join(' '),
  };
  const clockUs = () => Number(process.hrtime.bigint() / 1000n);
  try {
    const window = { fromUs: 0, toUs: 0 };
    let edgePid = 0;
    const level = await withStack(env, async (stack) => {
      edgePid = stack.services.edge.pid;
      await warmUp(stack, options, corpus);
      const durationS = Math.min(options.durationS, PROFILE_LEVEL_S);
      progress(`profile: ${loops} loops for ${durationS} s under the CPU profiler`);
      return runLoops(target(stack), loops, durationS, options.turns, corpus, options.seed, {
        settleMs: 1000,
        scope: 'profile',
        onLoad: { started: () => (window.fromUs = clockUs()), ended: () => (window.toUs = clockUs()) },
      });
    });
    const file = readdirSync(dir).find((name) => name.includes(`.${edgePid}.`) && name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`the edge (pid ${edgePid}) left no CPU profile in ${dir}`);
    const samples = ProfileSamples.read(join(dir, file));
    return edgeCpuParts(
      samples,
      { fromS: samples.secondsAt(window.fromUs), toS: samples.secondsAt(window.toUs) },
      { loops, turns: level.turns, procMsPerTurn: level.edgeCpuMsPerTurn, intervalUs: PROFILE_INTERVAL_US },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const options = parseLoadOptions(process.argv.slice(2), REPO_ROOT);
  const started = performance.now();
  const loops = await agentLoops(options);
  const edgeParts: EdgeCpuParts[] = [];
  for (const n of options.profileLoops) edgeParts.push(await profiledLevel(options, n));
  // A long answer per request, no tools: the relay stack streams messages at streamTps.
  const relayEnv: Record<string, string> = {
    SIM_TOOL_CALLS: '0',
    SIM_ANSWER_WORDS: '1500',
    SIM_TOKENS_PER_SECOND: String(options.streamTps),
    SIM_TTFT_MS: '0',
    EDGE_OUTPUT_MODERATION: String(options.outputModeration),
  };
  if (options.chunkTokens !== undefined) relayEnv.INFERENCE_MAX_CHUNK_TOKENS = String(options.chunkTokens);
  if (options.moderationFlushMs !== undefined)
    relayEnv.EDGE_OUTPUT_MODERATION_FLUSH_MS = String(options.moderationFlushMs);
  const relay = await withStack(relayEnv, (stack) =>
    runRelay(target(stack), options.streams, options.relayDurationS, options.streamTps, progress),
  );
  // Its own fresh stack: after the relay's streams the edge's heap shrinks as it collects garbage,
  // which would be counted against the connections (a negative figure once).
  progress(`idle: opening ${options.idle} WebSocket connections`);
  const idle = options.idle > 0 ? await withStack({}, (stack) => runIdle(target(stack), options.idle)) : undefined;
  const report = buildLoadReport(options, { loops, edgeParts, relay, idle });
  mkdirSync(options.outDir, { recursive: true });
  const md = renderLoadMarkdown(report);
  writeFileSync(join(options.outDir, 'load.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(options.outDir, 'load.md'), md);
  writeFileSync(join(options.outDir, 'load.svg'), renderLoadSvg(report));
  process.stdout.write(
    `${md}\nwrote ${join(options.outDir, 'load.{json,md,svg}')} in ${fmt((performance.now() - started) / 1000)} s\n`,
  );
}

main().catch((err: unknown) => {
  if (err instanceof LoadOptionsError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`load benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
