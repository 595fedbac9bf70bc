import { SimPrefillQueue } from './sim-prefill-queue';

describe('SimPrefillQueue', () => {
  it('prefills calls one after another at the accelerator rate', () => {
    const q = new SimPrefillQueue(1_000); // 1 token per ms
    expect(q.reserve(100, 0)).toBe(100);
    expect(q.reserve(50, 10)).toBe(140); // waits for the first (done at 100), then 50 ms
    expect(q.backlogMs(20)).toBe(130);
  });

  it('starts at once on an idle accelerator', () => {
    const q = new SimPrefillQueue(2_000);
    q.reserve(100, 0); // done at 50
    expect(q.reserve(100, 500)).toBe(50);
    expect(q.backlogMs(1_000)).toBe(0);
  });
});
