/**
 * Writes the README's benchmark figures from the committed reports, so the README always quotes
 * the run that is committed: the block between `<!-- bench-figures:start -->` and
 * `<!-- bench-figures:end -->` in README.md is replaced. Reports that are missing are skipped.
 *
 *   npx tsx bench/readme-figures.ts        (bench:full runs it last)
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BenchReport } from './agent-loop/report-json';
import { ESTIMATOR, fmt, windowMedian } from './agent-loop/summary';
import type { LoadReport } from './load/report';

const ROOT = resolve(__dirname, '..');
const START = '<!-- bench-figures:start -->';
const END = '<!-- bench-figures:end -->';

const read = <T>(path: string): T | undefined =>
  existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as T) : undefined;
const pct = (a: number, b: number) => `${fmt((1 - a / b) * 100)}%`;

/** The agent-loop table at 1,000 tokens/s: overhead windows, rollout times (interleaved and alone), caching on and off. */
export function agentLoopFigures(on: BenchReport, off: BenchReport | undefined): string[] {
  const tps = on.summaries.some((s) => s.tps === 1000) ? 1000 : on.summaries[0].tps;
  const modes = on.options.modes;
  const get = (r: BenchReport, mode: string, phase: string) =>
    r.summaries.find((s) => s.tps === tps && s.mode === mode && s.phase === phase);
  const row = (label: string, value: (mode: string) => string) => `| ${label} | ${modes.map(value).join(' | ')} |`;
  const inter = (m: string) => get(on, m, 'interleaved');
  const lines = [
    `Agent loop, ${on.options.turns} turns at ${tps} tok/s, ${on.options.reps} interleaved repetitions + ${on.options.soloReps} alone, run ${on.generatedAt.slice(0, 10)} ` +
      `([bench/results/agent-loop.md](bench/results/agent-loop.md)). Estimator: ${ESTIMATOR}.`,
    '',
    `| at ${tps} tok/s | ${modes.join(' | ')} |`,
    `|---|${modes.map(() => '---:').join('|')}|`,
    row('overhead, turns 1–5 (ms)', (m) => fmt(inter(m)?.overheadFirst5 ?? NaN)),
    row(`overhead, turns ${on.options.turns - 4}–${on.options.turns} (ms)`, (m) => fmt(inter(m)?.overheadLast5 ?? NaN)),
    row('growth, last 5 / first 5', (m) => `${fmt(inter(m)?.growthLast5 ?? NaN)}×`),
    row("worker's own time per turn, last 5 (ms)", (m) => fmt(inter(m)?.worker.late.total ?? NaN)),
    row('request bytes over the rollout', (m) => `${fmt((inter(m)?.requestBytes ?? NaN) / 1e6)} MB`),
    row('rollout, prefix caching on, interleaved (s)', (m) => fmt((inter(m)?.rolloutMs ?? NaN) / 1000)),
    row('rollout, prefix caching on, one agent alone (s)', (m) => fmt((get(on, m, 'solo')?.rolloutMs ?? NaN) / 1000)),
  ];
  if (off) {
    const o = (m: string) => off.summaries.find((s) => s.mode === m && s.phase === 'interleaved');
    lines.push(row('rollout, prefix caching off¹, interleaved (s)', (m) => fmt((o(m)?.rolloutMs ?? NaN) / 1000)));
    lines.push(
      '',
      '¹ `--prefix-caching off`: each request reuses only the KV its own conversation left on the worker (http-previous, ws and grpc chain by id), ' +
        'like an engine without content prefix caching; http-stateless prefills the whole history every turn ' +
        '([bench/results/prefix-caching-off/agent-loop.md](bench/results/prefix-caching-off/agent-loop.md)).',
    );
  }
  return lines;
}

/** One line per link preset: the WebSocket rollout gain over both HTTP modes. */
export function linkFigures(reports: [string, BenchReport][]): string[] {
  if (reports.length === 0) return [];
  const lines = [
    '',
    '| link ([bench/results/link/link.md](bench/results/link/link.md)) | ws faster than http-stateless | ws faster than http-previous |',
    '|---|---:|---:|',
  ];
  for (const [preset, r] of reports) {
    const t = (m: string) => r.summaries.find((s) => s.mode === m && s.phase === 'interleaved')?.rolloutMs ?? NaN;
    lines.push(`| ${preset} | ${pct(t('ws'), t('http-stateless'))} | ${pct(t('ws'), t('http-previous'))} |`);
  }
  return lines;
}

/** What bench/micro/transport-floor.bench.ts writes (the fields quoted). */
export interface FloorReport {
  rows: { hop: string; p50: number }[];
  wsSum: number;
  grpcSum: number;
  muxSum?: number;
}

/** The transport floor, hop by hop, from its report. */
export function floorFigures(floor: FloorReport | undefined): string[] {
  if (!floor) return [];
  const p50 = (prefix: string) =>
    floor.rows
      .filter((r) => r.hop.startsWith(prefix))
      .map((r) => fmt(r.p50))
      .join(' there + ');
  const parts = [
    `- **Transport floor** ([bench/results/transport-floor.md](bench/results/transport-floor.md), same idle run, p50): the client's WebSocket ${fmt(floor.wsSum)} ms both ways; ` +
      `a Generate call as a grpc-js call of its own ${p50('gRPC (grpc-js)')} ms back (${fmt(floor.grpcSum)} ms)`,
  ];
  if (floor.muxSum !== undefined)
    parts.push(`, on the edge's open multiplexed stream ${p50('gRPC stream (mux)')} ms back (${fmt(floor.muxSum)} ms)`);
  parts.push(`: ${fmt(floor.wsSum + (floor.muxSum ?? floor.grpcSum))} ms before the edge does any work.`);
  return [parts.join('')];
}

