import { isAbsolute, join, resolve } from 'node:path';

/** Options of one load-benchmark run, after defaults and validation. */
export interface LoadOptions {
  /** Concurrent WebSocket agent loops per phase (`--loops 10,100,500`). Default 10, 100, 500; `--quick` the same, shorter. */
  readonly loops: readonly number[];
  /** Seconds each concurrency level runs (`--duration`). Default 60; `--quick` 15. */
  readonly durationS: number;
  /** Turns per rollout before a loop starts a new conversation on a new socket (`--turns`). Default 20. */
  readonly turns: number;
  /** Decode speed of the simulated engine for the agent loops (`--tps`). Default 1000. */
  readonly tps: number;
  /** Relay ceiling: streams at this many tokens/s each (`--stream-tps`). Default 4000. */
  readonly streamTps: number;
  /** Relay ceiling: concurrent stream counts tried, in order, until the added p99 stall exceeds the limit (`--streams`). Default 1,2,4,…,256; `--quick` up to 32. */
  readonly streams: readonly number[];
  /** Relay ceiling: seconds per stream count (`--relay-duration`). Default 8; `--quick` 4. */
  readonly relayDurationS: number;
  /** Relay ceiling: the worker's INFERENCE_MAX_CHUNK_TOKENS (`--chunk-tokens`). Default: the worker's own (256). */
  readonly chunkTokens: number | undefined;
  /** Relay ceiling: the edge's EDGE_OUTPUT_MODERATION (`--output-moderation on|off`). Default on, as deployed. */
  readonly outputModeration: boolean;
  /** Relay ceiling: the edge's EDGE_OUTPUT_MODERATION_FLUSH_MS (`--moderation-flush-ms`). Default: the edge's own (0). */
  readonly moderationFlushMs: number | undefined;
  /** Idle WebSocket connections opened for the memory-per-connection figure (`--idle`). Default 10,000; `--quick` 2,000. */
  readonly idle: number;
  /**
   * Loops of the profiled levels (`--profile-loops`): per entry, a fresh stack under the V8 CPU
   * profiler runs one level of this many loops (at most 20 s) to split the edge's CPU per turn by
   * part. Default 100 (the target's level) and 500 (the saturated one); 0 skips them.
   */
  readonly profileLoops: readonly number[];
  /** Seeds the workload (`--seed`). Default 1. */
  readonly seed: number;
  /** Where the reports go (`--out`). Default bench/results. */
  readonly outDir: string;
  readonly quick: boolean;
}

/** Thrown for a bad command line; the message names the option. */
export class LoadOptionsError extends Error {
  override readonly name = 'LoadOptionsError';
}

export const LOAD_USAGE = `usage: npm run bench:load -- [--quick] [--loops 10,100,500] [--duration S] [--turns N] [--tps N]
       [--stream-tps N] [--streams 1,2,4] [--relay-duration S] [--chunk-tokens N] [--output-moderation on|off]
       [--moderation-flush-ms N] [--idle N] [--profile-loops 100,500] [--seed N] [--out DIR]`;

/** Parses the command line; `--quick` changes the defaults, explicit options win. */
export function parseLoadOptions(argv: readonly string[], repoRoot: string): LoadOptions {
  const raw = new Map<string, string>();
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') {
      quick = true;
      continue;
    }
    if (arg === '--help' || arg === '-h') throw new LoadOptionsError(LOAD_USAGE);
    if (!arg.startsWith('--')) throw new LoadOptionsError(`unexpected argument '${arg}'\n${LOAD_USAGE}`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new LoadOptionsError(`--${name} needs a value\n${LOAD_USAGE}`);
    raw.set(name, value);
  }
  const known = [
    'loops',
    'duration',
    'turns',
    'tps',
    'stream-tps',
    'streams',
    'relay-duration',
    'chunk-tokens',
    'output-moderation',
    'moderation-flush-ms',
    'idle',
    'profile-loops',
    'seed',
    'out',
  ];
  for (const name of raw.keys())
    if (!known.includes(name)) throw new LoadOptionsError(`unknown option --${name}\n${LOAD_USAGE}`);
  const out = raw.get('out') ?? join('bench', 'results');
  const doubling = (max: number) => Array.from({ length: Math.log2(max) + 1 }, (_, i) => 2 ** i);
  return {
    loops: ints(raw, 'loops', [10, 100, 500], 1, 5000),
    durationS: num(raw, 'duration', quick ? 15 : 60, 1, 3600),
    turns: ints(raw, 'turns', [20], 2, 1000)[0],
    tps: num(raw, 'tps', 1000, 1, 1e7),
    streamTps: num(raw, 'stream-tps', 4000, 1, 1e7),
    streams: ints(raw, 'streams', doubling(quick ? 32 : 256), 1, 5000),
    relayDurationS: num(raw, 'relay-duration', quick ? 4 : 8, 1, 600),
    chunkTokens: raw.has('chunk-tokens') ? ints(raw, 'chunk-tokens', [], 1, 1_000_000)[0] : undefined,
    outputModeration: onOff(raw, 'output-moderation', true),
    moderationFlushMs: raw.has('moderation-flush-ms') ? ints(raw, 'moderation-flush-ms', [], 0, 60_000)[0] : undefined,
    idle: ints(raw, 'idle', [quick ? 2000 : 10_000], 0, 19_000)[0],
    profileLoops: ints(raw, 'profile-loops', [100, 500], 0, 5000).filter((n) => n > 0),
    seed: ints(raw, 'seed', [1], 0, 2 ** 31)[0],
    outDir: isAbsolute(out) ? out : resolve(repoRoot, out),
    quick,
  };
}

function ints(raw: Map<string, string>, name: string, fallback: number[], min: number, max: number): number[] {
  const text = raw.get(name);
  if (text === undefined) return fallback;
  const values = text.split(',').map((s) => Number(s.trim().replace(/_/g, '')));
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < min || v > max)) {
    throw new LoadOptionsError(`--${name} must be integers from ${min} to ${max}, got '${text}'`);
  }
  return values;
}

function onOff(raw: Map<string, string>, name: string, fallback: boolean): boolean {
  const text = raw.get(name);
  if (text === undefined) return fallback;
  if (text !== 'on' && text !== 'off') throw new LoadOptionsError(`--${name} must be on or off, got '${text}'`);
  return text === 'on';
}

function num(raw: Map<string, string>, name: string, fallback: number, min: number, max: number): number {
  const text = raw.get(name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new LoadOptionsError(`--${name} must be a number from ${min} to ${max}, got '${text}'`);
  return n;
}
