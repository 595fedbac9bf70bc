import { inferenceV1 } from '@fastloop/proto';
import { effectiveMaxOutputTokens, limitChunk } from './completion-limits';

const { FinishReason } = inferenceV1;
const stops = new Set([99]);

describe('limitChunk', () => {
  it('passes a chunk through while under the limit and before any stop token', () => {
    expect(limitChunk([1, 2, 3], 0, 10, stops)).toEqual({ tokens: [1, 2, 3] });
  });

  it('ends with STOP at a stop token, which is sent as the last token', () => {
    expect(limitChunk([1, 99, 3], 0, 10, stops)).toEqual({ tokens: [1, 99], finish: FinishReason.FINISH_REASON_STOP });
  });

  it('ends with LENGTH when the token limit is reached', () => {
    expect(limitChunk([1, 2, 3], 8, 10, stops)).toEqual({ tokens: [1, 2], finish: FinishReason.FINISH_REASON_LENGTH });
  });

  it('prefers STOP when the stop token is exactly the last allowed token', () => {
    expect(limitChunk([1, 99], 8, 10, stops)).toEqual({ tokens: [1, 99], finish: FinishReason.FINISH_REASON_STOP });
  });
});

describe('effectiveMaxOutputTokens', () => {
  it('uses the worker cap when the request leaves it unset (0) or asks for more', () => {
    expect(effectiveMaxOutputTokens(0, 100)).toBe(100);
    expect(effectiveMaxOutputTokens(500, 100)).toBe(100);
    expect(effectiveMaxOutputTokens(5, 100)).toBe(5);
  });
});
