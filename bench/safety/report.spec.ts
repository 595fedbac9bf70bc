import { parseCounter } from './prom-text';
import { spread } from './report';

describe('bench/safety report helpers', () => {
  it('takes the median and range of a sample, odd or even', () => {
    expect(spread([5, 1, 3])).toEqual({ median: 3, min: 1, max: 5 });
    expect(spread([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 });
  });

  it('reads a counter, 0 for a declared one without samples, and throws for an undeclared one', () => {
    const page =
      '# TYPE a_total counter\na_total 7\n# TYPE b_total counter\n# TYPE d_seconds histogram\nd_seconds_sum 1.5\n';
    expect(parseCounter(page, 'a_total')).toBe(7);
    expect(parseCounter(page, 'b_total')).toBe(0);
    expect(parseCounter(page, 'd_seconds_sum')).toBe(1.5);
    expect(() => parseCounter(page, 'c_total')).toThrow(/c_total is not on this page/);
  });
});
