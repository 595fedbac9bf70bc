import type { WorkerSpec } from './workers';

/**
 * Rendezvous (highest-random-weight) hashing: every worker scores hash(worker id, key) and the
 * highest score wins. A key keeps its worker for as long as that worker is healthy, whatever
 * happens to the others, and when it fails only its keys move (spread over the rest) — which is
 * what keeps a conversation on the worker that holds its KV prefix.
 */
export function pickRendezvous(key: string, workers: readonly WorkerSpec[]): WorkerSpec | undefined {
  let best: WorkerSpec | undefined;
  let bestScore = -1;
  for (const w of workers) {
    const score = hash53(`${w.id}\u0000${key}`);
    // Ties (1 in 2^53) go to the smaller id so the choice never depends on list order.
    if (score > bestScore || (score === bestScore && best !== undefined && w.id < best.id)) {
      best = w;
      bestScore = score;
    }
  }
  return best;
}

/** Round-robin over whatever list it is given (the healthy workers at the time of the call). */
export class RoundRobin {
  private counter = 0;

  /** The next worker, or undefined for an empty list. */
  next(workers: readonly WorkerSpec[]): WorkerSpec | undefined {
    if (workers.length === 0) return undefined;
    const w = workers[this.counter % workers.length];
    this.counter = (this.counter + 1) % 0x7fff_ffff;
    return w;
  }
}

/**
 * cyrb53 (public domain): a fast, well-mixed 53-bit string hash. Not cryptographic — affinity
 * keys are not secrets, and a keyed hash would cost more than the whole routing decision.
 */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
