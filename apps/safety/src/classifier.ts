import { safetyV1 } from '@fastloop/proto';
import { checkScanBounds } from '@fastloop/service-kit';
import { invalidSafetyState } from './errors';
import { byItemOrder, ItemLocator, ITEMS_PER_STEP, smallestSteps, toFinding, type Hit } from './hits';
import type { Action, CompiledPolicy, PolicyBook } from './policy';
import { MAX_WINDOW, type Rule } from './rules/rule';
import { codePointEnd, normalise, type TextView } from './rules/normalise';
import { outputFrontier } from './rules/output-frontier';
import { scanStreamSteps, tailOf, type StreamMatch } from './rules/stream-scan';
import { SafetyStateCodec, type BlockKey, type SafetyStateContent, type StreamState } from './safety-state';
import type { GuardJudge } from './guard/guard-judge';
import { STREAMS, streamOf, type StreamName } from './streams';

/** Options of a {@link Classifier}. */
export interface ClassifierOptions {
  /** Key for states (`SAFETY_STATE_SECRET`). */
  stateSecret: string | Buffer;
  /** Largest item text scanned, in UTF-8 bytes (`SAFETY_MAX_ITEM_BYTES`); larger items are refused. */
  maxItemBytes: number;
  /** Largest total of item text in one call, in UTF-8 bytes (`SAFETY_MAX_REQUEST_BYTES`; default: no bound). */
  maxRequestBytes?: number;
  /**
   * Most findings one response lists (`SAFETY_MAX_FINDINGS`; default: all). The blocking finding
   * stays first; the rest are the earliest, and `findingsOmitted` counts the others.
   */
  maxFindings?: number;
  /** Characters scanned in one step of {@link Classifier.classifyAsync} (default 4,096). */
  sliceChars?: number;
  /**
   * Work between two pauses of {@link Classifier.classifyAsync}, in ms (default 2): steps are
   * small, and a pause comes once this much time has gone since the last one. Frequent pauses also
   * keep the service reading its sockets: HTTP/2 lets a peer send only a window (64 KiB) ahead of
   * what the server has read, so every other call's bytes on the connection wait for those reads.
   */
  pauseAfterMs?: number;
  /** Rules, policy lists and actions per (tenant, model). */
  policies: PolicyBook;
  /** The policy (guard) model, for policies that ask it; absent = rules only. */
  guard?: { judge: GuardJudge; failOpen: boolean };
}

type ClassifyInput = Pick<safetyV1.ClassifyRequest, 'state' | 'items'> &
  Partial<Pick<safetyV1.ClassifyRequest, 'tenant' | 'model' | 'output'>>;

/** How {@link Classifier.classifyAsync} shares the process while it scans. */
export interface ClassifyScheduling {
  /** Awaited between slices of scanning: the service lets other tenants' calls run there. */
  pause?: () => Promise<void>;
  /** Called once the rules are done, before waiting on the guard model (no CPU is used meanwhile). */
  rulesDone?: () => void;
  /** A moderation session's state, kept decoded between its batches ({@link HeldState}). */
  held?: HeldState;
}

/**
 * A conversation's state kept in memory by its caller (a moderation session) instead of carried
 * as bytes: `previous`, when set, is used instead of decoding the request's state, and `keep`, when
 * set, receives the next state instead of it being encoded (the answer's `state` is then empty).
 * The content is what the bytes would carry (decode(encode(x)) equals x), so the answers are the
 * same; a session saves a decode and an encode (a MAC and a cipher each way) per batch.
 */
export interface HeldState {
  previous?: { policyHash: string; content: SafetyStateContent };
  keep?: (next: { policyHash: string; content: SafetyStateContent }) => void;
}

/** One step of the rules' scan; the classifier pauses between steps when asked to. */
type Steps<T> = Generator<void, T, void>;

