import { hash53 } from '../worker-picker';
import { loadCap, withinCap } from './bounded-load';
import type { Candidate, Placement, PlacementPolicy, PlacementReason, PlacementRequest } from './placement-types';

/** Options of {@link CacheAwarePolicy}. */
export interface CacheAwareOptions {
  /** ε of the load bound (`ROUTER_LOAD_EPSILON`): no worker takes a new conversation above ⌈(1 + ε) × mean⌉. */
  epsilon: number;
  /**
   * ε of the bound up to which a worker keeps the sessions it holds (`ROUTER_SESSION_LOAD_EPSILON`,
   * ≥ ε): moving a session re-prefills its whole history, so a short burst must not move it.
   */
  sessionEpsilon: number;
  /** RouteResponse.reuse_ms (`ROUTER_REUSE_MS`): how long a session keeps its worker without asking. */
  reuseMs: number;
  /**
   * Prefill tokens one running call costs per expected output token of the new request
   * (`ROUTER_DECODE_WEIGHT`): how much a long `max_output_tokens` prefers a less busy worker.
   */
  decodeWeight: number;
}

/** How a service tier weighs waiting against re-prefilling. */
interface TierWeights {
  /** Multiplies the worker's queued prefill in the cost. */
  queue: number;
  /** Multiplies ε (a tighter bound spreads more). */
  epsilon: number;
}

const TIERS: Readonly<Record<string, TierWeights>> = {
  priority: { queue: 2, epsilon: 0.5 },
  flex: { queue: 0.5, epsilon: 1 },
};
const DEFAULT_TIER: TierWeights = { queue: 1, epsilon: 1 };

/**
 * A token of the session's own history is worth two queued ones: prefilling it again delays this
 * request (like a queued token) and adds work every later request on that worker waits for, while
 * the copy left behind serves nobody. A root's tokens count once: a second worker that prefills a
 * hot root serves every later conversation of that root from it, so spreading a root is an
 * investment, not a loss.
 */
const CACHED_WEIGHT = 2;

/**
 * Weighted tokens a move must save before a session leaves the worker holding it. Queue reports are
 * a snapshot (up to one stats interval old) of something that swings by several calls' prompts
 * within a second; without this margin, bench/routing moved one session in six for differences
 * smaller than one tool output, each move prefilling that conversation's history again.
 */
const MOVE_MARGIN_TOKENS = 4_096;

/** What one candidate is worth for a request. */
interface Scored {
  readonly candidate: Candidate;
  /** Prompt tokens it is expected to hold for this request. */
  readonly cached: number;
  readonly holdsSession: boolean;
  /** Estimated prefill work ahead of the request's first token there, in tokens, plus the decode term. */
  readonly cost: number;
  /** Rendezvous weight of (worker, key): breaks ties the same way on every replica. */
  readonly tie: number;
}

/**
 * Cache-aware, load-bounded placement:
 * 1. **Bound**: only workers within ⌈(1 + ε) × (running + 1) / n⌉ running calls (and below their own
 *    INFERENCE_MAX_CONCURRENCY) are candidates (bounded-load consistent hashing); the worker holding
 *    the request's session stays one up to the looser ⌈(1 + ε_session) × (running + 1) / n⌉.
 * 2. **Cost**: among those, the one with the least prefill ahead of the request's first token:
 *    `queued prefill × tier weight − expected cached tokens` (the prompt's own length is the same
 *    everywhere, so it cancels; a session's own tokens count twice, plus a margin, so a move must
 *    save more than noise), `+ running calls × max_output_tokens × ROUTER_DECODE_WEIGHT`.
 *    Expected cached = the session's tokens on the worker that reports holding it (or the edge's
 *    word for a worker whose reports are not in), else the conversation root's mean first prompt on
 *    workers holding that root, else 0.
 * 3. **Ties** (e.g. a new root on an idle fleet) go by rendezvous hashing of the root (or affinity)
 *    key, so the same root lands on the same worker on every router replica.
 * A session therefore stays where its prefix is while that worker is serving, within the bound and
 * not so queued that re-prefilling elsewhere is faster; otherwise it moves.
 */
export class CacheAwarePolicy implements PlacementPolicy {
  readonly name = 'cache-aware';

  constructor(private readonly options: CacheAwareOptions) {}

