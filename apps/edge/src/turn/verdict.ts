import { safetyV1 } from '@fastloop/proto';
import { DomainError, ErrorCode } from '@fastloop/service-kit';
import { failureOf } from '../api-errors';
import { headerSafetyItems, TEXT_FORMAT_ITEM } from '../safety/header-items';
import { HeaderVerdicts } from '../safety/header-verdicts';
import { blockedError, noticed, type NoticedFinding } from '../safety/safety-findings';
import type { RouteDecision } from './conversation-state';
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
   * @param now ask at once (the verdict gates Generate: its round trip runs beside rendering).
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
  const header = classifyHeader(deps, req, model);
  header.catch(() => undefined); // awaited below, after the items' verdict
  const prev = req.previous;
  const request = (from: number, state: Buffer) => ({
    state,
    items: scansFrom(input, from),
    tenant: req.principal.tenant,
    model,
  });
  const res = await deps.backends
    .classify(request(prev ? prev.safetyItems : 0, prev ? prev.safetyState : EMPTY), req.signal)
    .catch((err: unknown) => {
      if (!DomainError.is(err, ErrorCode.invalidSafetyState)) failureOf('safety')(err);
      // The state was minted under another secret, rule set or policy: classify the whole conversation again.
      return deps.backends.classify(request(0, EMPTY), req.signal).catch(failureOf('safety'));
    });
  if (res.verdict === safetyV1.Verdict.VERDICT_BLOCK) throw blockedError(res, (i) => `input item ${i} was`);
  const headerNoticed = await header;
  return {
    state: ownedCopy(res.state),
    itemsSeen: res.itemsSeen,
    noticed: [...headerNoticed, ...noticed(res, 'input')],
  };
}

const EMPTY = Buffer.alloc(0);

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
 * The header's verdict (cached per tenant, canonical model and distinct header: the text format's
 * schema included); throws when it blocks.
 */
async function classifyHeader(deps: TurnDeps, req: TurnRequest, model: string): Promise<NoticedFinding[]> {
  const items = headerSafetyItems(req.body);
  if (items.length === 0) return [];
  const { tenant } = req.principal;
  const key = HeaderVerdicts.key(tenant, model, items);
  const res = await deps.headerVerdicts
    .get(key, () => deps.backends.classify({ state: EMPTY, items, tenant, model }))
    .catch(failureOf('safety'));
  if (res.verdict === safetyV1.Verdict.VERDICT_BLOCK) throw blockedError(res, (i) => headerItemName(items, i));
  return noticed(res, 'header');
}

function headerItemName(items: readonly safetyV1.SafetyItem[], i: number): string {
  const type = items[i]?.itemType;
  if (type === 'instructions') return 'the instructions were';
  if (type === TEXT_FORMAT_ITEM) return 'the text.format schema was';
  return `tool definition ${i - (items[0].itemType === 'instructions' ? 1 : 0)} was`;
}
