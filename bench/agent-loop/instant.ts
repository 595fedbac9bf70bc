/**
 * The instant-engine test: the agent-loop rollout against a simulated engine that costs nothing
 * (SIM_TTFT_MS=0, prefill and decode near-instant), so what the client waits for is only the API:
 * the edge, the hops and the worker's own bookkeeping. 50 turns growing to about 52k tokens; the
 * transport floor is measured in the same run (bench/micro/transport-floor.bench.ts) and reported
 * beside it, with the hop-by-hop breakdown.
 *
 *   npx tsx bench/agent-loop/instant.ts [--reps N] [--out DIR] [--modes http-stateless,ws,grpc] [--plain-calls on|off] [--alone on|off]
 *   (default 3 repetitions, bench/results, all three modes, with the gRPC-call-each run and the
 *   WebSocket rollout alone beside)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseOptions } from './options';
import { buildReport, renderJson } from './report-json';
import { renderInstantMarkdown, type TransportFloor } from './instant-report';
import { loadCorpus } from './source-corpus';
import { summarizeMode } from './summary';
import type { TurnRecord } from './rollout-runner';
import { runTps } from './tps-run';

const REPO_ROOT = resolve(__dirname, '..', '..');
const progress = (line: string) => process.stderr.write(`${line}\n`);

/** The flags the instant-engine test takes; any other is refused, not ignored. */
const INSTANT_FLAGS = ['reps', 'out', 'modes', 'plain-calls', 'alone'];

/** The benchmark options of the instant-engine test (explicit `--reps`/`--out`/`--modes` pass through). */
export function instantArgs(argv: readonly string[]): string[] {
  for (const arg of argv)
    if (arg.startsWith('--') && !INSTANT_FLAGS.includes(arg.slice(2)))
      throw new Error(`instant.ts takes ${INSTANT_FLAGS.map((f) => `--${f}`).join(', ')}; not ${arg}`);
  const pass = (name: string, fallback: string) => {
    const at = argv.indexOf(`--${name}`);
    return [`--${name}`, at >= 0 ? argv[at + 1] : fallback];
  };
  return [
    ...['--turns', '50', '--tps', '1000000', '--ttft-ms', '0', '--prefill-tps', '1000000000'],
    // About 52k prompt tokens at turn 50 (the default outputs reach ~75k).
    ...['--output-bytes', '1900-5700', '--solo', '0', '--warmup', '5'],
    ...pass('modes', 'http-stateless,ws,grpc'),
    ...pass('reps', '3'),
    ...pass('out', join('bench', 'results')),
  ];
}

/**
 * Whether a run beside the default is wanted (`--plain-calls`: the WebSocket rollout with a gRPC call
 * each; `--alone`: the WebSocket rollout on a stack of its own, nothing else running): on unless
 * `off`. A hop trace wants only the default's turns.
 */
export function runWanted(argv: readonly string[], flag: 'plain-calls' | 'alone'): boolean {
  const at = argv.indexOf(`--${flag}`);
  if (at < 0) return true;
  const value = argv[at + 1];
  if (value !== 'on' && value !== 'off') throw new Error(`--${flag} takes on or off, not ${value}`);
  return value === 'on';
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = parseOptions(instantArgs(argv), REPO_ROOT);
  const withPlainCalls = runWanted(argv, 'plain-calls');
  // With the WebSocket mode alone in the default run, that run is the alone one already.
  const withAlone = runWanted(argv, 'alone') && options.modes.some((mode) => mode !== 'ws');
  mkdirSync(options.outDir, { recursive: true });
  progress('instant engine: measuring the transport floor first (same machine, same run)');
  const floorDir = join(options.outDir, 'instant-engine-floor');
  execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO_ROOT, 'bench', 'micro', 'transport-floor.bench.ts'),
      '--iterations',
      '300',
      '--out',
      floorDir,
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const floor = JSON.parse(readFileSync(join(floorDir, 'transport-floor.json'), 'utf8')) as TransportFloor;
  const tps = options.tps[0];
  const corpus = loadCorpus(REPO_ROOT);
  // Each repetition runs the edge's default (Classify and Generate on multiplexed streams) with
  // every mode, interleaved on one stack, and beside it, each on a fresh stack, the WebSocket rollout
  // with a gRPC call each (EDGE_GRPC_MUX=false) and alone (one agent, nothing else running). Which
  // goes first rotates with the repetition, so machine drift hits each alike.
  const records: TurnRecord[] = [];
  const candidates: SideRun[] = [
    { kind: 'plain-calls', wanted: withPlainCalls, env: { EDGE_GRPC_MUX: 'false' }, records: [] },
    { kind: 'alone', wanted: withAlone, env: {}, records: [] },
  ];
  const sides = candidates.filter((side) => side.wanted);
  for (let rep = 1; rep <= options.reps; rep++) {
    const runs = [
      async () => records.push(...(await runTps({ ...options, reps: 1, firstRep: rep }, tps, corpus, progress))),
      ...sides.map((side) => async () => {
        const sideOptions = { ...options, reps: 1, firstRep: rep, modes: ['ws' as const], extraEnv: side.env };
        side.records.push(...(await runTps(sideOptions, tps, corpus, progress)));
      }),
    ];
    const shift = (rep - 1) % runs.length;
    for (const run of [...runs.slice(shift), ...runs.slice(0, shift)]) await run();
  }
  const summaries = options.modes.map((mode) => summarizeMode(mode, tps, records));
  const report = buildReport(options, { summaries, ratios: [], targets: [], notes: [], records });
  const recordsOf = (kind: SideRun['kind']) => sides.find((side) => side.kind === kind)?.records;
  const md = renderInstantMarkdown(report, floor, recordsOf('plain-calls'), recordsOf('alone'));
  writeFileSync(join(options.outDir, 'instant-engine.json'), renderJson(report));
  writeFileSync(join(options.outDir, 'instant-engine.md'), md);
  // A side run left out leaves no report of an earlier run behind, which the README figures would quote.
  for (const side of candidates)
    if (!side.wanted) rmSync(join(options.outDir, `instant-engine-${side.kind}.json`), { force: true });
  for (const side of sides) {
    const sideOptions = { ...options, modes: ['ws' as const], extraEnv: side.env };
    const sideReport = buildReport(sideOptions, {
      summaries: [summarizeMode('ws', tps, side.records)],
      ratios: [],
      targets: [],
      notes: [],
      records: side.records,
    });
    writeFileSync(join(options.outDir, `instant-engine-${side.kind}.json`), renderJson(sideReport));
  }
  const written = ['instant-engine.{md,json}', ...sides.map((side) => `instant-engine-${side.kind}.json`)];
  process.stdout.write(`${md}\nwrote ${written.map((f) => join(options.outDir, f)).join(', ')}\n`);
}

/** A run beside the default: the WebSocket rollout on a fresh stack of its own. */
interface SideRun {
  kind: 'plain-calls' | 'alone';
  wanted: boolean;
  env: Record<string, string>;
  records: TurnRecord[];
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `instant-engine benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
