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
  const add = (item: number, mask: Mask) => {
    if (item < firstItem || item >= itemCount) return;
    const list = masks.get(item) ?? [];
    list.push(mask);
    masks.set(item, list);
  };
  for (const f of findings) {
    if (f.action !== safetyV1.Action.ACTION_REDACT) continue;
    for (let item = f.itemIndex; item <= f.endItemIndex; item++) {
      add(item, {
        start: item === f.itemIndex ? f.start : 0,
        end: item === f.endItemIndex ? f.end : Infinity,
        ruleId: f.ruleId,
      });
    }
  }
  return masks;
}
