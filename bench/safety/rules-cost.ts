import { safetyV1 } from '@fastloop/proto';
import { parseHistogram } from '../agent-loop/metrics-scrape';
import type { RolloutTurns } from './rollout';

const METRIC = 'safety_classify_duration_seconds';

/** One point's cost: median round trip and the service's own mean time per call. */
export interface Cost {
  /** Median round trip per call, ms. */
  rttMs: number;
  /** Service's own mean time per call, ms (safety_classify_duration_seconds). */
  serviceMs: number;
}

/** Incremental and full costs at one turn, in each repetition. */
export interface RulesRow {
  turn: number;
  incremental: { chars: number; items: number; reps: Cost[] };
  full: { chars: number; items: number; reps: Cost[] };
  stateBytes: number;
}

type Classify = (state: Buffer, items: safetyV1.SafetyItem[]) => Promise<safetyV1.ClassifyResponse>;

/**
 * Rules-only cost per turn, incremental (the turn's new items on the carried state) versus a full
 * re-scan (every item so far, no state), `reps` times over the same points, the repetitions
 * interleaved (each repetition measures every turn before the next starts), so a slow patch on a
 * shared machine spreads over the points instead of landing on one.
 */
export async function measureRules(
  classify: Classify,
  metrics: () => Promise<string>,
  turns: RolloutTurns,
  at: readonly number[],
  calls: number,
  reps: number,
): Promise<RulesRow[]> {
  // The state the edge would carry into each measured turn.
  const states = new Map<number, Buffer>();
  let state: Buffer = Buffer.alloc(0);
  for (let t = 0; t <= Math.max(...at); t++) {
    if (at.includes(t)) states.set(t, state);
    state = Buffer.from((await classify(state, [...turns[t]])).state);
  }
  const rows: RulesRow[] = at.map((turn) => ({
    turn,
    incremental: { ...sizeOf(turns[turn]), reps: [] },
    full: { ...sizeOf(turns.slice(0, turn + 1).flat()), reps: [] },
    stateBytes: states.get(turn)!.length,
  }));
  for (let r = 0; r < reps; r++) {
    for (const row of rows) {
      const carried = states.get(row.turn)!;
      const all = turns.slice(0, row.turn + 1).flat();
      row.incremental.reps.push(await measure(metrics, calls, () => classify(carried, [...turns[row.turn]])));
      row.full.reps.push(
        await measure(metrics, Math.max(3, Math.ceil(calls / 3)), () => classify(Buffer.alloc(0), all)),
      );
    }
  }
  return rows;
}

/** The header's cost (instructions + tools), classified once per distinct header. */
export async function measureHeader(
  classify: Classify,
  metrics: () => Promise<string>,
  header: safetyV1.SafetyItem[],
  calls: number,
): Promise<Cost & { chars: number; items: number }> {
  return { ...(await measure(metrics, calls, () => classify(Buffer.alloc(0), header))), ...sizeOf(header) };
}

function sizeOf(items: readonly safetyV1.SafetyItem[]): { chars: number; items: number } {
  return { chars: items.reduce((n, i) => n + i.text.length, 0), items: items.length };
}

/** Runs `call` `calls` times (after 3 warm-ups): median round trip, service time per call. */
async function measure(metrics: () => Promise<string>, calls: number, call: () => Promise<unknown>): Promise<Cost> {
  for (let i = 0; i < 3; i++) await call();
  const before = serviceTotals(await metrics());
  const rtts: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await call();
    rtts.push(performance.now() - start);
  }
  const after = serviceTotals(await metrics());
  rtts.sort((a, b) => a - b);
  return {
    rttMs: rtts[Math.floor(rtts.length / 2)],
    serviceMs: ((after.sum - before.sum) * 1000) / (after.count - before.count),
  };
}

function serviceTotals(text: string): { sum: number; count: number } {
  return [...parseHistogram(text, METRIC, []).values()][0] ?? { sum: 0, count: 0 };
}
