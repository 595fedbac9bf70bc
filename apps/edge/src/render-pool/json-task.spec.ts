import fc from 'fast-check';
import { checkRequestLimits, DEFAULT_REQUEST_LIMITS } from '@fastloop/protocol';
import { loadEdgeConfig } from '../config';
import { cutDeeperThan, MAX_SERIALIZED_DEPTH } from './json-task';

/** What a client sees of a validation: nothing, or the error's fields. */
const answer = (body: unknown, maxJsonDepth: number) => {
  const error = checkRequestLimits(body, { ...DEFAULT_REQUEST_LIMITS, maxJsonDepth });
  return error && { status: error.status, code: error.code, param: error.param, message: error.message };
};

const depthOf = (value: unknown): number => {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
};

describe('a value cut at a depth', () => {
  it('answers every validation with a lower nesting bound as the whole value does', () => {
    let cut = 0;
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 12, depthSize: 'large' }),
        fc.integer({ min: 2, max: 10 }),
        fc.integer({ min: 1, max: 9 }),
        (whole, levels, bound) => {
          fc.pre(bound < levels);
          const value = structuredClone(whole);
          cutDeeperThan(value, levels);
          expect(depthOf(value)).toBeLessThanOrEqual(levels);
          if (depthOf(whole) <= levels) expect(value).toEqual(whole);
          else cut++;
          expect(answer(value, bound)).toEqual(answer(whole, bound));
        },
      ),
      { numRuns: 500 },
    );
    expect(cut).toBeGreaterThan(0); // the property saw values it had to cut
  });

  it('lies beyond any nesting bound the edge accepts', () => {
    const config = (depth: number) => loadEdgeConfig({ FASTLOOP_API_KEYS: 'k', EDGE_MAX_JSON_DEPTH: String(depth) });
    expect(config(MAX_SERIALIZED_DEPTH - 1).EDGE_MAX_JSON_DEPTH).toBe(MAX_SERIALIZED_DEPTH - 1);
    expect(() => config(MAX_SERIALIZED_DEPTH)).toThrow(/EDGE_MAX_JSON_DEPTH/);
  });
});
