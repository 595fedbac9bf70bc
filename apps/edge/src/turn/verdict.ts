import { safetyV1 } from '@fastloop/proto';
import { checkScanBounds, DomainError, ErrorCode, hopTrace } from '@fastloop/service-kit';
import { failureOf } from '../api-errors';
import { headerSafetyItems, TEXT_FORMAT_ITEM } from '../safety/header-items';
import { HeaderVerdicts } from '../safety/header-verdicts';
import { blockedError, noticed, type NoticedFinding } from '../safety/safety-findings';
import type { HeaderVerdictCarry, RouteDecision } from './conversation-state';
import { DEFAULT_EDGE_LIMITS } from './edge-limits';
import type { TurnInput } from './input-stage';
import { toScan } from './item-scan';
import { ownedCopy } from '../safety/owned-copy';
import { narrowItems } from './narrow-item';
import type { TurnDeps, TurnRequest } from './turn-deps';

/** Safety's carried state after this turn's items, and what it asked to flag or redact. */
export interface SafetyResult {
  state: Buffer;
  itemsSeen: number;
  noticed: NoticedFinding[];
  /** The header this verdict allowed, which the next turn reuses while its header is unchanged. */
  header: HeaderVerdictCarry;
}

/**
 * A turn's safety verdict on its items (those safety has not seen) and its header: the classifier
 * call starts on first use and is made once; it rejects with an ApiError when the input is blocked.
 */
export class Verdict {
  private verdict: Promise<SafetyResult> | undefined;

  /**
   * @param route the turn's route: items are classified under the router's canonical model, the
   *   one whose policy applies, never the alias the client typed (a term set on a model would be
   *   bypassed by naming it `default`).
   * @param now ask at once (the round trip runs beside routing, rendering and the Generate call);
   *   false for a request that may compact, whose judged input the compaction stage may change.
   */
  constructor(
    private readonly deps: TurnDeps,
    private readonly req: TurnRequest,
    private readonly input: TurnInput,
    private readonly route: Promise<RouteDecision>,
    now: boolean,
  ) {
    if (now) void this.get();
  }

  /** The verdict, asked for now if it was not yet. */
  get(): Promise<SafetyResult> {
    if (!this.verdict) {
      this.verdict = this.route.then((route) => classify(this.deps, this.req, this.input, route.model));
      this.verdict.catch(() => undefined); // awaited by the judge; no unhandled rejection if routing fails first
    }
    return this.verdict;
  }
}

/**
 * Classifies the items safety has not seen, carrying its state, and the request header
 * (instructions and tool definitions, which the model reads too; once per distinct header);
 * blocks with an API error.
 */
async function classify(deps: TurnDeps, req: TurnRequest, input: TurnInput, model: string): Promise<SafetyResult> {
  const prev = req.previous;
  const send = (from: number, state: Buffer) => {
    const r = { state, items: scansFrom(input, from), tenant: req.principal.tenant, model };
    return gatedClassify(deps, r, from, req.signal);
  };
  // The items' request leaves first: checking the header against the carried one is work of its own.
  const items = send(prev ? prev.safetyItems : 0, prev ? prev.safetyState : EMPTY).catch((err: unknown) => {
    if (!DomainError.is(err, ErrorCode.invalidSafetyState)) failureOf('safety')(err);
    // The state was minted under another secret, rule set or policy: classify the whole conversation again.
    return send(0, EMPTY).catch(failureOf('safety'));
  });
  const header = classifyHeader(deps, req, input, model);
  header.catch(() => undefined); // awaited below, after the items' verdict
  const res = await items;
  if (res.verdict === safetyV1.Verdict.VERDICT_BLOCK) throw blockedError(res, (i) => `input item ${i} was`);
  const headerVerdict = await header;
  return {
    state: ownedCopy(res.state),
    itemsSeen: res.itemsSeen,
    noticed: [...headerVerdict.noticed, ...noticed(res, 'input')],
    header: headerVerdict,
  };
}

const EMPTY = Buffer.alloc(0);

