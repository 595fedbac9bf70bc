import fc from 'fast-check';
import { ITEMS_PER_STEP, smallest, smallestSteps } from './hits';

describe('smallest', () => {
  const compare = (a: number, b: number) => a - b;

  it('is the k smallest in order, as sorting all of them would give', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 }), { maxLength: 200 }), fc.nat(30), (items, k) => {
        expect(smallest(items, k, compare)).toEqual([...items].sort(compare).slice(0, Math.min(k, items.length)));
      }),
    );
  });

  it('yields between steps of a long list, with the same answer', () => {
    const items = Array.from({ length: 3 * ITEMS_PER_STEP + 5 }, (_, i) => (i * 7_919) % 10_007);
    const steps = smallestSteps(items, 10, compare);
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields++;
    expect(yields).toBe(3);
    expect(step.value).toEqual(smallest(items, 10, compare));
    expect(step.value).toEqual([...items].sort(compare).slice(0, 10));
  });
});
