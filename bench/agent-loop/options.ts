import { isAbsolute, join, resolve } from 'node:path';
import { LINK_PRESET_NAMES, type LinkPresetName } from '../link/link-emulator';

/** The transports a rollout can use, in report order. */
export const MODES = ['http-stateless', 'http-previous', 'ws', 'grpc'] as const;
export type Mode = (typeof MODES)[number];

/** Options of one benchmark run, after defaults and validation. */
export interface BenchOptions {
  /** Turns per rollout (`--turns`). Default 50; `--quick` 12. The sim makes `turns - 1` tool calls. */
  readonly turns: number;
  /** Engine decode speeds, one stack each (`--tps 65,1000,4000`). Default all three; `--quick` 1000. */
  readonly tps: readonly number[];
  /** Transports to compare (`--modes ws,http-stateless`). Default all four. */
  readonly modes: readonly Mode[];
  /** Interleaved rounds per TPS, each on a fresh stack (`--reps`). Default 2 (with 4 modes and 50 turns the turn order is then exactly balanced); `--quick` 2. */
  readonly reps: number;
  /** Rounds per TPS in which each mode runs alone on a fresh stack (`--solo`); 0 skips them. Default 1. */
  readonly soloReps: number;
  /** Unrecorded turns per mode before measuring, to warm the JIT and connections (`--warmup`). Default 3. */
  readonly warmupTurns: number;
  /** SIM_TTFT_MS of the simulated engine (`--ttft-ms`). Default 50, the inference service's default. */
  readonly ttftMs: number;
  /** SIM_PREFILL_TOKENS_PER_SECOND (`--prefill-tps`). Default 20 000, the inference service's default. */
  readonly prefillTps: number;
  /** INFERENCE_PREFIX_CACHING of the worker (`--prefix-caching on|off`). Default on, the worker's default (like vLLM's automatic prefix caching). */
  readonly prefixCaching: boolean;
  /** Size range of one tool output in bytes (`--output-bytes 2048-8192`). Default 2.8–8 KB (≈ 1.5k tokens each; ≈ 75k prompt tokens at turn 50), `--quick` too. */
  readonly outputBytes: readonly [number, number];
  /** Seeds the workload (`--seed`). Default 1. */
  readonly seed: number;
  /**
   * The client's link to the edge (`--link`): `none` (default) connects directly over loopback;
   * a preset of bench/link (`same-host`, `cloud`, `home`) puts the link emulator in between.
   */
  readonly link: 'none' | LinkPresetName;
  /** Where the reports go (`--out`). Default bench/results. */
  readonly outDir: string;
  /** `--quick`: the defaults above for a run of well under a minute. */
  readonly quick: boolean;
  /** Set by programs, not the command line: more environment for every stack (e.g. EDGE_GRPC_MUX). */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** Set by programs: the number of the first interleaved repetition (turn order rotates with it). Default 1. */
  readonly firstRep?: number;
}

/** Thrown for a bad command line; the message names the option. */
export class OptionsError extends Error {
  override readonly name = 'OptionsError';
}

export const USAGE = `usage: npm run bench:agent-loop -- [--quick] [--turns N] [--tps 65,1000,4000]
       [--modes ${MODES.join(',')}] [--reps N] [--solo N] [--warmup N] [--ttft-ms MS]
       [--prefill-tps N] [--prefix-caching on|off] [--output-bytes MIN-MAX] [--seed N]
       [--link none|${LINK_PRESET_NAMES.join('|')}] [--out DIR]`;

/**
 * Parses the command line (without `node` and the script). Every option has a default; `--quick`
 * changes the defaults, and explicit options still win over it.
 */
