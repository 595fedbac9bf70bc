import { safetyV1 } from '@fastloop/proto';
import { safetyItemTooLarge } from './errors';
import { byItemOrder, ItemLocator, toFinding, type Hit } from './hits';
import type { Action, CompiledPolicy, PolicyBook } from './policy';
import { MAX_WINDOW, type Rule } from './rules/rule';
import { scanStream, tailOf, type StreamMatch } from './rules/stream-scan';
import { SafetyStateCodec, type BlockKey, type SafetyStateContent, type StreamState } from './safety-state';
import type { GuardJudge } from './guard/guard-judge';
import { STREAMS, streamOf, type StreamName } from './streams';

/** Options of a {@link Classifier}. */
export interface ClassifierOptions {
  /** Key for states (`SAFETY_STATE_SECRET`). */
  stateSecret: string | Buffer;
  /** Largest item text scanned, in UTF-8 bytes (`SAFETY_MAX_ITEM_BYTES`); larger items are refused. */
  maxItemBytes: number;
  /** Rules, policy lists and actions per (tenant, model). */
  policies: PolicyBook;
  /** The policy (guard) model, for policies that ask it; absent = rules only. */
  guard?: { judge: GuardJudge; failOpen: boolean };
}

type ClassifyInput = Pick<safetyV1.ClassifyRequest, 'state' | 'items'> &
  Partial<Pick<safetyV1.ClassifyRequest, 'tenant' | 'model'>>;

/** The new text of one stream in this call. */
interface StreamDelta {
  text: string;
  items: [number, number][];
}

const MAX_SCORE = 1_000_000_000;

/**
 * The incremental classifier: stateless across calls, all memory of a conversation lives in the
 * `state` the caller carries (stream tails, settled injection scores, the first blocking finding).
 *
 * Contract, proved by the fast-check properties in classifier.spec.ts: after any call, the
 * settled findings of all calls so far plus this call's provisional findings are exactly the
 * findings of one call over the whole conversation; the verdict and the state bytes are the same
 * whatever the split into calls. Work per call is O(new text + one window per stream).
 */
export class Classifier {
  private readonly codecs = new Map<string, SafetyStateCodec>();

  constructor(private readonly options: ClassifierOptions) {}

  /**
   * Classifies the new items on top of the carried state.
   * @throws DomainError `invalid_safety_state` or `safety_item_too_large` (both INVALID_ARGUMENT).
   */
  classify(request: ClassifyInput): safetyV1.ClassifyResponse {
    return this.rulesOnly(this.evaluate(request));
  }

  /**
   * {@link classify}, then, when the policy asks for it and the rules did not already block, the
   * guard model on the new items (only their tokens are sent: its session travels in the state).
   * A guard that fails blocks (fail-closed) or flags (`failOpen`).
   */
  async classifyAsync(request: ClassifyInput): Promise<safetyV1.ClassifyResponse> {
    const e = this.evaluate(request);
    const guard = this.options.guard;
    const blockedByRules =
      e.previous.block !== null || e.hits.some((h) => e.policy.actions[h.rule.category] === 'block');
    if (!guard || !e.policy.guard || blockedByRules || request.items.length === 0) return this.rulesOnly(e);
    const judged = await guard.judge.judge(request.items, e.previous.guard ?? null, request.tenant ?? '');
    const hit = guardHit(judged.verdict, guard.failOpen, e.policy.actions.policy, e.previous.itemsSeen, request.items);
    const hits = hit ? [...e.hits, hit] : e.hits;
    return this.respond(e.policy, e.codec, e.previous.block, hits, {
      ...e.next,
      ...(judged.session ? { guard: judged.session } : {}),
    });
  }

  private rulesOnly(e: ReturnType<Classifier['evaluate']>): safetyV1.ClassifyResponse {
    // The guard's session is carried unchanged (a call without new items, or already blocked).
    return this.respond(e.policy, e.codec, e.previous.block, e.hits, {
      ...e.next,
      ...(e.previous.guard ? { guard: e.previous.guard } : {}),
    });
  }

