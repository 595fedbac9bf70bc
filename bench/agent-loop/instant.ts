/**
 * The instant-engine test: the agent-loop rollout against a simulated engine that costs nothing
 * (SIM_TTFT_MS=0, prefill and decode near-instant), so what the client waits for is only the API:
 * the edge, the hops and the worker's own bookkeeping. 50 turns growing to about 52k tokens; the
 * transport floor is measured in the same run (bench/micro/transport-floor.bench.ts) and reported
 * beside it, with the hop-by-hop breakdown.
 *
 *   npx tsx bench/agent-loop/instant.ts [--reps N] [--out DIR] [--modes http-stateless,ws,grpc] [--plain-calls on|off]
 *   (default 3 repetitions, bench/results, all three modes, with the gRPC-call-each run beside)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
const INSTANT_FLAGS = ['reps', 'out', 'modes', 'plain-calls'];

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
 * Whether to run the WebSocket rollout with a gRPC call each beside the default (`--plain-calls`,
 * on unless `off`): a hop trace wants only the default's turns.
 */
export function plainCallsWanted(argv: readonly string[]): boolean {
  const at = argv.indexOf('--plain-calls');
  if (at < 0) return true;
  const value = argv[at + 1];
  if (value !== 'on' && value !== 'off') throw new Error(`--plain-calls takes on or off, not ${value}`);
  return value === 'on';
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = parseOptions(instantArgs(argv), REPO_ROOT);
  const withPlainCalls = plainCallsWanted(argv);
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
  // Each repetition runs twice, back to back on fresh stacks: the edge's default (Classify and
  // Generate on multiplexed streams) with every mode, and WebSocket alone with a gRPC call each
  // (EDGE_GRPC_MUX=false). Which goes first alternates, so machine drift hits both sides alike.
  const records: TurnRecord[] = [];
  const plainCalls: TurnRecord[] = [];
  for (let rep = 1; rep <= options.reps; rep++) {
    const muxed = async () =>
      records.push(...(await runTps({ ...options, reps: 1, firstRep: rep }, tps, corpus, progress)));
    const plain = async () =>
      plainCalls.push(
        ...(await runTps(
          { ...options, reps: 1, firstRep: rep, modes: ['ws'], extraEnv: { EDGE_GRPC_MUX: 'false' } },
          tps,
          corpus,
          progress,
        )),
      );
    const runs = withPlainCalls ? (rep % 2 === 1 ? [muxed, plain] : [plain, muxed]) : [muxed];
    for (const run of runs) await run();
  }
  const summaries = options.modes.map((mode) => summarizeMode(mode, tps, records));
  const report = buildReport(options, { summaries, ratios: [], targets: [], notes: [], records });
  const md = renderInstantMarkdown(report, floor, withPlainCalls ? plainCalls : undefined);
  writeFileSync(join(options.outDir, 'instant-engine.json'), renderJson(report));
  writeFileSync(join(options.outDir, 'instant-engine.md'), md);
  if (!withPlainCalls) {
    process.stdout.write(`${md}\nwrote ${join(options.outDir, 'instant-engine.{md,json}')}\n`);
    return;
  }
  const plainOptions = { ...options, modes: ['ws' as const], extraEnv: { EDGE_GRPC_MUX: 'false' } };
  writeFileSync(
    join(options.outDir, 'instant-engine-plain-calls.json'),
    renderJson(
      buildReport(plainOptions, {
        summaries: [summarizeMode('ws', tps, plainCalls)],
        ratios: [],
        targets: [],
        notes: [],
        records: plainCalls,
      }),
    ),
  );
  process.stdout.write(
    `${md}\nwrote ${join(options.outDir, 'instant-engine.{md,json}')} and instant-engine-plain-calls.json\n`,
  );
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `instant-engine benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
