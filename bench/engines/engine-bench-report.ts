/** One measured turn of one conversation mode on one engine, in one repetition. */
export interface EngineTurn {
  engine: string;
  mode: Mode;
  rep: number;
  turn: number;
  inputTokens: number;
  cachedTokens: number;
  /** Prompt tokens the engine evaluated (its own meter; absent for engines that do not report it). */
  evaluatedTokens?: number;
  /** Tokens evaluated after the completion to hold its rendering (llamacpp; not on the TTFT path). */
  alignedTokens?: number;
  outputTokens: number;
  /** Client-side: request sent → first output text delta (direct: prompt tokens in hand → first token). */
  ttftMs: number;
  /** Output tokens after the first over the time from the first to the last. */
  tokensPerSecond: number;
  /** `ws` only, from the edge's timing event: request at the edge → Generate call sent. */
  edgeBeforeGenerateMs?: number;
  /** `ws` only: the worker's own time to its first chunk. */
  workerTtftMs?: number;
  /** `ws` only: Generate call sent → first chunk at the edge. */
  generateTtftMs?: number;
}

/** `ws − direct` of one turn of one repetition, part by part; the parts add up to the whole. */
export interface OverheadParts {
  whole: number;
  edgeBeforeGenerate: number;
  workerBeyondModel: number;
  generateHop: number;
  afterFirstChunk: number;
}

/** Every turn's `ws − direct` split with the edge's timing event (pairs without one are left out). */
export function overheadParts(turns: readonly EngineTurn[]): OverheadParts[] {
  return turns.flatMap((w) => {
    if (w.mode !== 'ws' || w.edgeBeforeGenerateMs === undefined) return [];
    const d = turns.find((t) => t.mode === 'direct' && t.engine === w.engine && t.turn === w.turn && t.rep === w.rep);
    if (!d || w.workerTtftMs === undefined || w.generateTtftMs === undefined) return [];
    return [
      {
        whole: w.ttftMs - d.ttftMs,
        edgeBeforeGenerate: w.edgeBeforeGenerateMs,
        workerBeyondModel: w.workerTtftMs - d.ttftMs,
        generateHop: w.generateTtftMs - w.workerTtftMs,
        afterFirstChunk: w.ttftMs - w.edgeBeforeGenerateMs - w.generateTtftMs,
      },
    ];
  });
}

/**
 * `ws`: WebSocket continuation (only the new message, `previous_response_id`); `resend`: the whole
 * conversation again on the same kind of socket, no id (the engine may still match the prefix by
 * content); `resend-cold`: the same under a per-turn instruction nonce, so no prefix is reused;
 * `direct`: the same model driven with node-llama-cpp in the benchmark's process, no API around it.
 */
export type Mode = 'ws' | 'resend' | 'resend-cold' | 'direct';
export const MODES: readonly Mode[] = ['ws', 'resend', 'resend-cold', 'direct'];

/** Output tokens after the first over the span of the deltas; 0 when there is no span. */
export function decodeRate(outputTokens: number, firstDeltaMs: number, lastDeltaMs: number): number {
  const span = lastDeltaMs - firstDeltaMs;
  return outputTokens > 1 && span > 0 ? ((outputTokens - 1) * 1000) / span : 0;
}

/** Median, min and max of a sample. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spread(values: readonly number[]): Spread | undefined {
  if (values.length === 0) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1], n: s.length };
}

/** The order modes run in for one turn of one repetition: rotated, so none is always first. */
export function modeOrder(modes: readonly Mode[], rep: number, turn: number): Mode[] {
  const k = (rep + turn) % modes.length;
  return [...modes.slice(k), ...modes.slice(0, k)];
}

/** How the run went: when, where, how busy the machine was. */
export interface RunMeta {
  date: string;
  machine: string;
  reps: number;
  /** 1-minute load average per engine at its start and end (os.loadavg()[0]). */
  load: Record<string, { start: number; end: number }>;
  notes: string[];
}

const fmt = (n: number | undefined, digits = 1) => (n === undefined ? '–' : n.toFixed(digits));
const cell = (s: Spread | undefined, digits = 1) =>
  s ? `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})` : '–';

