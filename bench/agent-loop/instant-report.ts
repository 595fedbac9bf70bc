import { PRE_INFERENCE_STAGES } from './metrics-scrape';
import type { BenchReport } from './report-json';
import type { TurnRecord } from './rollout-runner';
import { ESTIMATOR, fmt, windowMedian } from './summary';

/** What bench/micro/transport-floor.bench.ts writes (the fields read here). */
export interface TransportFloor {
  generatedAt: string;
  rows: { hop: string; p50: number; p90: number }[];
  /** The client's WebSocket both ways, p50 ms. */
  wsSum: number;
  /** One grpc-js Generate call there and its chunk back, p50 ms. */
  grpcSum: number;
  /** The same call on an open multiplexed stream (EDGE_GRPC_MUX), p50 ms (absent in older reports). */
  muxSum?: number;
}

/**
 * The instant-engine targets (issue 21): WebSocket time to the first output item at most the
 * transport floor measured in the same run plus this much, and flat.
 */
export const INSTANT_OVER_FLOOR_MS = 1;
export const INSTANT_MAX_GROWTH = 1.5;

/** One row of the hop-by-hop breakdown: a name and how to read it off a turn. */
const HOPS: [string, (r: TurnRecord) => number][] = [
  ['client: send → first output item', (r) => r.firstOutputMs],
  ["worker: engine's reported time to the chunk that opened it", (r) => r.engineMeasuredFirstOutputMs],
  ['… of which worker prepare (lookup, assembly, prefix match)', (r) => r.workerMs?.prepare ?? NaN],
  ['… of which the simulator reading the prompt', (r) => r.workerMs?.engine_read ?? NaN],
  ['edge: request in → item out, engine excluded', (r) => r.edgeOverheadMs],
  [
    '… of which edge stages before Generate (validate, load, route, render, safety, queue)',
    (r) => PRE_INFERENCE_STAGES.reduce((s, k) => s + (r.stagesMs[k] ?? 0), 0),
  ],
  // The edge's stages in the order a turn passes them: Classify is sent first (before route), so
  // `safety` is what the turn still waited for the verdict once its Generate call was out.
  ['… … validate (parse and check the request)', (r) => r.stagesMs.validate ?? NaN],
  ['… … load (previous_response_id from the connection cache)', (r) => r.stagesMs.load ?? NaN],
  ['… … route', (r) => r.stagesMs.route ?? NaN],
  ['… … render (the new items to tokens)', (r) => r.stagesMs.render ?? NaN],
  ['… … queue (the Generate call made)', (r) => r.stagesMs.queue ?? NaN],
  ['… … safety (waiting for the verdict after the Generate call)', (r) => r.stagesMs.safety ?? NaN],
  [
    '… of which the Generate hop (edge ttft stage − worker TTFT)',
    (r) => (r.stagesMs.ttft ?? NaN) - r.engineMeasuredTtftMs,
  ],
  [
    "client's WebSocket legs and event delivery (client − edge − engine)",
    (r) => r.firstOutputMs - r.edgeOverheadMs - r.engineMeasuredFirstOutputMs,
  ],
];

/** The rows put beside a gRPC call each: the client's figure, the edge's, and its stages before and after Generate. */
const PLAIN_CALL_ROWS = new Set([HOPS[0][0], HOPS[4][0], HOPS[5][0], HOPS[11][0], HOPS[12][0]]);

