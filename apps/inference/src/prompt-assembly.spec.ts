import fc from 'fast-check';
import { DomainError } from '@fastloop/service-kit';
import { status } from '@grpc/grpc-js';
import { assemblePrompt, commonPrefixLength, sessionSequence } from './prompt-assembly';

const tokens = (max = 30) => fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: max });

/** The obvious O(n) definition the incremental version must agree with. */
function naiveCommonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

describe('assemblePrompt', () => {
  it('fails with a retryable prefix_miss when the session holds fewer tokens than prefix_len', () => {
    const attempt = () => assemblePrompt(Uint32Array.of(1, 2), 3, [4]);
    expect(attempt).toThrow(DomainError);
    try {
      attempt();
    } catch (err) {
      expect(err).toMatchObject({ code: 'prefix_miss', retryable: true, grpcStatus: status.FAILED_PRECONDITION });
    }
  });

  it('fails with prefix_miss when prefix_len > 0 and the session is unknown', () => {
    expect(() => assemblePrompt(undefined, 1, [4])).toThrow(expect.objectContaining({ code: 'prefix_miss' }));
  });

  it('prepends the held prefix to the new tokens', () => {
    expect(assemblePrompt(Uint32Array.of(1, 2, 3, 4), 2, [9, 8]).prompt).toEqual([1, 2, 9, 8]);
  });

  it('reports no cached tokens without a session', () => {
    expect(assemblePrompt(undefined, 0, [1, 2, 3])).toEqual({ prompt: [1, 2, 3], cachedTokens: 0 });
  });

  it('reports as cached exactly the common prefix of the new prompt and the held sequence, delta or full resend', () => {
    fc.assert(
      fc.property(tokens(), tokens(), fc.nat(), (held, tail, cut) => {
        const heldArr = Uint32Array.from(held);
        const prefixLen = held.length === 0 ? 0 : cut % (held.length + 1);
        const delta = assemblePrompt(heldArr, prefixLen, tail);
        expect(delta.prompt).toEqual([...held.slice(0, prefixLen), ...tail]);
        expect(delta.cachedTokens).toBe(naiveCommonPrefix(held, delta.prompt));
        // The same prompt sent in full (prefix_len 0) is cached exactly as much.
        const full = assemblePrompt(heldArr, 0, delta.prompt);
        expect(full).toEqual(delta);
      }),
    );
  });

  it('never fails for any prefix_len up to what the session holds', () => {
    fc.assert(
      fc.property(tokens(), tokens(), (completionPrompt, completion) => {
        const held = sessionSequence(completionPrompt, completion);
        for (let p = 0; p <= held.length; p++) expect(() => assemblePrompt(held, p, [])).not.toThrow();
        expect(() => assemblePrompt(held, held.length + 1, [])).toThrow();
      }),
    );
  });
});

describe('commonPrefixLength', () => {
  it('agrees with the naive definition from any start both sides share', () => {
    fc.assert(
      fc.property(tokens(), tokens(), fc.nat(), (a, b, f) => {
        const n = naiveCommonPrefix(a, b);
        const from = n === 0 ? 0 : f % (n + 1);
        expect(commonPrefixLength(a, b, from)).toBe(n);
      }),
    );
  });
});
