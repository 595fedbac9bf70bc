/**
 * Seeded pseudo-random numbers for the workload: the same seed gives the same instructions, tool
 * outputs and rollouts on every run (mulberry32; enough for a benchmark, not for secrets).
 */

/** A generator of floats in [0, 1). */
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

/** FNV-1a (32-bit) of a string, to derive independent seeds from names. */
export function hashString(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
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
