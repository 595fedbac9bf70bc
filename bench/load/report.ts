import { cpus } from 'node:os';
import { fmt } from '../agent-loop/summary';
import { LOAD_GENERATOR, type LoopsResult } from './agent-loops';
import type { FirstOutputQuantiles } from './first-output-split';
import { edgeCpuPartsLines, type EdgeCpuParts } from './edge-parts';
import { IDLE_TARGET_BYTES, type IdleResult } from './idle';
import type { LoadOptions } from './options';
import { MAX_ADDED_P99_GAP_MS, REFERENCE_DURATION_FACTOR, type RelayResult } from './relay';

/** Everything one load run produced (load.json). */
export interface LoadReport {
  generatedAt: string;
  environment: { node: string; cpus: number; cpuModel: string };
  options: Omit<LoadOptions, 'outDir'>;
  loops: LoopsResult[];
  /** The edge's CPU per turn by part, one entry per profiled level (none with `--profile-loops 0`). */
  edgeParts?: EdgeCpuParts[];
  relay: RelayResult | undefined;
  idle: IdleResult | undefined;
}

/** Assembles the report object. */
export function buildLoadReport(
  options: LoadOptions,
  parts: Pick<LoadReport, 'loops' | 'edgeParts' | 'relay' | 'idle'>,
): LoadReport {
  const { outDir: _outDir, ...rest } = options;
  const cpu = cpus();
  return {
    generatedAt: new Date().toISOString(),
    environment: { node: process.version, cpus: cpu.length, cpuModel: cpu[0]?.model.trim() ?? 'unknown' },
    options: rest,
    ...parts,
  };
}

/** The relay's chunking settings, and where its measured chunk sizes come from. */
function chunkingInEffect(options: LoadReport['options']): string {
  const moderation = options.outputModeration
    ? `on: deltas leave as Classify verdicts release them up to safety's frontier, up to EDGE_OUTPUT_MODERATION_IN_FLIGHT (the edge's default: 2) calls in flight per response, new text batched for EDGE_OUTPUT_MODERATION_FLUSH_MS=${options.moderationFlushMs ?? "the edge's default"}`
    : 'off';
  return (
    `Chunking in effect: INFERENCE_MAX_CHUNK_TOKENS=${options.chunkTokens ?? "the worker's default"}; the edge writes one delta per output item per TokenChunk ` +
    `(and per output-moderation release), and the frames one piece of work emits in one write; output moderation ${moderation}. ` +
    "Tokens per TokenChunk from the worker's `inference_completion_tokens_total` / `inference_token_chunks_total` over the step; tokens per delta frame at the client."
  );
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
      "Edge CPU and RSS from /proc; event-loop delay from the edge's `nodejs_eventloop_lag_*` over the level. " +
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
    for (const r of failures)
      lines.push(
        `- ${r.loops} loops: ${Object.entries(r.errorKinds)
          .map(([k, n]) => `${n} × \`${k}\``)
          .join('; ')}`,
      );
  }
  lines.push(
    ...firstOutputSplitLines(report.loops),
    ...firstOutputByKindLines(report.loops),
    ...cpuByProcessLines(report.loops, report.environment.cpus),
    ...loopTargetLines(report.loops),
    '',
    ...edgeCpuPartsLines(
      report.edgeParts ?? [],
      CPU_PER_TURN_TARGET_MS,
      (loops) => report.loops.find((r) => r.loops === loops)?.edgeCpuMsPerTurn,
    ),
  );
  if (report.relay) {
    const r = report.relay;
    lines.push(
      '',
      '## Relay ceiling',
      '',
      `K concurrent WebSocket streams, each a long answer at ${r.streamTps} tokens/s from the engine; the gap between consecutive text delta frames of a response is timed at the client. ` +
        'Stall = the gap a random instant of the stream falls in (gaps weighted by their length), which unlike the per-frame figure does not change when the same text comes in fewer, larger frames. ' +
        `A step is within bound while its p99 stall exceeds the first step's by at most ${MAX_ADDED_P99_GAP_MS} ms (the engine's own pacing and the worker's timers are in both), ` +
        'each taken with the time the whole machine was paused left out of the gaps: an idle, reniced probe process that should run every millisecond sees such pauses (every process, the idle services too, stalls at once; the host takes the CPU: steal time), ' +
        'and one 50 ms pause in a step moved its p99 by more than the bound. The stack is warmed up (one stream, 3 s) before the first step, ' +
        `which runs ${REFERENCE_DURATION_FACTOR}× as long as the others: with one stream its p99 comes from the fewest gaps, and it is every step's reference. ` +
        (r.pausesTakenOut === false
          ? 'In this run the probe could not be reniced (no CAP_SYS_NICE), so the stack itself could delay it: nothing was taken out. '
          : 'In this run the probe ran reniced. ') +
        (r.clientReniced
          ? 'The client timing the frames ran reniced too (nice −5 while it timed): on 2 cores a saturated stack otherwise kept it from a core for tens of ms, and a frame read late is timed as stall, which a client on its own machine does not see.'
          : "The client timing the frames ran at the stack's priority: a saturated stack can keep it from a core, and a frame read late is timed as stall."),
      '',
      chunkingInEffect(options),
      '',
      '| streams | tokens/s relayed | gap per frame p50 / p99 (ms) | stall p50 / p99 (ms) | machine paused (ms) / steal (%) | p99 stall less pauses (ms) | added p99 stall (ms) | edge CPU (%) | edge CPU per 1k tokens (ms) | safety CPU per 1k tokens (ms) | moderated batches/s | tokens per TokenChunk | tokens per delta frame | errors |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...r.steps.map(
        (s) =>
          `| ${s.streams} | ${fmt(s.tokensPerS)} | ${fmt(s.gapP50Ms)} / ${fmt(s.gapP99Ms)} | ${fmt(s.stallP50Ms)} / ${fmt(s.stallP99Ms)} | ` +
          `${fmt(s.machinePausedMs ?? NaN)} / ${fmt(s.stealPercent ?? NaN)} | ${fmt(s.stallP99LessPausesMs ?? NaN)} | ${fmt(s.addedP99Ms)} | ${fmt(s.edgeCpuPercent)} | ` +
          `${fmt(s.edgeCpuMsPer1kTokens)} | ${fmt(s.safetyCpuMsPer1kTokens)} | ${fmt(s.moderationBatchesPerS)} | ${fmt(s.tokensPerChunk)} | ${fmt(s.tokensPerDelta)} | ${s.errors} |`,
      ),
      '',
      `**Ceiling: ${fmt(r.ceilingTokensPerS)} tokens/s** (${r.ceilingStreams} streams) relayed with ≤ ${MAX_ADDED_P99_GAP_MS} ms added p99 stall.`,
      ...relayStallLines(r),
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