  /** Decodes the state and runs the rules over the new items. */
  private evaluate(request: ClassifyInput) {
    const policy = this.options.policies.resolve(request.tenant ?? '', request.model ?? '');
    const codec = this.codec(policy);
    const previous = codec.decode(request.state);
    request.items.forEach((item, i) => this.checkSize(item.text, previous.itemsSeen + i));

    const deltas = splitByStream(request.items, previous);
    const hits: Hit[] = [];
    const streams: Partial<Record<StreamName, StreamState>> = {};
    for (const name of STREAMS) {
      const st = SafetyStateCodec.stream(previous, name);
      const delta = deltas.get(name);
      if (st.len === 0 && !delta) continue;
      streams[name] = scanOne(policy, name, st, delta, hits);
    }
    hits.push(...itemRegexHits(policy, request.items, previous.itemsSeen));
    const itemsSeen = previous.itemsSeen + request.items.length;
    const next: SafetyStateContent = { itemsSeen, streams, block: null };
    return { policy, codec, previous, hits, next };
  }

  private respond(
    policy: CompiledPolicy,
    codec: SafetyStateCodec,
    carried: BlockKey | null,
    hits: Hit[],
    next: SafetyStateContent,
  ): safetyV1.ClassifyResponse {
    const acted = hits.filter((h) => actionOf(policy, h) !== 'allow').sort(byItemOrder);
    const blocking = (h: Hit) => actionOf(policy, h) === 'block';
    // The earliest settled blocking hit of the whole conversation: carried, or found now.
    let block: Hit | null = carried && this.carriedHit(policy, carried);
    for (const h of acted) if (!h.provisional && blocking(h) && (!block || byItemOrder(h, block) < 0)) block = h;
    let first = block;
    const firstProvisional = acted.find((h) => h.provisional && blocking(h));
    if (firstProvisional && (!first || byItemOrder(firstProvisional, first) < 0)) first = firstProvisional;

    const threshold = policy.injectionThreshold;
    const findings = acted
      .filter((h) => h !== first)
      .map((h) => toFinding(h, actionOf(policy, h) as Exclude<Action, 'allow'>, threshold));
    if (first) findings.unshift(toFinding(first, 'block', threshold));
    const blockKey: BlockKey | null = block && {
      ruleId: block.rule.id,
      itemIndex: block.itemIndex,
      start: block.start,
      ruleIndex: block.ruleIndex,
      endItemIndex: block.endItemIndex,
      end: block.end,
      score: block.score,
    };
    return {
      verdict: first ? safetyV1.Verdict.VERDICT_BLOCK : safetyV1.Verdict.VERDICT_ALLOW,
      state: codec.encode({ ...next, block: blockKey }),
      findings,
      itemsSeen: next.itemsSeen,
      windowChars: MAX_WINDOW,
    };
  }

  /** The carried first blocking finding as a hit (its rule looked up by id). */
  private carriedHit(policy: CompiledPolicy, key: BlockKey): Hit {
    const known = [...policy.rules, ...policy.injectionRules].find((r) => r.id === key.ruleId);
    const rule: Rule = known ?? {
      id: key.ruleId,
      category: 'policy',
      description: 'a pattern on the policy list',
      keywords: [],
      pattern: /$^/g,
      window: 0,
    };
    // It was carried because it blocked: it keeps blocking whatever its category's action.
    return { ...key, rule, provisional: false, action: 'block' };
  }

  private codec(policy: CompiledPolicy): SafetyStateCodec {
    let codec = this.codecs.get(policy.hash);
    if (!codec) this.codecs.set(policy.hash, (codec = new SafetyStateCodec(this.options.stateSecret, policy.hash)));
    return codec;
  }

  private checkSize(text: string, itemIndex: number): void {
    // A UTF-16 code unit is at most 3 UTF-8 bytes, so the exact O(n) count is only needed near the limit.
    if (text.length * 3 <= this.options.maxItemBytes) return;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > this.options.maxItemBytes) throw safetyItemTooLarge(itemIndex, bytes, this.options.maxItemBytes);
  }
}

/** The new items' text per stream, with each non-empty item's stream position. */
function splitByStream(
  items: readonly safetyV1.SafetyItem[],
  previous: SafetyStateContent,
): Map<StreamName, StreamDelta> {
  const deltas = new Map<StreamName, StreamDelta>();
  items.forEach((item, i) => {
    if (item.text.length === 0) return;
    const name = streamOf(item);
    let d = deltas.get(name);
    if (!d) deltas.set(name, (d = { text: '', items: [] }));
    d.items.push([previous.itemsSeen + i, SafetyStateCodec.stream(previous, name).len + d.text.length]);
    d.text += item.text;
  });
  return deltas;
}

