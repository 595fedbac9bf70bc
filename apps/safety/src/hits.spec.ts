import fc from 'fast-check';
import { ITEMS_PER_STEP, smallestSteps } from './hits';

/** smallestSteps run to its end: the answer and how often it yielded. */
function smallest<T>(items: readonly T[], k: number, compare: (a: T, b: T) => number): T[] {
  return run(smallestSteps(items, k, compare)).value;
}
function run<T>(steps: Generator<void, T, void>): { value: T; yields: number } {
  let yields = 0;
  for (let step = steps.next(); ; step = steps.next(), yields++) if (step.done) return { value: step.value, yields };
}

describe('smallestSteps', () => {
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
    const { value, yields } = run(smallestSteps(items, 10, compare));
    expect(yields).toBe(3);
    expect(value).toEqual([...items].sort(compare).slice(0, 10));
  });
});
