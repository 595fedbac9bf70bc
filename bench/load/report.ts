import { cpus } from 'node:os';
import { fmt } from '../agent-loop/summary';
import type { LoopsResult } from './agent-loops';
import { IDLE_TARGET_BYTES, type IdleResult } from './idle';
import type { LoadOptions } from './options';
import { MAX_ADDED_P99_GAP_MS, type RelayResult } from './relay';

/** Everything one load run produced (load.json). */
export interface LoadReport {
  generatedAt: string;
  environment: { node: string; cpus: number; cpuModel: string };
  options: Omit<LoadOptions, 'outDir'>;
  loops: LoopsResult[];
  relay: RelayResult | undefined;
  idle: IdleResult | undefined;
}

/** Assembles the report object. */
export function buildLoadReport(options: LoadOptions, parts: Pick<LoadReport, 'loops' | 'relay' | 'idle'>): LoadReport {
  const { outDir: _outDir, ...rest } = options;
  const cpu = cpus();
  return { generatedAt: new Date().toISOString(), environment: { node: process.version, cpus: cpu.length, cpuModel: cpu[0]?.model.trim() ?? 'unknown' }, options: rest, ...parts };
}

const mb = (bytes: number) => fmt(bytes / (1024 * 1024));
const kb = (bytes: number) => fmt(bytes / 1024);

/** The Markdown report. */
export function renderLoadMarkdown(report: LoadReport): string {
  const { options } = report;
  const lines = [
    '# Capacity: many agents on one edge (simulated engine)',
    '',
    `Run ${report.generatedAt} on ${report.environment.cpus} × ${report.environment.cpuModel}, Node ${report.environment.node}; the whole stack, ` +
      'the simulated engine and the load generator share the machine, so these are lower bounds for the edge alone.',
    '',
    '## Concurrent WebSocket agent loops',
    '',
    `Each loop plays agent-loop rollouts over WebSocket mode (~2k-token instructions, ten tools, 2.8–8 KB tool outputs of real source, each conversation ` +
      `with its own nonce) of up to ${options.turns} turns, then starts a new conversation on a new socket; ${fmt(options.durationS)} s per level; engine ` +
      `SIM_TOKENS_PER_SECOND=${options.tps}, SIM_TTFT_MS=50. First output = client send → first \`response.output_item.added\` (engine time included). ` +
      'Edge CPU and RSS from /proc; event-loop delay from the edge\'s `nodejs_eventloop_lag_*` over the level. ' +
      `Live heap = V8 heap used right after a forced full GC (the edge runs with \`--expose-gc\` and its admin port answers \`POST /debug/gc\`), ` +
      `taken at the level's start and ${fmt((report.loops[0]?.edge.settleMs ?? 0) / 1000)} s after its sockets closed: after ≈ before means the level left nothing behind; ` +
      'growth that levels off from level to level is bounded caches filling, growth that keeps on is a leak. External = memory outside the V8 heap (Buffers) after the same collection.',
    '',
    '| loops | turns/s | tokens/s streamed | first output p50 (ms) | p99 (ms) | edge CPU per turn (ms) | event-loop delay p50 / p99 (ms) | edge RSS before → peak (MB) | live heap before → after (MB) | external before → after (MB) | errors |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of report.loops) {
    lines.push(
      `| ${r.loops} | ${fmt(r.turnsPerS)} | ${fmt(r.tokensPerS)} | ${fmt(r.firstOutputP50Ms)} | ${fmt(r.firstOutputP99Ms)} | ${fmt(r.edgeCpuMsPerTurn)} | ` +
        `${fmt(r.edge.eventLoopP50Ms)} / ${fmt(r.edge.eventLoopP99Ms)} | ${mb(r.edge.rssBeforeBytes)} → ${mb(r.edge.rssPeakBytes)} | ${mb(r.edge.heapBeforeBytes)} → ${mb(r.edge.heapAfterBytes)} | ` +
        `${mb(r.edge.externalBeforeBytes)} → ${mb(r.edge.externalAfterBytes)} | ${r.errors} |`,
    );
  }
  const first = report.loops[0];
  const last = report.loops[report.loops.length - 1];
  if (first && last) {
    lines.push(
      '',
      `Live heap from the first level's start to the last level's end: **${mb(first.edge.heapBeforeBytes)} → ${mb(last.edge.heapAfterBytes)} MB** ` +
        `(external ${mb(first.edge.externalBeforeBytes)} → ${mb(last.edge.externalAfterBytes)} MB).`,
    );
  }
  const failures = report.loops.filter((r) => r.errors > 0);
  if (failures.length > 0) {
    lines.push('', 'Failed turns by message:', '');
    for (const r of failures) lines.push(`- ${r.loops} loops: ${Object.entries(r.errorKinds).map(([k, n]) => `${n} × \`${k}\``).join('; ')}`);
  }
  if (report.relay) {
    const r = report.relay;
    lines.push(
      '',
      '## Relay ceiling',
      '',
      `K concurrent WebSocket streams, each a long answer at ${r.streamTps} tokens/s from the engine; the gap between consecutive text deltas of a response is timed at the client. ` +
        `A step is within bound while its p99 gap exceeds one stream's by at most ${MAX_ADDED_P99_GAP_MS} ms (the engine's own pacing and the worker's timers are in both).`,
      '',
      '| streams | tokens/s relayed | delta gap p50 (ms) | p99 (ms) | added p99 (ms) | edge CPU (%) | errors |',
      '|---:|---:|---:|---:|---:|---:|---:|',
      ...r.steps.map((s) => `| ${s.streams} | ${fmt(s.tokensPerS)} | ${fmt(s.gapP50Ms)} | ${fmt(s.gapP99Ms)} | ${fmt(s.addedP99Ms)} | ${fmt(s.edgeCpuPercent)} | ${s.errors} |`),
      '',
      `**Ceiling: ${fmt(r.ceilingTokensPerS)} tokens/s** (${r.ceilingStreams} streams) relayed with ≤ ${MAX_ADDED_P99_GAP_MS} ms added p99 gap.`,
    );
  }
  if (report.idle) {
    const i = report.idle;
    lines.push(
      '',
      '## Idle connections',
      '',
      `${i.connections} authenticated WebSocket connections held open (${i.failed} failed to open): edge RSS ${mb(i.rssBeforeBytes)} → ${mb(i.rssAfterBytes)} MB, ` +
        `live heap ${mb(i.heapBeforeBytes)} → ${mb(i.heapAfterBytes)} MB (after a forced GC): **${kb(i.rssPerConnectionBytes)} KB RSS per connection** (live heap ${kb(i.heapPerConnectionBytes)} KB); ` +
        `target < ${kb(IDLE_TARGET_BYTES)} KB: ${i.rssPerConnectionBytes < IDLE_TARGET_BYTES ? 'met' : '**not met**'}.`,
    );
  }
  lines.push('', '![load](load.svg)', '');
  return lines.join('\n');
}