/** The Markdown report of the instant-engine test. */
export function renderInstantMarkdown(
  report: BenchReport,
  floor: TransportFloor,
  plainCalls: readonly TurnRecord[] = [],
  alone: readonly TurnRecord[] = [],
): string {
  const { options } = report;
  const turns = options.turns;
  const lastFrom = Math.max(1, turns - 4);
  // The edge's default reaches the worker on its open multiplexed stream: that is its floor.
  const hopFloor = floor.muxSum ?? floor.grpcSum;
  const floorMs = floor.wsSum + hopFloor;
  const targetMs = floorMs + INSTANT_OVER_FLOOR_MS;
  const lines: string[] = [
    "# Instant-engine test: the API's own cost (simulated engine that costs nothing)",
    '',
    `Run ${report.generatedAt} on ${report.environment.cpus} × ${report.environment.cpuModel}, Node ${report.environment.node}. ` +
      `SIM_TTFT_MS=0, SIM_PREFILL_TOKENS_PER_SECOND=${options.prefillTps}, SIM_TOKENS_PER_SECOND=${options.tps[0]}: the engine answers at once, so the client waits only for ` +
      `the API (edge, internal hops, the worker's bookkeeping, the simulator reading the prompt). ${turns} turns per rollout, tool outputs of ` +
      `${options.outputBytes[0]}–${options.outputBytes[1]} bytes, ${options.reps} interleaved repetition(s), each on a fresh stack, every rollout with its own nonce and tenant.`,
    '',
    `**Estimator**: ${ESTIMATOR}.`,
    '',
    '## Time to the first output item (ms)',
    '',
    '| mode | turns 1–5 | turns ' + `${lastFrom}–${turns}` + ' | last 5 / first 5 | final prompt (tokens) |',
    '|---|---:|---:|---:|---:|',
  ];
  const byMode = new Map(
    options.modes.map((m) => [m, report.records.filter((r) => r.mode === m && r.phase === 'interleaved')] as const),
  );
  for (const [mode, rs] of byMode) {
    const first = windowMedian(rs, 1, 5, (r) => r.firstOutputMs);
    const last = windowMedian(rs, lastFrom, turns, (r) => r.firstOutputMs);
    const finalTokens = Math.max(0, ...rs.filter((r) => r.turn === turns).map((r) => r.inputTokens));
    lines.push(`| ${mode} | ${fmt(first)} | ${fmt(last)} | ${fmt(last / first)}× | ${finalTokens} |`);
  }
  const ws = byMode.get('ws') ?? [];
  const wsFirst = windowMedian(ws, 1, 5, (r) => r.firstOutputMs);
  const wsLast = windowMedian(ws, lastFrom, turns, (r) => r.firstOutputMs);
  lines.push(
    '',
    floor.muxSum === undefined
      ? `Transport floor measured in this run (bench/micro/transport-floor.bench.ts, p50): the client's WebSocket both ways ${fmt(floor.wsSum)} ms + ` +
          `one grpc-js Generate call and its first chunk back ${fmt(floor.grpcSum)} ms = **${fmt(floorMs)} ms** before the edge does any work.`
      : `Transport floor measured in this run (bench/micro/transport-floor.bench.ts, p50): the client's WebSocket both ways ${fmt(floor.wsSum)} ms + ` +
          `one Generate call and its first chunk back on the edge's open multiplexed stream ${fmt(floor.muxSum)} ms = **${fmt(floorMs)} ms** before the edge does any work ` +
          `(as a grpc-js call of its own: ${fmt(floor.grpcSum)} ms, ${fmt(floor.wsSum + floor.grpcSum)} ms in all).`,
    '',
    '## Targets',
    '',
    '| target | measured | met |',
    '|---|---|---|',
    `| ws time to first output item p50 at turn ${turns} (turns ${lastFrom}–${turns}) <= floor + ${INSTANT_OVER_FLOOR_MS} ms (${fmt(targetMs)} ms) | ${fmt(wsLast)} ms (floor ${fmt(floorMs)} ms) | ${wsLast <= targetMs ? 'yes' : '**no**'} |`,
    `| ws flat: last 5 / first 5 <= ${INSTANT_MAX_GROWTH}× | ${fmt(wsLast / wsFirst)}× (${fmt(wsFirst)} → ${fmt(wsLast)} ms) | ${wsLast / wsFirst <= INSTANT_MAX_GROWTH ? 'yes' : '**no**'} |`,
    '',
    '## Hop by hop, WebSocket (ms; first 5 turns → last 5 turns)',
    '',
    '| part | first 5 → last 5 |',
    '|---|---:|',
  );
  for (const [name, value] of HOPS)
    lines.push(
      `| ${name} | ${fmt(windowMedian(ws, 1, 5, value))} → ${fmt(windowMedian(ws, lastFrom, turns, value))} |`,
    );
  if (plainCalls.length > 0) {
    const rows = HOPS.filter(([name]) => PLAIN_CALL_ROWS.has(name));
    lines.push(
      '',
      '## Multiplexed streams versus a gRPC call each (WebSocket, measured side by side)',
      '',
      'Each repetition also ran the WebSocket rollout on a fresh stack with `EDGE_GRPC_MUX=false` (Classify and Generate as one grpc-js call each), beside the default run (which goes first rotating with the repetition). ' +
        'Medians as above (ms; first 5 turns → last 5 turns).',
      '',
      '| part | multiplexed streams (default) | a gRPC call each |',
      '|---|---:|---:|',
    );
    const cell = (rs: readonly TurnRecord[], value: (r: TurnRecord) => number) =>
      `${fmt(windowMedian(rs, 1, 5, value))} → ${fmt(windowMedian(rs, lastFrom, turns, value))}`;
    for (const [name, value] of rows) lines.push(`| ${name} | ${cell(ws, value)} | ${cell(plainCalls, value)} |`);
    const plainLast = windowMedian(plainCalls, lastFrom, turns, (r) => r.firstOutputMs);
    lines.push(
      '',
      `The edge keeps the faster: multiplexed streams ${fmt(wsLast)} ms vs ${fmt(plainLast)} ms at turns ${lastFrom}–${turns} (${wsLast <= plainLast ? 'the default' : '**the default is slower here**'}).`,
    );
  }
  if (alone.length > 0) lines.push(...aloneSection(ws, alone, lastFrom, turns));
  lines.push(
    '',
    "Each row is its own median, so rows need not add up. The engine here does no work, so the engine row is the worker's own time until it sent the first chunk " +
      "(prepare, the simulator reading the prompt, its scheduling). What lies between the client's figure and the floor is the edge's own work and the worker's.",
    '',
  );
  return lines.join('\n');
}

