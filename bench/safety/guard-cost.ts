import { safetyV1 } from '@fastloop/proto';
import { parseCounter } from './prom-text';
import type { RolloutTurns } from './rollout';

/** The guard's cost of one classification: tokens sent, tokens the worker really prefilled, time. */
export interface GuardCost {
  /** Prompt tokens sent to the guard worker (safety_guard_prompt_tokens_total delta). */
  sentTokens: number;
  /** Of the whole guard prompt, tokens the worker reused (safety_guard_cached_tokens_total delta). */
  cachedTokens: number;
  /** Tokens the worker prefilled: its prompt minus what it reused (safety_guard_prefill_tokens_total delta). */
  prefilledTokens: number;
  /** Guard call time, ms (safety_guard_duration_seconds delta). */
  guardMs: number;
  /** Classify round trip, ms. */
  rttMs: number;
}

export interface GuardRow {
  turn: number;
  incremental: GuardCost;
  full: GuardCost;
}

type Classify = (state: Buffer, items: safetyV1.SafetyItem[]) => Promise<safetyV1.ClassifyResponse>;

/**
 * Guard cost per turn, incremental (the turn's items on the carried guard session) versus full
 * (the whole conversation from an empty state: a new guard session, everything sent). What the
 * worker then prefills for the full re-scan depends on its content prefix caching: with it, the
 * conversation the incremental session just left on the worker is found by content.
 */
export async function measureGuard(
  classify: Classify,
  metrics: () => Promise<string>,
  turns: RolloutTurns,
  at: readonly number[],
): Promise<GuardRow[]> {
  const rows: GuardRow[] = [];
  let state: Buffer = Buffer.alloc(0);
  let done = 0;
  for (const turn of at) {
    for (; done < turn; done++) state = Buffer.from((await classify(state, [...turns[done]])).state);
    // A guard session is consumed by the call that extends it (the worker moves it to the new
    // key), so the measured call's state is the one the rollout continues from.
    const incremental = await once(metrics, async () => {
      state = Buffer.from((await classify(state, [...turns[turn]])).state);
    });
    done = turn + 1;
    const full = await once(metrics, () => classify(Buffer.alloc(0), turns.slice(0, turn + 1).flat()));
    rows.push({ turn, incremental, full });
  }
  return rows;
}

async function once(metrics: () => Promise<string>, call: () => Promise<unknown>): Promise<GuardCost> {
  const before = await metrics();
  const start = performance.now();
  await call();
  const rttMs = performance.now() - start;
  const after = await metrics();
  const delta = (name: string) => parseCounter(after, name) - parseCounter(before, name);
  return {
    sentTokens: delta('safety_guard_prompt_tokens_total'),
    cachedTokens: delta('safety_guard_cached_tokens_total'),
    prefilledTokens: delta('safety_guard_prefill_tokens_total'),
    guardMs: delta('safety_guard_duration_seconds_sum') * 1000,
    rttMs,
  };
}