/** Edge CPU per turn at 100 loops, ms, at most (issue 21). */
export const CPU_PER_TURN_TARGET_MS = 1;
/** First output p99 at 500 loops, ms, at most, with no failed turn (issue 21). */
export const P99_AT_500_TARGET_MS = 1000;

/** First output hop by hop at each level, at the median and in the p99 tail. */
function firstOutputSplitLines(loops: readonly LoopsResult[]): string[] {
  const split = loops.filter((r) => r.firstOutputSplit);
  if (split.length === 0) return [];
  const lines = [
    '',
    '### First output, hop by hop',
    '',
    "Each turn's client figure split with the edge's `responsesapi.websocket_timing` event of the same turn (the loops ask for it: one more frame per turn). " +
      'Means over the turns around the median (the middle tenth) and over the turns at or past the p99; turns with a retried Generate call are left out. ' +
      "*Edge before Generate*: the edge had the request → its Generate call left (parse, validate, route, render). *Worker*: the worker's own time to its first chunk " +
      "(SIM_TTFT_MS=50 of it is the simulated engine). *Generate hop*: the call out and the chunk back, both event loops' waits included. " +
      "*Outside*: the rest of the client's figure: the request to the edge and the first item back (both sockets and both event loops' waits: the load generator shares the cores), " +
      'and an input verdict that came after the first token.',
    '',
    '| loops | band | turns | first output (ms) | edge before Generate | worker | Generate hop | outside |',
    '|---:|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of split) {
    for (const [band, p] of [
      ['median', r.firstOutputSplit!.median],
      ['p99 tail', r.firstOutputSplit!.tail],
    ] as const)
      lines.push(
        `| ${r.loops} | ${band} | ${p.turns} | ${fmt(p.firstOutputMs)} | ${fmt(p.edgeBeforeGenerateMs)} | ${fmt(p.workerMs)} | ${fmt(p.generateHopMs)} | ${fmt(p.outsideMs)} |`,
      );
  }
  return lines;
}

/** First output of opening turns, of continuations, and after each level's start burst. */
function firstOutputByKindLines(loops: readonly LoopsResult[]): string[] {
  const measured = loops.filter((r) => r.firstOutputByKind);
  if (measured.length === 0) return [];
  const cell = (q: FirstOutputQuantiles) => `${fmt(q.p50Ms)} / ${fmt(q.p99Ms)} (${q.turns})`;
  return [
    '',
    '### First output by kind of turn',
    '',
    "p50 / p99 in ms (turns). *Opening*: a conversation's first turn, its whole ~2k-token prompt rendered, classified and sent to a worker. " +
      "*Continuation*: turns 2+, only what is new. *After the start*: every turn sent after the level's first fifth; at its start all loops open " +
      'a conversation within a second, a burst of whole prompts that independent agents would not make together. The targets take all turns.',
    '',
    '| loops | all turns | opening | continuation | after the start |',
    '|---:|---:|---:|---:|---:|',
    ...measured.map((r) => {
      const k = r.firstOutputByKind!;
      return `| ${r.loops} | ${fmt(r.firstOutputP50Ms)} / ${fmt(r.firstOutputP99Ms)} (${r.turns}) | ${cell(k.opening)} | ${cell(k.continuation)} | ${cell(k.afterStart)} |`;
    }),
  ];
}