/** The rows put beside the WebSocket rollout alone: those beside a gRPC call each, and the client's legs. */
const ALONE_ROWS = new Set([...PLAIN_CALL_ROWS, HOPS[13][0]]);

/**
 * The WebSocket rollout alone beside the same rollout interleaved with the other modes: what one
 * agent on an otherwise idle machine waits for, where every process does its part cold.
 */
function aloneSection(
  ws: readonly TurnRecord[],
  alone: readonly TurnRecord[],
  lastFrom: number,
  turns: number,
): string[] {
  const cell = (rs: readonly TurnRecord[], value: (r: TurnRecord) => number) =>
    `${fmt(windowMedian(rs, 1, 5, value))} → ${fmt(windowMedian(rs, lastFrom, turns, value))}`;
  const lines = [
    '',
    '## One agent alone (WebSocket, measured side by side)',
    '',
    "Each repetition also ran the WebSocket rollout by itself on a fresh stack, nothing else running, beside the default run, where the other modes' turns " +
      'come between its turns and keep every process busy. Medians as above (ms; first 5 turns → last 5 turns).',
    '',
    '| part | interleaved (default run) | alone |',
    '|---|---:|---:|',
  ];
  for (const [name, value] of HOPS.filter(([n]) => ALONE_ROWS.has(n)))
    lines.push(`| ${name} | ${cell(ws, value)} | ${cell(alone, value)} |`);
  const wsLast = windowMedian(ws, lastFrom, turns, (r) => r.firstOutputMs);
  const aloneLast = windowMedian(alone, lastFrom, turns, (r) => r.firstOutputMs);
  lines.push(
    '',
    `One agent alone: ${fmt(aloneLast)} ms to the first output item at turns ${lastFrom}–${turns}, ${fmt(aloneLast / wsLast)}× the interleaved ${fmt(wsLast)} ms.`,
  );
  return lines;
}