/** Runs steps to the end without pausing. */
function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Findings beyond {@link ClassifierOptions.maxFindings} that were to be masked: the call blocks instead. */
const REDACTION_OVERFLOW_RULE: Rule = {
  id: 'too-many-redactions',
  category: 'policy',
  description: 'more values to mask than one response can list',
  keywords: [],
  pattern: /$^/g,
  window: 0,
};

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
    return runSteps(this.rulesOnly(runSteps(this.evaluate(request))));
  }

  /**
   * {@link classify}, then, when the policy asks for it and the rules did not already block, the
   * guard model on the new items (only their tokens are sent: its session travels in the state).
   * A guard that fails blocks (fail-closed) or flags (`failOpen`). The scan and the answer (a wall
   * of keys has ~150,000 hits to rank) run in steps, pausing between them when asked to.
   */
  async classifyAsync(request: ClassifyInput, scheduling: ClassifyScheduling = {}): Promise<safetyV1.ClassifyResponse> {
    const e = await this.stepped(this.evaluate(request, scheduling.held), scheduling);
    const guard = this.options.guard;
    const blockedByRules =
      e.previous.block !== null || e.hits.some((h) => e.policy.actions[h.rule.category] === 'block');
    if (!guard || !e.policy.guard || blockedByRules || request.items.length === 0)
      return this.stepped(this.rulesOnly(e), scheduling);
    scheduling.rulesDone?.();
    const judged = await guard.judge.judge(request.items, e.previous.guard ?? null, request.tenant ?? '');
    const hit = guardHit(judged.verdict, guard.failOpen, e.policy.actions.policy, e.previous.itemsSeen, request.items);
    const hits = hit ? [...e.hits, hit] : e.hits;
    const next = { ...e.next, ...(judged.session ? { guard: judged.session } : {}) };
    return this.stepped(this.respond(e, hits, next), scheduling);
  }

  /** Runs `steps`, pausing between two once a pause's worth of work has run since the last. */
  private async stepped<T>(steps: Steps<T>, scheduling: ClassifyScheduling): Promise<T> {
    const pauseAfter = this.options.pauseAfterMs ?? DEFAULT_PAUSE_AFTER_MS;
    let lastPause = performance.now();
    let step = steps.next();
    while (!step.done) {
      if (scheduling.pause && performance.now() - lastPause >= pauseAfter) {
        await scheduling.pause();
        lastPause = performance.now();
      }
      step = steps.next();
    }
    return step.value;
  }

  private rulesOnly(e: Evaluation): Steps<safetyV1.ClassifyResponse> {
    // The guard's session is carried unchanged (a call without new items, or already blocked).
    return this.respond(e, e.hits, {
      ...e.next,
      ...(e.previous.guard ? { guard: e.previous.guard } : {}),
    });
  }

  /**
   * Decodes the state and runs the rules over the new items, in steps (slices of scanning). Sizes
   * are checked first: an oversized call is refused before any scanning.
   */
  private *evaluate(request: ClassifyInput, held?: HeldState): Steps<Evaluation> {
    const policy = this.options.policies.resolve(request.tenant ?? '', request.model ?? '');
    const codec = this.codec(policy);
    // A held state vouches for its policy as the bytes' MAC does: refused under another.
    if (held?.previous && held.previous.policyHash !== policy.hash)
      throw invalidSafetyState('made under a different rule set or policy');
    const previous = held?.previous?.content ?? codec.decode(request.state);
    this.checkSizes(request.items, previous.itemsSeen);

    const deltas = splitByStream(request.items, previous);
    const hits: Hit[] = [];
    const streams: Partial<Record<StreamName, StreamState>> = {};
    const sliceChars = this.options.sliceChars ?? DEFAULT_SLICE_CHARS;
    const output = request.output
      ? { final: request.output.final, heldBefore: request.output.heldBefore, heldChars: 0 }
      : undefined;
    for (const name of STREAMS) {
      const st = SafetyStateCodec.stream(previous, name);
      const delta = deltas.get(name);
      if (st.len === 0 && !delta) continue;
      // Output moderation adds to the model stream only: the others' tails were judged by the input's call.
      if (output && name !== 'model' && !delta) {
        streams[name] = st;
        continue;
      }
      const moderated = name === 'model' ? output : undefined;
      streams[name] = yield* scanOne({ policy, name, st, delta, hits, sliceChars, output: moderated });
    }
    hits.push(...(yield* itemRegexHits(policy, request.items, previous.itemsSeen)));
    // Output batches are not conversation items: the caller sends the output again as the items
    // it becomes, so the state goes on from here (the guard's session too) with the same count.
    const itemsSeen = previous.itemsSeen + (output ? 0 : request.items.length);
    const next: SafetyStateContent = { itemsSeen, streams, block: null };
    return { policy, codec, previous, hits, next, heldChars: output?.heldChars, keep: held?.keep };
  }

  private *respond(e: Evaluation, hits: Hit[], next: SafetyStateContent): Steps<safetyV1.ClassifyResponse> {
    const { policy, codec } = e;
    const carried = e.previous.block;
    const acted: Hit[] = [];
    let redactions = 0;
    // The earliest settled blocking hit of the whole conversation: carried, or found now.
    let block: Hit | null = carried && this.carriedHit(policy, carried);
    let firstProvisional: Hit | undefined;
    for (let i = 0; i < hits.length; i++) {
      if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
      const h = hits[i];
      const action = actionOf(policy, h);
      if (action === 'allow') continue;
      acted.push(h);
      if (action === 'redact') redactions++;
      if (action !== 'block') continue;
      if (!h.provisional && (!block || byItemOrder(h, block) < 0)) block = h;
      if (h.provisional && (!firstProvisional || byItemOrder(h, firstProvisional) < 0)) firstProvisional = h;
    }
    let first = block;
    if (firstProvisional && (!first || byItemOrder(firstProvisional, first) < 0)) first = firstProvisional;

    const threshold = policy.injectionThreshold;
    let others = acted;
    if (first) {
      others = [];
      for (let i = 0; i < acted.length; i++) {
        if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
        if (acted[i] !== first) others.push(acted[i]);
      }
    }
    const room = Math.max(0, (this.options.maxFindings ?? Number.POSITIVE_INFINITY) - (first ? 1 : 0));
    // Only the listed findings (and the first left out) are put in order: a wall of keys has
    // ~150,000 hits, and sorting them all was most of a call's time after the scan.
    const listed = yield* smallestSteps(others, room + 1, byItemOrder);
    const omitted = Math.max(0, others.length - room);
    // Masks the caller cannot see would let those values through: refuse instead. (`first` blocks,
    // so every redaction is among `others`.)
    if (!first && omitted > 0) {
      const listedRedactions = listed.slice(0, room).filter((h) => actionOf(policy, h) === 'redact').length;
      if (redactions > listedRedactions) first = redactionOverflow(listed[room]);
    }
    const findings = listed
      .slice(0, room)
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
      // A blocking answer ends a session: its state goes in the answer, as a Classify call's would.
      state: keepOrEncode(e, { ...next, block: blockKey }, first !== null),
      findings,
      itemsSeen: next.itemsSeen,
      windowChars: MAX_WINDOW,
      ...(omitted > 0 ? { findingsOmitted: omitted } : {}),
      ...(e.heldChars !== undefined ? { heldChars: e.heldChars } : {}),
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

  /** Refuses an item over `maxItemBytes` or a call over `maxRequestBytes`, before anything is scanned. */
  private checkSizes(items: readonly safetyV1.SafetyItem[], firstIndex: number): void {
    checkScanBounds(items, firstIndex, this.options);
  }
}

