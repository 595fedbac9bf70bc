/**
 * Small deterministic hashing and pseudo-random numbers: the simulated accelerator uses them so the
 * same conversation always gets the same tool choice, arguments, text and jitter, and the
 * benchmarks so the same seed gives the same workload. Not for anything secret.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a (32-bit) of a string's UTF-16 code units. */
export function hashString(text: string, seed = FNV_OFFSET): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

/** FNV-1a (32-bit) over 32-bit integers (e.g. token ids). */
export function hashNumbers(values: ArrayLike<number>, seed = FNV_OFFSET): number {
  let h = seed >>> 0;
  for (let i = 0; i < values.length; i++) {
    h ^= values[i] >>> 0;
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

/** A generator of floats in [0, 1); mulberry32, enough for simulation, not for anything secret. */
export type Random = () => number;

/** Creates a seeded {@link Random}. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, n) from `random`. */
export function pickIndex(random: Random, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}

/** An integer in [min, max] from `random`. */
export function pickInt(random: Random, min: number, max: number): number {
  return min + pickIndex(random, max - min + 1);
}

/** One element of `items`, chosen by `random`. */
export function pick<T>(random: Random, items: readonly T[]): T {
  return items[pickIndex(random, items.length)];
}
