import { fmt } from '../agent-loop/summary';
import type { FrameKey, ProfileSamples } from '../profile/cpu-profile';

/**
 * Where the edge's CPU per turn goes, from a V8 CPU profile of the edge taken during a level of
 * agent loops: every sample is given to the first part below that claims it. The first parts are
 * what the turn does (render, moderate, bill), so their transport work done inline counts there;
 * the later ones are the mechanisms the rest runs on (socket syscalls, gRPC, frames in and out).
 */
export interface EdgePart {
  readonly name: string;
  /** Claims a sample from its stack (innermost frame first). */
  readonly claims: (stack: readonly FrameKey[]) => boolean;
}

const self =
  (pattern: RegExp) =>
  (stack: readonly FrameKey[]): boolean =>
    stack.length > 0 && pattern.test(stack[0]);
const anyFrame =
  (pattern: RegExp) =>
  (stack: readonly FrameKey[]): boolean =>
    stack.some((key) => pattern.test(key));

export const OTHER_PART = 'the rest (turn state, routing, sessions, promises, timers)';

export const EDGE_PARTS: readonly EdgePart[] = [
  { name: 'garbage collection', claims: self(/^\(garbage collector\) /) },
  {
    name: 'tokenizing and rendering the new items',
    claims: anyFrame(/ (libs\/model-profiles\/|apps\/edge\/src\/render-pool\/|apps\/edge\/src\/turn\/render-)/),
  },
  {
    name: 'output moderation (batches to safety, verdicts)',
    claims: anyFrame(/ apps\/edge\/src\/(safety\/output-|clients\/moderation-session)/),
  },
  { name: 'responses store', claims: anyFrame(/ apps\/edge\/src\/store\//) },
  {
    name: 'usage records (journal, billing queue)',
    claims: anyFrame(/ (apps\/edge\/src\/usage\/|node_modules\/bullmq\/)/),
  },
  { name: 'Redis client (replies)', claims: anyFrame(/ node_modules\/ioredis\//) },
  {
    name: 'socket writes (writev/write syscalls, every socket)',
    claims: self(
      /^(writev|writeBuffer|writeString|writeUtf8String|writeLatin1String|writeAsciiString|writeUcs2String) \(native\)$/,
    ),
  },
  {
    name: 'gRPC to worker, safety, router (grpc-js, HTTP/2, protobuf)',
    claims: anyFrame(
      / (node_modules\/@grpc\/|node:http2|libs\/service-kit\/src\/mux\/|libs\/proto\/|node_modules\/@bufbuild\/|apps\/edge\/src\/clients\/)/,
    ),
  },
  {
    name: 'client frames in (WebSocket receive, JSON parse, validation)',
    claims: anyFrame(
      / (node_modules\/ws\/lib\/receiver|apps\/edge\/src\/session\/decode-client-event|node_modules\/zod\/|libs\/protocol\/)/,
    ),
  },
  {
    name: 'events out (JSON, WebSocket frames)',
    claims: anyFrame(
      / (apps\/edge\/src\/session\/(event-json|microtask-cork)|node_modules\/ws\/lib\/sender|apps\/edge\/src\/turn\/turn-writer)/,
    ),
  },
  {
    name: 'metrics, logs, timing',
    claims: anyFrame(
      / (node_modules\/prom-client\/|node_modules\/pino|apps\/edge\/src\/(edge-metrics|access-log|turn\/turn-timing))/,
    ),
  },
  { name: 'runtime outside JavaScript ((program))', claims: self(/^\(program\) /) },
];

/** The part that claims `stack`: the first of `parts`, else {@link OTHER_PART}. */
export function partOf(stack: readonly FrameKey[], parts: readonly EdgePart[] = EDGE_PARTS): string {
  return parts.find((part) => part.claims(stack))?.name ?? OTHER_PART;
}

/** The edge's CPU per turn by part over one profiled level. */
export interface EdgeCpuParts {
  loops: number;
  turns: number;
  /**
   * The profile's busy time over the level per turn, ms: wall time the main thread was not idle,
   * so on a saturated machine also the time it waited for a core.
   */
  profiledMsPerTurn: number;
  /** The edge's CPU per turn over the same level from /proc (all its threads), ms. */
  procMsPerTurn: number;
  /** Sampling interval of the profile, µs. */
  intervalUs: number;
  /** Each part's share of the profile's busy time, and that share of {@link procMsPerTurn}. */
  parts: { name: string; share: number; msPerTurn: number }[];
}

/** Splits the profile's busy time in `[fromS, toS)` into {@link EDGE_PARTS}, per turn. */
export function edgeCpuParts(
  samples: ProfileSamples,
  window: { fromS: number; toS: number },
  level: { loops: number; turns: number; procMsPerTurn: number; intervalUs: number },
): EdgeCpuParts {
  const turns = Math.max(1, level.turns);
  const byPart = samples.grouped((stack) => partOf(stack), window.fromS, window.toS);
  const names = [...EDGE_PARTS.map((p) => p.name), OTHER_PART];
  const busyMs = [...byPart.values()].reduce((a, b) => a + b, 0);
  const shareOf = (name: string) => (busyMs > 0 ? (byPart.get(name) ?? 0) / busyMs : 0);
  return {
    loops: level.loops,
    turns: level.turns,
    profiledMsPerTurn: busyMs / turns,
    procMsPerTurn: level.procMsPerTurn,
    intervalUs: level.intervalUs,
    parts: names.map((name) => ({ name, share: shareOf(name), msPerTurn: shareOf(name) * level.procMsPerTurn })),
  };
}

/**
 * The report's section: the parts of every profiled level, largest first (by the first level),
 * against the ≤ `targetMs` target. Beside each level's shares, that share of the profiled level's
 * CPU per turn and, where the report has an unprofiled level of the same loops (`measuredOf`), of
 * its figure, the one the target is read against (the profiler's own cost inflates the profiled one).
 */
export function edgeCpuPartsLines(
  levels: readonly EdgeCpuParts[],
  targetMs: number,
  measuredOf: (loops: number) => number | undefined = () => undefined,
): string[] {
  if (levels.length === 0) return [];
  const columns = levels.map((level) => ({ level, measured: measuredOf(level.loops) }));
  const shareIn = (level: EdgeCpuParts, name: string) => level.parts.find((p) => p.name === name)?.share ?? 0;
  const names = [...levels[0].parts].sort((a, b) => b.share - a.share).map((p) => p.name);
  const head = columns.flatMap(({ level, measured }) => [
    `${level.loops} loops: share`,
    'profiled ms per turn',
    ...(measured !== undefined ? [`of the ${level.loops}-loop level above (ms)`] : []),
  ]);
  const cells = (name: string) =>
    columns.flatMap(({ level, measured }) => {
      const share = shareIn(level, name);
      return [
        `${fmt(100 * share)}%`,
        fmt(share * level.procMsPerTurn),
        ...(measured !== undefined ? [fmt(share * measured)] : []),
      ];
    });
  const totals = columns.flatMap(({ level, measured }) => [
    '100%',
    `**${fmt(level.procMsPerTurn)}**`,
    ...(measured !== undefined ? [`**${fmt(measured)}**`] : []),
  ]);
  const turns = levels.map((l) => `${l.loops} loops (${l.turns} turns)`).join(', ');
  const busy = levels.map((l) => fmt(l.profiledMsPerTurn)).join(' and ');
  return [
    "### Where the edge's CPU per turn goes",
    '',
    `A separate level per loop count, each on a fresh stack whose services run with \`--cpu-prof --cpu-prof-interval=${levels[0].intervalUs}\`: ` +
      `${turns}. Each of the edge's samples over the level goes to the first part that claims it ` +
      '(bench/load/edge-parts.ts: what the turn does first, then the mechanisms the rest runs on). ' +
      "*Profiled ms per turn* is that share of the profiled level's edge CPU per turn from /proc (the profile samples " +
      `the main thread's busy wall time, ${busy} ms per turn, which on busy cores includes waiting for one); *of the level above* is the same share ` +
      "of the unprofiled level of the same loops, the figure the target is read against (the profiler's own cost and the lower " +
      `rate raise the profiled level's). Against the target of ${fmt(targetMs)} ms per turn, this is what stands between.`,
    '',
    `| part | ${head.join(' | ')} |`,
    `|---|${head.map(() => '---:').join('|')}|`,
    ...names.map((name) => `| ${name} | ${cells(name).join(' | ')} |`),
    `| **in all** | ${totals.join(' | ')} |`,
    '',
  ];
}
