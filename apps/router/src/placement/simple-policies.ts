import { hash53, pickRendezvous, RoundRobin } from '../worker-picker';
import type { Candidate, Placement, PlacementPolicy, PlacementRequest } from './placement-types';

/**
 * `hash`: what the router did before load-aware placement, kept for comparison. Rendezvous hashing
 * of the affinity key (prompt_cache_key, else previous_response_id) over serving workers, round
 * robin without a key; a decision holds until its worker fails (no reuse_ms).
 */
export class HashPolicy implements PlacementPolicy {
  readonly name = 'hash';
  private readonly roundRobin = new RoundRobin();

  place(request: PlacementRequest, candidates: readonly Candidate[]): Placement {
    const specs = candidates.map((c) => c.spec);
    const worker = request.affinityKey ? pickRendezvous(request.affinityKey, specs) : this.roundRobin.next(specs);
    return {
      worker: worker!,
      reason: request.affinityKey ? 'hash' : 'round_robin',
      reuseMs: undefined,
      expectedCachedTokens: 0,
    };
  }
}

/**
 * `round-robin`: every request to the next serving worker, whatever it continues (what a plain L4/L7
 * load balancer in front of the workers does). reuse_ms 0: a session asks again every turn.
 */
export class RoundRobinPolicy implements PlacementPolicy {
  readonly name = 'round-robin';
  private readonly roundRobin = new RoundRobin();

  place(_request: PlacementRequest, candidates: readonly Candidate[]): Placement {
    return {
      worker: this.roundRobin.next(candidates.map((c) => c.spec))!,
      reason: 'round_robin',
      reuseMs: 0,
      expectedCachedTokens: 0,
    };
  }
}

/**
 * `least-loaded`: the worker with the fewest running calls, then the least queued prefill, ties by
 * rendezvous weight of the request's key. No notion of what a worker holds. reuse_ms 0.
 */
export class LeastLoadedPolicy implements PlacementPolicy {
  readonly name = 'least-loaded';

  place(request: PlacementRequest, candidates: readonly Candidate[]): Placement {
    const key = request.prefixKey || request.affinityKey || request.sessionKey;
    let best = candidates[0];
    let bestTie = hash53(`${best.spec.id}\u0000${key}`);
    for (const c of candidates.slice(1)) {
      const tie = hash53(`${c.spec.id}\u0000${key}`);
      const better =
        c.load !== best.load
          ? c.load < best.load
          : c.queuedTokens !== best.queuedTokens
            ? c.queuedTokens < best.queuedTokens
            : tie > bestTie;
      if (better) {
        best = c;
        bestTie = tie;
      }
    }
    return { worker: best.spec, reason: 'least_loaded', reuseMs: 0, expectedCachedTokens: 0 };
  }
}
