import { safetyV1 } from '@fastloop/proto';
import { safetyItemTooLarge } from './errors';
import { RULES, RULESET_REVISION, hashRules, type SafetyRule } from './rules';
import { SafetyStateCodec } from './safety-state';
import { findingMessage, scanItems, type RuleMatch } from './scan';

/** Options of a {@link Classifier}. */
export interface ClassifierOptions {
  /** HMAC key for states (`SAFETY_STATE_SECRET`). */
  stateSecret: string | Buffer;
  /** Largest item text scanned, in UTF-8 bytes (`SAFETY_MAX_ITEM_BYTES`); larger items are refused. */
  maxItemBytes: number;
  /** Rule set; default {@link RULES}. Tests pass others. */
  rules?: readonly SafetyRule[];
  /** Manual revision mixed into the rule-set hash; default {@link RULESET_REVISION}. */
  rulesetRevision?: number;
}

/**
 * The incremental classifier: stateless across calls, all memory of a conversation lives in the
 * `state` the caller carries.
 *
 * Response contract (identical whether a conversation is classified in one call or turn by turn):
 * - `verdict` is BLOCK iff any item of the whole conversation matched a rule;
 * - `itemsSeen` and `state` (byte for byte) depend only on the items, not on how they were split;
 * - `findings[0]`, when present, is the conversation's first match (earliest item, then rule
 *   order) — show this one to users; it is the same on both paths;
 * - the remaining findings are this call's own matches (for logs and metrics), so the findings of
 *   all calls of a conversation, without the repeated first one, are exactly the findings of a
 *   single call over all items.
 */
export class Classifier {
  private readonly rules: readonly SafetyRule[];
  private readonly rulesById: ReadonlyMap<string, SafetyRule>;
  private readonly codec: SafetyStateCodec;
  private readonly maxItemBytes: number;

  constructor(options: ClassifierOptions) {
    this.rules = options.rules ?? RULES;
    this.rulesById = new Map(this.rules.map((r) => [r.id, r]));
    this.codec = new SafetyStateCodec(options.stateSecret, hashRules(this.rules, options.rulesetRevision ?? RULESET_REVISION));
    this.maxItemBytes = options.maxItemBytes;
  }

  /**
   * Classifies the new items on top of the carried state.
   * @throws DomainError `invalid_safety_state` or `safety_item_too_large` (both INVALID_ARGUMENT).
   */
  classify(request: Pick<safetyV1.ClassifyRequest, 'state' | 'items'>): safetyV1.ClassifyResponse {
    const previous = this.codec.decode(request.state);
    request.items.forEach((item, i) => this.checkSize(item.text, previous.itemsSeen + i));
    const matches = scanItems(request.items, previous.itemsSeen, this.rules);
    const first = previous.firstFinding ?? matches[0] ?? null;
    const itemsSeen = previous.itemsSeen + request.items.length;
    const reported = previous.firstFinding ? [previous.firstFinding, ...matches] : matches;
    return {
      verdict: first ? safetyV1.Verdict.VERDICT_BLOCK : safetyV1.Verdict.VERDICT_ALLOW,
      state: this.codec.encode({ itemsSeen, firstFinding: first }),
      findings: reported.map((m) => this.toFinding(m)),
      itemsSeen,
    };
  }

  private checkSize(text: string, itemIndex: number): void {
    // A UTF-16 code unit is at most 3 UTF-8 bytes, so the exact O(n) count is only needed for
    // texts near the limit.
    if (text.length * 3 <= this.maxItemBytes) return;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > this.maxItemBytes) throw safetyItemTooLarge(itemIndex, bytes, this.maxItemBytes);
  }

  private toFinding(match: RuleMatch): safetyV1.Finding {
    return { ruleId: match.ruleId, itemIndex: match.itemIndex, message: findingMessage(match, this.rulesById.get(match.ruleId)) };
  }
}
