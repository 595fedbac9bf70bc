import fc from 'fast-check';
import { createRandom } from '@fastloop/service-kit';
import { dueCount, nextWakeDelay, scheduleTokens, timeToFirstTokenMs } from './sim-pacing';

describe('timeToFirstTokenMs', () => {
  it('adds the prefill time of the uncached tokens to the base TTFT', () => {
    expect(timeToFirstTokenMs(20_000, { ttftMs: 50, prefillTokensPerSecond: 20_000 })).toBe(1050);
    expect(timeToFirstTokenMs(0, { ttftMs: 50, prefillTokensPerSecond: 20_000 })).toBe(50);
  });
});

describe('scheduleTokens', () => {
  it('puts the first token at the TTFT and the rest at the decode rate', () => {
    expect(Array.from(scheduleTokens(4, 1000, 50))).toEqual([50, 51, 52, 53]);
  });

  it('schedules n tokens at 4,000 tok/s to finish after ttft + (n - 1) / 4 ms', () => {
    const s = scheduleTokens(4001, 4000, 10);
    expect(s[4000]).toBeCloseTo(1010, 6);
  });

  it('is non-decreasing and keeps each jittered interval within 1 ± jitter of the nominal one', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 1, max: 10_000, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.nat(),
        (n, tps, jitter, seed) => {
          const s = scheduleTokens(n, tps, 50, jitter, createRandom(seed));
          const interval = 1000 / tps;
          expect(s[0]).toBeGreaterThanOrEqual(50 * (1 - jitter) - 1e-9);
          expect(s[0]).toBeLessThanOrEqual(50 * (1 + jitter) + 1e-9);
          for (let i = 1; i < n; i++) {
            const gap = s[i] - s[i - 1];
            expect(gap).toBeGreaterThanOrEqual(interval * (1 - jitter) - 1e-6);
            expect(gap).toBeLessThanOrEqual(interval * (1 + jitter) + 1e-6);
          }
        },
      ),
    );
  });

  it('is deterministic for a seed', () => {
    expect(scheduleTokens(10, 100, 5, 0.5, createRandom(7))).toEqual(scheduleTokens(10, 100, 5, 0.5, createRandom(7)));
  });
});

describe('dueCount and nextWakeDelay', () => {
  const schedule = scheduleTokens(100, 4000, 50); // one token every 0.25 ms

  it('sends the first token exactly when due', () => {
    expect(nextWakeDelay(schedule, 0, 10, -Infinity, 5)).toBe(40);
    expect(dueCount(schedule, 0, 50)).toBe(1);
  });

  it('batches later tokens into chunks at least one tick apart', () => {
    expect(nextWakeDelay(schedule, 1, 50, 50, 5)).toBe(5);
    expect(dueCount(schedule, 1, 55)).toBe(21); // tokens due at 50.25 .. 55.0
  });

  it('emits every token once, in order, and never before it is due, when a clock follows the wake-ups', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.double({ min: 10, max: 10_000, noNaN: true }),
        fc.double({ min: 0, max: 3, noNaN: true }),
        (n, tps, overshoot) => {
          const s = scheduleTokens(n, tps, 20);
          let now = 0;
          let next = 0;
          let last = -Infinity;
          let chunks = 0;
          while (next < n) {
            now += nextWakeDelay(s, next, now, last, 5) + overshoot; // timers fire late, never early
            const end = dueCount(s, next, now);
            for (let i = next; i < end; i++) expect(s[i]).toBeLessThanOrEqual(now);
            if (end > next) {
              if (chunks > 0) expect(now - last).toBeGreaterThanOrEqual(5 - 1e-9); // the clock sums floats
              chunks++;
              next = end;
              last = now;
            }
          }
          // Every token is sent within one tick (plus timer lateness) of being due.
          expect(last - s[n - 1]).toBeLessThanOrEqual(5 + overshoot + 1e-9);
        },
      ),
    );
  });
});