/** Per engine, one row per turn: every mode's median TTFT (range), the API's overhead over direct. */
export function renderMarkdown(turns: readonly EngineTurn[], meta: RunMeta): string {
  const out = [
    '# bench/engines — WebSocket continuation, stateless resend, cold resend and the model alone',
    '',
    `${meta.date}, ${meta.machine}. ${meta.reps} repetitions; within each, the modes take turns (rotated every turn), all over WebSocket, greedy sampling (temperature 0). Cells: median (min–max) over the repetitions. TTFT is client-side (request sent → first text delta); for \`direct\` it is the prompt's tokens in hand → the first sampled token. "eval" is what the engine's own meter counted as prefilled; "aligned" what it evaluated after the answer so the next prompt finds it (off the TTFT path).`,
    '',
    `Machine load (1-minute load average, 2 cores shared with other work): ${Object.entries(meta.load)
      .map(([engine, l]) => `${engine} ${l.start.toFixed(2)} at start, ${l.end.toFixed(2)} at end`)
      .join('; ')}.`,
    ...meta.notes.map((n) => `\n${n}`),
    '',
  ];
  for (const engine of [...new Set(turns.map((t) => t.engine))]) {
    const mine = turns.filter((t) => t.engine === engine);
    const hasDirect = mine.some((t) => t.mode === 'direct');
    out.push(`## ${engine}`, '');
    const header = [
      'turn',
      'input tokens',
      'ws TTFT ms',
      'resend TTFT ms',
      'cold TTFT ms',
      ...(hasDirect ? ['direct TTFT ms', 'ws − direct ms', 'API overhead'] : []),
      'cold/ws',
      'ws eval / aligned',
      'cold eval',
      'ws tok/s',
      ...(hasDirect ? ['direct tok/s'] : []),
    ];
    out.push(`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`);
    const at = (mode: Mode, turn: number) => mine.filter((t) => t.mode === mode && t.turn === turn);
    const by = (mode: Mode, turn: number, f: (t: EngineTurn) => number | undefined) =>
      spread(at(mode, turn).flatMap((t) => (f(t) === undefined ? [] : [f(t)!])));
    for (const turn of [...new Set(mine.map((t) => t.turn))].sort((a, b) => a - b)) {
      const ws = by('ws', turn, (t) => t.ttftMs);
      const cold = by('resend-cold', turn, (t) => t.ttftMs);
      const direct = by('direct', turn, (t) => t.ttftMs);
      // Paired per repetition: the same turn, run one right after the other.
      const gaps = spread(
        at('ws', turn).flatMap((w) => {
          const d = at('direct', turn).find((x) => x.rep === w.rep);
          return d ? [w.ttftMs - d.ttftMs] : [];
        }),
      );
      const row = [
        String(turn),
        fmt(by('ws', turn, (t) => t.inputTokens)?.median, 0),
        cell(ws),
        cell(by('resend', turn, (t) => t.ttftMs)),
        cell(cold),
        ...(hasDirect
          ? [cell(direct), cell(gaps), direct && gaps ? `${fmt((100 * gaps.median) / direct.median, 0)}%` : '–']
          : []),
        ws && cold ? fmt(cold.median / ws.median, 2) : '–',
        `${fmt(by('ws', turn, (t) => t.evaluatedTokens)?.median, 0)} / ${fmt(by('ws', turn, (t) => t.alignedTokens)?.median, 0)}`,
        fmt(by('resend-cold', turn, (t) => t.evaluatedTokens)?.median, 0),
        fmt(by('ws', turn, (t) => t.tokensPerSecond)?.median, 0),
        ...(hasDirect ? [fmt(by('direct', turn, (t) => t.tokensPerSecond)?.median, 0)] : []),
      ];
      out.push(`| ${row.join(' | ')} |`);
    }
    out.push('', ...summary(mine), ...overheadLines(mine), '');
  }
  return out.join('\n');
}

/** The API's overhead on TTFT part by part (engines with a `direct` mode and timed `ws` turns). */
function overheadLines(turns: readonly EngineTurn[]): string[] {
  const pairs = overheadParts(turns);
  if (pairs.length === 0) return [];
  const rows: [string, (p: OverheadParts) => number][] = [
    ['edge: request in → Generate call sent (parse, load, route, render, Classify sent)', (p) => p.edgeBeforeGenerate],
    ["worker beyond the model alone (the worker's time to its first chunk − direct TTFT)", (p) => p.workerBeyondModel],
    ['Generate hop (call out, first chunk back, both event loops)', (p) => p.generateHop],
    [
      'after the first chunk reached the edge (a late input verdict, the delta written, the client socket)',
      (p) => p.afterFirstChunk,
    ],
  ];
  const mean = (f: (p: OverheadParts) => number) => pairs.reduce((a, p) => a + f(p), 0) / pairs.length;
  return [
    '',
    `Where \`ws − direct\` goes (${pairs.length} turns, each paired with the same turn of \`direct\` in its repetition; the ws socket asks for the edge's \`responsesapi.websocket_timing\` event). Means add up to the whole; medians show the typical turn.`,
    '',
    '| part | mean ms | median ms |',
    '|---|---:|---:|',
    ...rows.map(([name, f]) => `| ${name} | ${fmt(mean(f), 2)} | ${fmt(spread(pairs.map(f))?.median, 2)} |`),
    `| **ws − direct** | **${fmt(
      mean((p) => p.whole),
      2,
    )}** | **${fmt(spread(pairs.map((p) => p.whole))?.median, 2)}** |`,
  ];
}

/** One line per comparison that matters, over all turns of an engine. */
function summary(turns: readonly EngineTurn[]): string[] {
  const lines: string[] = [];
  const ids = [...new Set(turns.map((t) => t.turn))].sort((a, b) => a - b);
  const median = (mode: Mode, turn: number) =>
    spread(turns.filter((t) => t.mode === mode && t.turn === turn).map((t) => t.ttftMs))?.median;
  const shares = ids.flatMap((turn) => {
    const d = median('direct', turn);
    const gaps = turns
      .filter((t) => t.mode === 'ws' && t.turn === turn)
      .flatMap((w) => {
        const x = turns.find((t) => t.mode === 'direct' && t.turn === turn && t.rep === w.rep);
        return x ? [w.ttftMs - x.ttftMs] : [];
      });
    const g = spread(gaps)?.median;
    return d !== undefined && g !== undefined && d > 0 ? [(100 * g) / d] : [];
  });
  const s = spread(shares);
  if (s)
    lines.push(
      `API overhead on TTFT (ws − direct, paired per repetition, over direct): median over turns ${s.median.toFixed(0)}%, per-turn medians ${s.min.toFixed(0)}% to ${s.max.toFixed(0)}%.`,
    );
  const last = ids[ids.length - 1];
  const ws = median('ws', last);
  const cold = median('resend-cold', last);
  if (ws !== undefined && cold !== undefined)
    lines.push(
      `At the longest history (turn ${last}): cold resend ${cold.toFixed(1)} ms vs WebSocket continuation ${ws.toFixed(1)} ms (${(cold / ws).toFixed(2)}×).`,
    );
  return lines;
}
