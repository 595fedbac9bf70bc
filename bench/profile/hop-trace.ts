/**
 * Lines up the hop marks the services wrote with FASTLOOP_HOP_TRACE_DIR set (libs/service-kit
 * hop-trace.ts) into one timeline per turn: every mark's time from the turn's start (the benchmark
 * client's `client.start` when it traced too, as bench/agent-loop's clients do, else `edge.turn`),
 * and per mark the median over the turns. Turns must run one at a time (a rollout, e.g. the instant-engine
 * test with `--modes ws`): a mark belongs to the last turn started before it.
 *
 *   FASTLOOP_HOP_TRACE_DIR=/tmp/hops npx tsx bench/agent-loop/instant.ts --reps 1 --modes ws --out /tmp/x
 *   npx tsx bench/profile/hop-trace.ts /tmp/hops [--skip N] [--show N]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_TURN_MARK } from '@fastloop/service-kit';

/** One mark: wall time (µs, shared by the machine's processes) and its label. */
export interface HopMark {
  us: number;
  label: string;
}

/** A turn: each label's first mark, µs after the turn's `edge.turn`. */
export type Timeline = Map<string, number>;

const EDGE_TURN = 'edge.turn';

/**
 * Marks of every process, in time order, into turns (marks before the first turn are dropped). A
 * turn starts at the client's mark when the client traced too, else at the edge's.
 */
export function timelines(marks: readonly HopMark[]): Timeline[] {
  const sorted = [...marks].sort((a, b) => a.us - b.us);
  const startLabel = sorted.some((m) => m.label === CLIENT_TURN_MARK) ? CLIENT_TURN_MARK : EDGE_TURN;
  const turns: Timeline[] = [];
  let start = 0;
  let current: Timeline | undefined;
  for (const { us, label } of sorted) {
    if (label === startLabel) {
      start = us;
      current = new Map([[startLabel, 0]]);
      turns.push(current);
    } else if (current && !current.has(label)) current.set(label, us - start);
  }
  return turns;
}

/** Per label, the median of its time in the turns that have it, in order of that median. */
export function medians(turns: readonly Timeline[]): { label: string; medianUs: number; turns: number }[] {
  const byLabel = new Map<string, number[]>();
  for (const turn of turns)
    for (const [label, us] of turn) {
      const list = byLabel.get(label);
      if (list) list.push(us);
      else byLabel.set(label, [us]);
    }
  return [...byLabel]
    .map(([label, list]) => {
      const s = [...list].sort((a, b) => a - b);
      const mid = s.length >> 1;
      return { label, medianUs: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2, turns: s.length };
    })
    .sort((a, b) => a.medianUs - b.medianUs);
}

/** Parses one process's file (`µs label` lines). */
export function parseHops(text: string): HopMark[] {
  const out: HopMark[] = [];
  for (const line of text.split('\n')) {
    const at = line.indexOf(' ');
    if (at > 0) out.push({ us: Number(line.slice(0, at)), label: line.slice(at + 1) });
  }
  return out;
}

function flag(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
}

function main(args: string[]): void {
  const dir = args[0];
  if (!dir) {
    process.stdout.write(`${readFileSync(__filename, 'utf8').split('*/')[0]}\n`);
    process.exitCode = 1;
    return;
  }
  const marks = readdirSync(dir)
    .filter((f) => f.endsWith('.hops'))
    .flatMap((f) => parseHops(readFileSync(join(dir, f), 'utf8')));
  const turns = timelines(marks).slice(flag(args, 'skip', 0));
  const ms = (us: number) => (us / 1000).toFixed(2).padStart(8);
  const first = turns[0]?.keys().next().value ?? EDGE_TURN;
  process.stdout.write(`${turns.length} turns; median ms after ${first} (turns with the mark):\n`);
  for (const m of medians(turns)) process.stdout.write(`${ms(m.medianUs)}  ${m.label} (${m.turns})\n`);
  for (const turn of turns.slice(0, flag(args, 'show', 0)))
    process.stdout.write(
      `${[...turn]
        .sort((a, b) => a[1] - b[1])
        .map(([label, us]) => `${label}@${(us / 1000).toFixed(2)}`)
        .join(' ')}\n`,
    );
}

if (require.main === module) main(process.argv.slice(2));