export function parseOptions(argv: readonly string[], repoRoot: string): BenchOptions {
  const raw = new Map<string, string>();
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') {
      quick = true;
      continue;
    }
    if (arg === '--help' || arg === '-h') throw new OptionsError(USAGE);
    if (!arg.startsWith('--')) throw new OptionsError(`unexpected argument '${arg}'\n${USAGE}`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new OptionsError(`--${name} needs a value\n${USAGE}`);
    raw.set(name, value);
  }
  const known = new Set([
    'turns',
    'tps',
    'modes',
    'reps',
    'solo',
    'warmup',
    'ttft-ms',
    'prefill-tps',
    'prefix-caching',
    'output-bytes',
    'seed',
    'link',
    'out',
  ]);
  for (const name of raw.keys()) if (!known.has(name)) throw new OptionsError(`unknown option --${name}\n${USAGE}`);

  const out = raw.get('out') ?? join('bench', 'results');
  return {
    turns: int(raw, 'turns', quick ? 12 : 50, 2, 1000),
    tps: list(raw, 'tps', quick ? [1000] : [65, 1000, 4000]).map((v) => positive('tps', v)),
    modes: modes(raw.get('modes')),
    reps: int(raw, 'reps', 2, 1, 100),
    soloReps: int(raw, 'solo', 1, 0, 100),
    warmupTurns: int(raw, 'warmup', 3, 0, 100),
    ttftMs: nonNegative('ttft-ms', Number(raw.get('ttft-ms') ?? 50)),
    prefillTps: positive('prefill-tps', Number(raw.get('prefill-tps') ?? 20_000)),
    prefixCaching: onOff('prefix-caching', raw.get('prefix-caching') ?? 'on'),
    outputBytes: range(raw.get('output-bytes'), [2800, 8192]),
    seed: int(raw, 'seed', 1, 0, 2 ** 31),
    link: linkName(raw.get('link') ?? 'none'),
    outDir: isAbsolute(out) ? out : resolve(repoRoot, out),
    quick,
  };
}

function int(raw: Map<string, string>, name: string, fallback: number, min: number, max: number): number {
  const text = raw.get(name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new OptionsError(`--${name} must be an integer from ${min} to ${max}, got '${text}'`);
  return n;
}

function list(raw: Map<string, string>, name: string, fallback: number[]): number[] {
  const text = raw.get(name);
  if (text === undefined) return fallback;
  const values = text.split(',').map((s) => Number(s.trim().replace(/_/g, '')));
  if (values.length === 0 || values.some((v) => !Number.isFinite(v)))
    throw new OptionsError(`--${name} must be a comma-separated list of numbers, got '${text}'`);
  return [...new Set(values)];
}

function positive(name: string, v: number): number {
  if (!Number.isFinite(v) || v <= 0) throw new OptionsError(`--${name} must be a positive number, got '${v}'`);
  return v;
}

function nonNegative(name: string, v: number): number {
  if (!Number.isFinite(v) || v < 0) throw new OptionsError(`--${name} must be a number >= 0, got '${v}'`);
  return v;
}

function modes(text: string | undefined): Mode[] {
  if (text === undefined) return [...MODES];
  const wanted = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const m of wanted)
    if (!(MODES as readonly string[]).includes(m))
      throw new OptionsError(`--modes: unknown mode '${m}' (known: ${MODES.join(', ')})`);
  if (wanted.length === 0) throw new OptionsError('--modes must name at least one mode');
  // Report order is MODES order, whatever order the command line used.
  return MODES.filter((m) => wanted.includes(m));
}

function range(text: string | undefined, fallback: [number, number]): [number, number] {
  if (text === undefined) return fallback;
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  const [min, max] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  if (!m || min < 1 || max < min)
    throw new OptionsError(`--output-bytes must be MIN-MAX bytes with 1 <= MIN <= MAX, got '${text}'`);
  return [min, max];
}

function linkName(value: string): 'none' | LinkPresetName {
  if (value === 'none' || (LINK_PRESET_NAMES as readonly string[]).includes(value))
    return value as 'none' | LinkPresetName;
  throw new OptionsError(`--link must be none or one of ${LINK_PRESET_NAMES.join(', ')}, got '${value}'`);
}

function onOff(name: string, value: string): boolean {
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new OptionsError(`--${name} must be on or off, got '${value}'`);
}