/** The issue's targets for the loops, met or not, where the run has the level. */
function loopTargetLines(loops: readonly LoopsResult[]): string[] {
  const at = (n: number) => loops.find((r) => r.loops === n);
  const rows: string[] = [];
  const hundred = at(100);
  if (hundred) {
    const met = hundred.edgeCpuMsPerTurn <= CPU_PER_TURN_TARGET_MS;
    rows.push(
      `| edge CPU per turn at 100 loops ≤ ${CPU_PER_TURN_TARGET_MS} ms | ${fmt(hundred.edgeCpuMsPerTurn)} ms | ${met ? 'yes' : '**no**'} |`,
    );
  }
  const five = at(500);
  if (five) {
    const met = five.firstOutputP99Ms <= P99_AT_500_TARGET_MS && five.errors === 0;
    rows.push(
      `| first output p99 at 500 loops ≤ ${P99_AT_500_TARGET_MS} ms, 0 failed turns | ${fmt(five.firstOutputP99Ms)} ms, ${five.errors} failed | ${met ? 'yes' : '**no**'} |`,
    );
  }
  if (rows.length === 0) return [];
  return ['', '### Targets', '', '| target | measured | met |', '|---|---|---|', ...rows];
}

/** CPU per turn of every process of the stack and of the load generator, and the cores they keep busy. */
function cpuByProcessLines(loops: readonly LoopsResult[], cores: number): string[] {
  const measured = loops.filter((r) => r.cpuMsPerTurnByProcess);
  if (measured.length === 0) return [];
  const others = [
    ...new Set(measured.flatMap((r) => Object.keys(r.cpuMsPerTurnByProcess!).filter((n) => n !== LOAD_GENERATOR))),
  ].sort();
  const names = [...others, LOAD_GENERATOR];
  const lines = [
    '',
    '### CPU per turn, process by process',
    '',
    `CPU time of each process over the level (/proc, all its threads) per completed turn, ms; *cores busy* = their sum × turns/s, out of the machine's ${cores} ` +
      '(Redis, not in the table, comes on top). Beside the edge the same cores run the worker, safety, router, billing and the load generator: ' +
      'once they are all busy, every hop of a turn waits for a core, and the wait is the *Generate hop* and *outside* parts above.',
    '',
    `| loops | edge | ${names.join(' | ')} | sum | cores busy |`,
    `|---:|---:|${names.map(() => '---:|').join('')}---:|---:|`,
  ];
  const delay = (p99: number | undefined, max: number | undefined) =>
    p99 === undefined ? '–' : `${fmt(p99)} / ${max === undefined ? '–' : fmt(max)}`;
  const delays = (r: LoopsResult) =>
    others.map((n) => delay(r.eventLoopP99MsByProcess?.[n], r.eventLoopMaxMsByProcess?.[n]));
  for (const r of measured) {
    const per = r.cpuMsPerTurnByProcess!;
    const sum = r.edgeCpuMsPerTurn + names.reduce((total, n) => total + (per[n] ?? 0), 0);
    lines.push(
      `| ${r.loops} | ${fmt(r.edgeCpuMsPerTurn)} | ${names.map((n) => (per[n] === undefined ? '–' : fmt(per[n]))).join(' | ')} | ${fmt(sum)} | ${fmt((sum * r.turnsPerS) / 1000)} |`,
    );
  }
  lines.push(
    '',
    "Event-loop delay p99 / max over the level (each service's `nodejs_eventloop_lag_p99_seconds` and `_max_seconds`, its histogram reset by a scrape at the level's start), ms. " +
      'The max shows what a p99 hides: a few long stalls (a full GC) that hold every call in flight at once.',
    '',
    `| loops | edge | ${others.join(' | ')} |`,
    `|---:|---:|${others.map(() => '---:|').join('')}`,
    ...measured.map(
      (r) => `| ${r.loops} | ${delay(r.edge.eventLoopP99Ms, r.edge.eventLoopMaxMs)} | ${delays(r).join(' | ')} |`,
    ),
  );
  return lines;
}

/** Each process's longest event-loop delay per relay step: which one a long stall came from. */
function relayStallLines(r: RelayResult): string[] {
  const names = [...new Set(r.steps.flatMap((s) => Object.keys(s.eventLoopMaxMsByProcess ?? {})))];
  if (names.length === 0) return [];
  return [
    '',
    'Longest event-loop delay of each process over the step, ms (`client`: the load generator, whose own delay is in the gaps it times):',
    '',
    `| streams | ${names.join(' | ')} |`,
    `|---:|${names.map(() => '---:').join('|')}|`,
    ...r.steps.map(
      (s) => `| ${s.streams} | ${names.map((n) => fmt(s.eventLoopMaxMsByProcess?.[n] ?? NaN)).join(' | ')} |`,
    ),
  ];
}