  place(request: PlacementRequest, candidates: readonly Candidate[]): Placement {
    const tier = TIERS[request.serviceTier] ?? DEFAULT_TIER;
    const total = candidates.reduce((sum, c) => sum + c.load, 0);
    const cap = loadCap(total, candidates.length, this.options.epsilon * tier.epsilon);
    const sessionCap = loadCap(total, candidates.length, this.options.sessionEpsilon * tier.epsilon);
    const root = request.prefixKey || sessionRoot(request, candidates);
    const tieKey = root || request.affinityKey || request.sessionKey;
    const decode = request.expectedOutputTokens * this.options.decodeWeight;
    const scored = candidates.map((candidate) => this.score(request, candidate, root, tieKey, tier, decode));
    // The worker holding the session keeps it up to the looser session bound (moving re-prefills
    // the whole history); everything else goes only where the strict bound allows.
    const eligible = scored.filter(
      (s) =>
        s.candidate.load < s.candidate.maxConcurrency && withinCap(s.candidate.load, s.holdsSession ? sessionCap : cap),
    );
    // Every worker at its own limit: the least loaded one still answers (or says overloaded, retryable).
    const pool = eligible.length > 0 ? eligible : [leastLoaded(scored)];
    const chosen = pool.reduce((best, s) => (better(s, best) ? s : best));
    return {
      worker: chosen.candidate.spec,
      reason: reasonOf(chosen, pool),
      reuseMs: this.options.reuseMs,
      expectedCachedTokens: Number.isFinite(chosen.cached) ? chosen.cached : 0,
    };
  }

  private score(
    request: PlacementRequest,
    candidate: Candidate,
    root: string,
    tieKey: string,
    tier: TierWeights,
    decode: number,
  ): Scored {
    const { kv } = candidate;
    let cached = request.sessionKey ? kv.sessionTokens(request.cacheSalt, request.sessionKey) : 0;
    if (cached === 0 && candidate.spec.id === request.sessionWorkerId && request.sessionKey !== '')
      cached = claimedTokens(request, candidate);
    const holdsSession = cached > 0;
    if (!holdsSession && root !== '') cached = kv.rootTokens(request.cacheSalt, root);
    const work = tier.queue * candidate.queuedTokens + decode * candidate.load;
    return {
      candidate,
      cached,
      holdsSession,
      cost:
        cached === Infinity
          ? -Infinity
          : holdsSession
            ? work - CACHED_WEIGHT * cached - MOVE_MARGIN_TOKENS
            : work - cached,
      tie: hash53(`${candidate.spec.id}\u0000${tieKey}`),
    };
  }
}

function better(a: Scored, b: Scored): boolean {
  if (a.cost !== b.cost) return a.cost < b.cost;
  if (a.tie !== b.tie) return a.tie > b.tie;
  return a.candidate.spec.id < b.candidate.spec.id;
}

function reasonOf(chosen: Scored, scored: readonly Scored[]): PlacementReason {
  if (chosen.holdsSession) return 'session';
  if (chosen.cached > 0) return 'prefix';
  // Nothing cached and the same work everywhere: the hash decided.
  return scored.every((s) => s.cost === chosen.cost) ? 'hash' : 'load';
}

/**
 * What the caller says the worker holds for its session, when the worker's reports do not show it:
 * its reports are not in (take the caller's word, as before reports existed), or the session was
 * kept a moment ago and its report is on its way (the caller's token count). Not when the worker
 * reported dropping it.
 */
function claimedTokens(request: PlacementRequest, candidate: Candidate): number {
  if (!candidate.statsKnown) return Infinity;
  if (candidate.kv.hasDropped(request.cacheSalt, request.sessionKey)) return 0;
  return request.sessionTokens;
}

/** The conversation root of the session the request continues, from whichever worker holds it. */
function sessionRoot(request: PlacementRequest, candidates: readonly Candidate[]): string {
  if (request.sessionKey === '') return '';
  for (const c of candidates) {
    const root = c.kv.sessionRoot(request.cacheSalt, request.sessionKey);
    if (root !== '') return root;
  }
  return '';
}

function leastLoaded(scored: readonly Scored[]): Scored {
  let best = scored[0];
  for (const s of scored) {
    const c = s.candidate;
    if (c.load < best.candidate.load || (c.load === best.candidate.load && c.spec.id < best.candidate.spec.id))
      best = s;
  }
  return best;
}
