import { safetyV1 } from '@fastloop/proto';

/** A span to mask in one item's scan text, `[start, end)` in UTF-16 code units. */
export interface Mask {
  start: number;
  end: number;
  ruleId: string;
}

/**
 * The redact findings of a verdict as masks per item, for items from `firstItem` on (earlier items
 * were already rendered, and read by the model, in an earlier turn). A span straddling items
 * masks the end of its first item, every item between, and the start of its last.
 */
export function redactionMasks(
  findings: readonly safetyV1.Finding[],
  firstItem: number,
  itemCount: number,
): Map<number, Mask[]> {
  const masks = new Map<number, Mask[]>();
  for (const f of findings) {
    if (f.action !== safetyV1.Action.ACTION_REDACT) continue;
    for (let item = Math.max(f.itemIndex, firstItem); item <= Math.min(f.endItemIndex, itemCount - 1); item++) {
      let list = masks.get(item);
      if (!list) masks.set(item, (list = []));
      list.push({
        start: item === f.itemIndex ? f.start : 0,
        end: item === f.endItemIndex ? f.end : Infinity,
        ruleId: f.ruleId,
      });
    }
  }
  return masks;
}
