import { safetyV1 } from '@fastloop/proto';
import type { Action } from './policy';
import type { Rule } from './rules/rule';

/** A match placed on items: what becomes a Finding once its action is known. */
export interface Hit {
  readonly rule: Rule;
  /** Global rule order (windowed rules, then injection rules, then per-item regexes). */
  readonly ruleIndex: number;
  readonly itemIndex: number;
  readonly start: number;
  readonly endItemIndex: number;
  readonly end: number;
  readonly provisional: boolean;
  readonly score: number;
  /** An action that does not come from the category's (the guard's verdicts). */
  readonly action?: Action;
}

/** Canonical report order: item, offset in the item, rule order. */
export function byItemOrder(
  a: Pick<Hit, 'itemIndex' | 'start' | 'ruleIndex'>,
  b: Pick<Hit, 'itemIndex' | 'start' | 'ruleIndex'>,
): number {
  return a.itemIndex - b.itemIndex || a.start - b.start || a.ruleIndex - b.ruleIndex;
}

/**
 * The `k` smallest of `items` by `compare`, in order (all of them when there are fewer): a bounded
 * max-heap, O(n log k) instead of sorting all n.
 * Yields after every {@link ITEMS_PER_STEP} items: a caller may pause there.
 */
export function* smallestSteps<T>(
  items: readonly T[],
  k: number,
  compare: (a: T, b: T) => number,
): Generator<void, T[], void> {
  if (items.length <= k) return [...items].sort(compare);
  const heap: T[] = [];
  const down = (at: number): void => {
    for (;;) {
      const left = 2 * at + 1;
      if (left >= heap.length) return;
      const child = left + 1 < heap.length && compare(heap[left + 1], heap[left]) > 0 ? left + 1 : left;
      if (compare(heap[child], heap[at]) <= 0) return;
      [heap[at], heap[child]] = [heap[child], heap[at]];
      at = child;
    }
  };
  for (let i = 0; i < items.length; i++) {
    if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
    const item = items[i];
    if (heap.length < k) {
      heap.push(item);
      for (let at = heap.length - 1; at > 0;) {
        const parent = (at - 1) >> 1;
        if (compare(heap[at], heap[parent]) <= 0) break;
        [heap[at], heap[parent]] = [heap[parent], heap[at]];
        at = parent;
      }
    } else if (k > 0 && compare(item, heap[0]) < 0) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort(compare);
}

/** Items a step of {@link smallestSteps} (or another pass over hits) handles: well under a millisecond. */
export const ITEMS_PER_STEP = 4_096;

/**
 * Places stream positions on items. `items` are `[item index, stream position]` of the non-empty
 * items covering the positions asked about, in order.
 */
export class ItemLocator {
  constructor(private readonly items: readonly (readonly [number, number])[]) {}

  /** The item holding stream position `pos`, and `pos`'s offset in it. */
  locate(pos: number): [number, number] {
    let lo = 0;
    let hi = this.items.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.items[mid][1] <= pos) lo = mid;
      else hi = mid - 1;
    }
    const [index, at] = this.items[lo];
    return [index, pos - at];
  }
}

const CATEGORY: Record<Rule['category'], safetyV1.Category> = {
  secret: safetyV1.Category.CATEGORY_SECRET,
  injection: safetyV1.Category.CATEGORY_INJECTION,
  policy: safetyV1.Category.CATEGORY_POLICY,
};

const ACTION: Record<Exclude<Action, 'allow'>, safetyV1.Action> = {
  flag: safetyV1.Action.ACTION_FLAG,
  redact: safetyV1.Action.ACTION_REDACT,
  block: safetyV1.Action.ACTION_BLOCK,
};

/** The wire finding of a hit. Its message is built from the rule's description only. */
export function toFinding(hit: Hit, action: Exclude<Action, 'allow'>, threshold: number): safetyV1.Finding {
  return {
    ruleId: hit.rule.id,
    itemIndex: hit.itemIndex,
    message: findingMessage(hit, threshold),
    category: CATEGORY[hit.rule.category],
    action: ACTION[action],
    start: hit.start,
    endItemIndex: hit.endItemIndex,
    end: hit.end,
    score: hit.score,
    provisional: hit.provisional,
  };
}

function findingMessage(hit: Hit, threshold: number): string {
  const where =
    hit.endItemIndex === hit.itemIndex
      ? `Item ${hit.itemIndex} (characters ${hit.start}–${hit.end})`
      : `Items ${hit.itemIndex}–${hit.endItemIndex} (from character ${hit.start} to ${hit.end})`;
  if (hit.rule.category === 'injection') {
    return `${where} brings the prompt-injection score of untrusted content to ${hit.score} (threshold ${threshold}); last signal: ${hit.rule.description} (rule ${hit.rule.id}).`;
  }
  return `${where} contains what looks like ${hit.rule.description} (rule ${hit.rule.id}); the value is not shown.`;
}
