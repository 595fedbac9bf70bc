import { createRandom, type Random } from '@fastloop/service-kit';

/**
 * The simulated accelerator's timing model, as pure functions of token counts: no timers here, so
 * tests check the model exactly and the engine only has to follow the schedule.
 */

/** Speeds of the simulated accelerator. */
export interface SimPace {
  /** Base time to first token, ms (queueing, scheduling, first forward pass). */
  ttftMs: number;
  /** Prefill speed for prompt tokens not held in the session cache. */
  prefillTokensPerSecond: number;
  /** Decode speed. */
  tokensPerSecond: number;
  /** Relative spread of each interval, 0..1: an interval becomes interval × (1 ± jitter). */
  jitter: number;
}

/** Time to first token for a prompt with `uncachedTokens` to prefill, before jitter, in ms. */
export function timeToFirstTokenMs(
  uncachedTokens: number,
  pace: Pick<SimPace, 'ttftMs' | 'prefillTokensPerSecond'>,
): number {
  return pace.ttftMs + (Math.max(0, uncachedTokens) * 1000) / pace.prefillTokensPerSecond;
}

/**
 * When each of `n` tokens is due, in ms after the request arrived: the first at `ttftMs`, then one
 * every 1000 / `tokensPerSecond` ms. With `jitter` > 0 each interval (the TTFT included) is scaled
 * by a factor in [1 - jitter, 1 + jitter] drawn from `random`, so the mean rate is kept.
 * The result is non-decreasing.
 */
export function scheduleTokens(
  n: number,
  tokensPerSecond: number,
  ttftMs: number,
  jitter = 0,
  random: Random = createRandom(0),
): Float64Array {
  const due = new Float64Array(Math.max(0, n));
  const interval = 1000 / tokensPerSecond;
  const scale = () => (jitter > 0 ? 1 + jitter * (2 * random() - 1) : 1);
  let t = ttftMs * scale();
  for (let i = 0; i < due.length; i++) {
    if (i > 0) t += interval * scale();
    due[i] = t;
  }
  return due;
}

/** Index of the first token at or after `from` that is not yet due at `elapsedMs`. */
export function dueCount(schedule: Float64Array, from: number, elapsedMs: number): number {
  let i = from;
  while (i < schedule.length && schedule[i] <= elapsedMs) i++;
  return i;
}

/**
 * How long to sleep before the next emission, in ms. The first token goes out exactly when due
 * (TTFT matters); later tokens are batched so chunks are at least `tickMs` apart, which keeps the
 * rate exact at thousands of tokens/s with one timer per chunk instead of one per token.
 */
export function nextWakeDelay(
  schedule: Float64Array,
  next: number,
  elapsedMs: number,
  lastEmitMs: number,
  tickMs: number,
): number {
  if (next >= schedule.length) return 0;
  const dueAt = schedule[next];
  const wakeAt = next === 0 ? dueAt : Math.max(dueAt, lastEmitMs + tickMs);
  return Math.max(0, wakeAt - elapsedMs);
}