/** The instant-engine figure and the capacity figures. */
export function floorAndLoadFigures(
  instant: BenchReport | undefined,
  floorMs: number | undefined,
  load: LoadReport | undefined,
  plainCalls?: BenchReport,
  alone?: BenchReport,
): string[] {
  const lines: string[] = [];
  if (instant) {
    const ws = instant.records.filter((r) => r.mode === 'ws');
    const n = instant.options.turns;
    const first = windowMedian(ws, 1, 5, (r) => r.firstOutputMs);
    const last = windowMedian(ws, n - 4, n, (r) => r.firstOutputMs);
    const plainLast = plainCalls ? windowMedian(plainCalls.records, n - 4, n, (r) => r.firstOutputMs) : undefined;
    const aloneLast = alone ? windowMedian(alone.records, n - 4, n, (r) => r.firstOutputMs) : undefined;
    lines.push(
      '',
      `- **Instant engine** ([bench/results/instant-engine.md](bench/results/instant-engine.md)): WebSocket time to the first output item ${fmt(first)} ms at turns 1–5, ` +
        `${fmt(last)} ms at turns ${n - 4}–${n} (${fmt(last / first)}×), against a transport floor of ${fmt(floorMs ?? NaN)} ms measured in the same run` +
        (plainLast === undefined
          ? ''
          : `; with a gRPC call per Classify and Generate instead of the multiplexed streams, ${fmt(plainLast)} ms at turns ${n - 4}–${n}`) +
        (aloneLast === undefined
          ? '.'
          : `; one agent alone (the WebSocket rollout with nothing else running), ${fmt(aloneLast)} ms at turns ${n - 4}–${n}.`),
    );
  }
  if (load) {
    const loops = load.loops
      .map(
        (l) =>
          `${l.loops} loops: ${fmt(l.turnsPerS)} turns/s, first output p50 ${fmt(l.firstOutputP50Ms)} / p99 ${fmt(l.firstOutputP99Ms)} ms, ${l.errors} failed turns`,
      )
      .join('; ');
    lines.push(`- **Capacity** ([bench/results/load.md](bench/results/load.md)): ${loops}.`);
    const [first, last] = [load.loops[0], load.loops[load.loops.length - 1]];
    if (first && last) {
      lines.push(
        `  Edge live heap after a forced GC, first level's start → last level's end: ${fmt(first.edge.heapBeforeBytes / 2 ** 20)} → ${fmt(last.edge.heapAfterBytes / 2 ** 20)} MB.`,
      );
    }
    // Reports from before the stall criterion bounded the per-frame p99 gap instead.
    const bound = load.relay?.steps.some((s) => s.stallP99Ms !== undefined) ? 'stall' : 'gap';
    if (load.relay)
      lines.push(`  Relay ceiling ${fmt(load.relay.ceilingTokensPerS)} tokens/s (≤ 2 ms added p99 ${bound}).`);
    if (load.idle)
      lines.push(
        `  ${fmt(load.idle.rssPerConnectionBytes / 1024)} KB of edge memory per idle WebSocket connection (${load.idle.connections} open).`,
      );
  }
  return lines;
}

/** What bench/load/first-text.ts writes (the figures quoted). */
interface FirstTextReport {
  turns: number;
  on: { firstText: { p50: number } };
  off: { firstText: { p50: number } };
  ratioP50: number;
  target: number;
}

/** First visible text with output moderation on vs off, side by side. */
export function firstTextFigures(r: FirstTextReport | undefined): string[] {
  if (!r) return [];
  return [
    `- **First visible text** ([bench/results/first-text.md](bench/results/first-text.md), side by side): output moderation on ${fmt(r.on.firstText.p50)} ms, ` +
      `off ${fmt(r.off.firstText.p50)} ms p50 (${fmt(r.ratioP50)}×; target ≤ ${fmt(r.target)}×).`,
  ];
}

function main(): void {
  const results = join(ROOT, 'bench', 'results');
  const on = read<BenchReport>(join(results, 'agent-loop.json'));
  if (!on) throw new Error('bench/results/agent-loop.json is missing: run the benchmark first');
  const off = read<BenchReport>(join(results, 'prefix-caching-off', 'agent-loop.json'));
  const links = ['same-host', 'cloud', 'home'].flatMap((p) => {
    const r = read<BenchReport>(join(results, 'link', p, 'agent-loop.json'));
    return r ? [[p, r] as [string, BenchReport]] : [];
  });
  const floor = read<{ wsSum: number; grpcSum: number; muxSum?: number }>(
    join(results, 'instant-engine-floor', 'transport-floor.json'),
  );
  const block = [
    START,
    ...agentLoopFigures(on, off),
    ...linkFigures(links),
    ...floorAndLoadFigures(
      read<BenchReport>(join(results, 'instant-engine.json')),
      floor && floor.wsSum + (floor.muxSum ?? floor.grpcSum),
      read<LoadReport>(join(results, 'load.json')),
      read<BenchReport>(join(results, 'instant-engine-plain-calls.json')),
      read<BenchReport>(join(results, 'instant-engine-alone.json')),
    ),
    ...floorFigures(read<FloorReport>(join(results, 'transport-floor.json'))),
    ...firstTextFigures(read<FirstTextReport>(join(results, 'first-text.json'))),
    END,
  ].join('\n');
  const readmePath = join(ROOT, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md has no ${START} … ${END} block`);
  writeFileSync(readmePath, readme.slice(0, a) + block + readme.slice(b + END.length));
  process.stdout.write('README.md: benchmark figures updated from bench/results\n');
}

if (require.main === module) main();