/** Scans a stream's tail plus its new text, appending hits; returns the stream's next state. */
function scanOne(
  policy: CompiledPolicy,
  name: StreamName,
  st: StreamState,
  delta: StreamDelta | undefined,
  hits: Hit[],
): StreamState {
  const text = st.tail + (delta?.text ?? '');
  const base = st.len - st.tail.length;
  const len = base + text.length;
  const positions = delta ? [...st.items, ...delta.items] : st.items;
  const locator = new ItemLocator(positions);
  const rules = name === 'tool' ? [...policy.rules, ...policy.injectionRules] : policy.rules;
  let score = st.score;
  let crossed = st.crossed;
  let settled: [number, boolean] | undefined;
  for (const m of scanStream(text, base, rules)) {
    if (m.provisional && !settled) settled = [score, crossed];
    if (m.rule.category !== 'injection') {
      hits.push(place(m, locator, 0));
      continue;
    }
    score = Math.min(MAX_SCORE, score + (m.rule.weight ?? 0));
    if (!crossed && score >= policy.injectionThreshold) {
      crossed = true;
      hits.push(place(m, locator, score));
    }
  }
  [score, crossed] = settled ?? [score, crossed];
  const tail = tailOf(text);
  const tailStart = len - tail.length;
  let from = positions.length - 1;
  while (from > 0 && positions[from][1] > tailStart) from--;
  return { len, tail, items: tail.length === 0 ? [] : positions.slice(Math.max(from, 0)), score, crossed };
}

function place(m: StreamMatch, locator: ItemLocator, score: number): Hit {
  const [itemIndex, start] = locator.locate(m.start);
  const [endItemIndex, last] = locator.locate(m.end - 1);
  return {
    rule: m.rule,
    ruleIndex: m.ruleIndex,
    itemIndex,
    start,
    endItemIndex,
    end: last + 1,
    provisional: m.provisional,
    score,
  };
}

/** Policy regexes, matched within each new item (not across items: their window is unbounded). */
function itemRegexHits(policy: CompiledPolicy, items: readonly safetyV1.SafetyItem[], firstIndex: number): Hit[] {
  if (policy.itemRegexes.length === 0) return [];
  const offset = policy.rules.length + policy.injectionRules.length;
  const hits: Hit[] = [];
  items.forEach((item, i) => {
    policy.itemRegexes.forEach((r, k) => {
      const rule = {
        id: r.id,
        category: 'policy' as const,
        description: 'a pattern on the policy list',
        keywords: [],
        pattern: r.pattern,
        window: 0,
      };
      r.pattern.lastIndex = 0;
      for (let m = r.pattern.exec(item.text); m !== null; m = r.pattern.exec(item.text)) {
        if (m[0].length === 0) r.pattern.lastIndex++;
        const itemIndex = firstIndex + i;
        hits.push({
          rule,
          ruleIndex: offset + k,
          itemIndex,
          start: m.index,
          endItemIndex: itemIndex,
          end: m.index + m[0].length,
          provisional: false,
          score: 0,
        });
      }
    });
  });
  return hits;
}

function actionOf(policy: CompiledPolicy, hit: Hit): Action {
  return hit.action ?? policy.actions[hit.rule.category];
}

const GUARD_RULE: Rule = {
  id: 'guard-model',
  category: 'policy',
  description: 'content the policy model judged unsafe',
  keywords: [],
  pattern: /$^/g,
  window: 0,
};
const GUARD_DOWN_RULE: Rule = {
  id: 'guard-unavailable',
  category: 'policy',
  description: 'content the policy model could not judge in time',
  keywords: [],
  pattern: /$^/g,
  window: 0,
};
// After every rule: a guard finding never hides a rule's.
const GUARD_RULE_INDEX = 1_000_000;

/**
 * The guard's verdict as a hit spanning the new items, or null when it allows. An `unsafe` verdict
 * takes the `policy` category's action (block by default; redact, which has no span to mask here,
 * flags); an unavailable guard blocks unless fail-open.
 */
function guardHit(
  verdict: 'allow' | 'block' | 'unavailable',
  failOpen: boolean,
  policyAction: Action,
  first: number,
  items: readonly safetyV1.SafetyItem[],
): Hit | null {
  if (verdict === 'allow' || (verdict === 'block' && policyAction === 'allow')) return null;
  const rule = verdict === 'block' ? GUARD_RULE : GUARD_DOWN_RULE;
  const action: Action =
    verdict === 'block' ? (policyAction === 'block' ? 'block' : 'flag') : failOpen ? 'flag' : 'block';
  const last = first + items.length - 1;
  return {
    rule,
    ruleIndex: GUARD_RULE_INDEX,
    itemIndex: first,
    start: 0,
    endItemIndex: last,
    end: items[items.length - 1].text.length,
    provisional: false,
    score: 0,
    action,
  };
}