/**
 * A Classify call (its items from conversation index `firstIndex`; undefined: items already
 * checked), refused as safety would refuse it (`safety_item_too_large`, `safety_request_too_large`)
 * before it is encoded: writing megabytes of text to protobuf stalls the event loop (issue 17).
 * When its text is large, the check and the encoding (synchronous, in the call's start) are two
 * stages that take turns with the other large bodies' (see LargeBodyGate): measuring a text joined
 * from parts flattens it, a copy into fresh memory as costly as the encoding.
 */
async function gatedClassify(
  deps: TurnDeps,
  request: safetyV1.ClassifyRequest,
  firstIndex: number | undefined,
  signal?: AbortSignal,
): Promise<safetyV1.ClassifyResponse> {
  const bounds = (deps.limits ?? DEFAULT_EDGE_LIMITS).scan;
  const check = () => bounds && firstIndex !== undefined && checkScanBounds(request.items, firstIndex, bounds);
  const gate = deps.largeBodies;
  if (!gate) {
    check();
    return traced(deps.backends.classify(request, signal));
  }
  let chars = 0;
  for (const item of request.items) chars += item.text.length;
  return gate.runTwo(request.tenant, chars, check, () => traced(deps.backends.classify(request, signal)));
}

/** Marks the input Classify call made and answered (see HopTrace). */
function traced(call: Promise<safetyV1.ClassifyResponse>): Promise<safetyV1.ClassifyResponse> {
  if (!hopTrace.enabled) return call;
  hopTrace.mark('edge.classify.sent');
  return call.then((res) => {
    hopTrace.mark('edge.classify.answered');
    return res;
  });
}

/**
 * The scans of the conversation's items from `from` on: this turn's from the input stage's
 * narrowing (nothing is narrowed twice), earlier ones (the previous response's output, which the
 * model wrote and safety has not seen yet; the whole conversation when the state was refused)
 * narrowed here.
 */
function scansFrom(input: TurnInput, from: number): safetyV1.SafetyItem[] {
  const start = input.inputStart;
  const earlier = from < start ? narrowItems(input.items.slice(from, start), from, input.ctx) : [];
  const own = from <= start ? input.narrowed : input.narrowed.slice(from - start);
  return [...earlier, ...own].map(toScan);
}

export { ownedCopy } from '../safety/owned-copy';

/**
 * The header's verdict: the previous turn's when the header reads the same (the input stage
 * compared it once; nothing is flattened or hashed again), else the cached one per distinct
 * header (per tenant and canonical model, the text format's schema included), else safety's;
 * throws when it blocks.
 */
async function classifyHeader(
  deps: TurnDeps,
  req: TurnRequest,
  input: TurnInput,
  model: string,
): Promise<HeaderVerdictCarry> {
  const { body, previous } = req;
  const carried = previous?.headerVerdict;
  if (carried && input.sameHeader && carried.model === model && previous?.tenant === req.principal.tenant)
    return carried;
  const items = headerSafetyItems(body);
  const bounds = (deps.limits ?? DEFAULT_EDGE_LIMITS).scan;
  if (bounds) checkScanBounds(items, 0, bounds); // before the items are hashed for the cache's key
  if (items.length === 0) return { model, noticed: [] };
  const { tenant } = req.principal;
  const key = HeaderVerdicts.key(tenant, model, items);
  const res = await deps.headerVerdicts
    .get(key, () => gatedClassify(deps, { state: EMPTY, items, tenant, model }, undefined))
    .catch(failureOf('safety'));
  if (res.verdict === safetyV1.Verdict.VERDICT_BLOCK) throw blockedError(res, (i) => headerItemName(items, i));
  return { model, noticed: noticed(res, 'header') };
}

function headerItemName(items: readonly safetyV1.SafetyItem[], i: number): string {
  const type = items[i]?.itemType;
  if (type === 'instructions') return 'the instructions were';
  if (type === TEXT_FORMAT_ITEM) return 'the text.format schema was';
  return `tool definition ${i - (items[0].itemType === 'instructions' ? 1 : 0)} was`;
}