/** What the rules found, before the guard model and before the response is built. */
interface Evaluation {
  /** {@link HeldState.keep}: the next state goes there instead of into the answer's bytes. */
  keep?: HeldState['keep'];
  policy: CompiledPolicy;
  codec: SafetyStateCodec;
  previous: SafetyStateContent;
  hits: Hit[];
  next: SafetyStateContent;
  /** Output moderation: characters at the end of the model stream still held. */
  heldChars?: number;
}

const NO_STATE = Buffer.alloc(0);

function keepOrEncode(e: Evaluation, content: SafetyStateContent, blocks: boolean): Buffer {
  if (!e.keep || blocks) return e.codec.encode(content);
  e.keep({ policyHash: e.policy.hash, content });
  return NO_STATE;
}

/** Matches placed on items between two pauses (a few ms of work). */
const PLACE_BETWEEN_PAUSES = 2_048;

/** See {@link ClassifierOptions.sliceChars}: ~0.4-1.5 ms of scanning on the dev machine (90-380 ms per MB). */
const DEFAULT_SLICE_CHARS = 4_096;
/** See {@link ClassifierOptions.pauseAfterMs}. */
const DEFAULT_PAUSE_AFTER_MS = 2;

/** The blocking finding of a call whose masks do not all fit in one response, placed at the first one left out. */
function redactionOverflow(at: Hit): Hit {
  return {
    ...at,
    rule: REDACTION_OVERFLOW_RULE,
    ruleIndex: GUARD_RULE_INDEX + 1,
    provisional: false,
    action: 'block',
    score: 0,
  };
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

/** What {@link scanOne} scans, and where its hits go. */
interface StreamScan {
  policy: CompiledPolicy;
  name: StreamName;
  st: StreamState;
  delta: StreamDelta | undefined;
  hits: Hit[];
  sliceChars: number;
  /** The model stream of an output-moderation call: gets its held characters. */
  output?: { final: boolean; heldBefore?: number; heldChars: number };
}

const toolRules = new WeakMap<CompiledPolicy, readonly Rule[]>();

/** The rules a tool stream is scanned with: one list per policy, so its keyword index is built once. */
function toolRulesOf(policy: CompiledPolicy): readonly Rule[] {
  let rules = toolRules.get(policy);
  if (!rules) {
    rules = [...policy.rules, ...policy.injectionRules];
    toolRules.set(policy, rules);
  }
  return rules;
}

const blockingRules = new WeakMap<CompiledPolicy, Map<readonly Rule[], readonly Rule[]>>();

/** The rules of `rules` whose matches block under `policy`: one list per policy, so its frontier index is built once. */
function blockingOf(policy: CompiledPolicy, rules: readonly Rule[]): readonly Rule[] {
  let lists = blockingRules.get(policy);
  if (!lists) blockingRules.set(policy, (lists = new Map()));
  let blocking = lists.get(rules);
  if (!blocking) {
    blocking = rules.filter((r) => policy.actions[r.category] === 'block');
    lists.set(rules, blocking);
  }
  return blocking;
}

/**
 * Scans a stream's tail plus its new text, appending hits; returns the stream's next state. Output
 * still streaming: a match that text to come can still change (it reads past the end) is left out
 * (reported once settled, or by the final call), and its start is held with every other start a
 * blocking rule could still match at ({@link outputFrontier}).
 */
function* scanOne(scan: StreamScan): Steps<StreamState> {
  const { policy, name, st, delta, hits, sliceChars, output } = scan;
  const text = st.tail + (delta?.text ?? '');
  const base = st.len - st.tail.length;
  const len = base + text.length;
  const positions = delta ? [...st.items, ...delta.items] : st.items;
  const locator = new ItemLocator(positions);
  const rules = name === 'tool' ? toolRulesOf(policy) : policy.rules;
  let score = st.score;
  let crossed = st.crossed;
  let settled: [number, boolean] | undefined;
  let placed = 0;
  const streaming = output !== undefined && !output.final;
  for (const m of yield* scanStreamSteps(text, base, rules, sliceChars)) {
    if (streaming && m.fixedAt > len) continue;
    // Placing ~150,000 matches of a wall of keys is ~100 ms: pause in between, as the scan does.
    if (++placed % PLACE_BETWEEN_PAUSES === 0) yield;
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
  if (streaming) {
    const blocking = blockingOf(policy, rules);
    // The previous frontier in `text` (each rule starts its lead before it).
    const before = output.heldBefore;
    const from = before === undefined ? 0 : text.length - (delta?.text.length ?? 0) - before;
    output.heldChars = len - outputFrontier(text, base, blocking, Math.max(0, from));
  }
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
function* itemRegexHits(
  policy: CompiledPolicy,
  items: readonly safetyV1.SafetyItem[],
  firstIndex: number,
): Steps<Hit[]> {
  if (policy.itemRegexes.length === 0) return [];
  const offset = policy.rules.length + policy.injectionRules.length;
  const hits: Hit[] = [];
  for (const [i, item] of items.entries()) {
    if (i > 0) yield;
    // Matched on what the model reads, as the windowed rules are (rules/normalise.ts).
    const view = normalise(item.text);
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
      for (let m = r.pattern.exec(view.text); m !== null; m = r.pattern.exec(view.text)) {
        if (m[0].length === 0) r.pattern.lastIndex++;
        const itemIndex = firstIndex + i;
        const [start, end] = placeInItem(item.text, view, m.index, m[0].length);
        hits.push({
          rule,
          ruleIndex: offset + k,
          itemIndex,
          start,
          endItemIndex: itemIndex,
          end,
          provisional: false,
          score: 0,
        });
      }
    });
  }
  return hits;
}

/** A match `[index, index + length)` of an item's view, as a span of the item's text. */
function placeInItem(text: string, view: TextView, index: number, length: number): [number, number] {
  if (view.at === null) return [index, index + length];
  const start = view.at[index];
  return [start, length === 0 ? start : codePointEnd(text, view.at[index + length - 1])];
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
