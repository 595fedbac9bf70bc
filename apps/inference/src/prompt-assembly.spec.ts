import fc from 'fast-check';
import { DomainError } from '@fastloop/service-kit';
import { status } from '@grpc/grpc-js';
import { extendBlockHashes } from './block-hash';
import { assemblePrompt, commonPrefixLength, sessionSequence, type HeldPrefix } from './prompt-assembly';
import { SequenceLog } from './sequence-log';

const tokens = (max = 30) => fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: max, size: 'max' });

/** The obvious O(n) definition the incremental version must agree with. */
function naiveCommonPrefix(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** A held sequence without a log (as a test or an old cache entry would have it). */
const plain = (t: readonly number[]): HeldPrefix => ({
  tokens: Uint32Array.from(t),
  blockHashes: extendBlockHashes(t),
});
/** A held sequence at the tip of its own log, as the worker keeps one. */
function logged(t: readonly number[]): HeldPrefix {
  const log = new SequenceLog(undefined, 0, 4);
  log.append(t);
  return { tokens: log.tokens(), blockHashes: log.hashes(), log };
}

describe('assemblePrompt', () => {
  it('fails with a retryable prefix_miss when the session holds fewer tokens than prefix_len', () => {
    const attempt = () => assemblePrompt(plain([1, 2]), 3, [4]);
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
    expect(Array.from(assemblePrompt(plain([1, 2, 3, 4]), 2, [9, 8]).prompt)).toEqual([1, 2, 9, 8]);
  });

  it('reports no cached tokens without a session', () => {
    expect(assemblePrompt(undefined, 0, [1, 2, 3])).toMatchObject({
      prompt: Uint32Array.of(1, 2, 3),
      cachedTokens: 0,
      copied: false,
    });
  });

  it('reports as cached exactly the common prefix of the new prompt and the held sequence, delta or full resend, logged or not', () => {
    fc.assert(
      fc.property(tokens(), tokens(), fc.nat(), fc.boolean(), (held, tail, cut, withLog) => {
        const h = withLog ? logged(held) : plain(held);
        const prefixLen = held.length === 0 ? 0 : cut % (held.length + 1);
        const delta = assemblePrompt(h, prefixLen, tail);
        const expected = [...held.slice(0, prefixLen), ...tail];
        expect(Array.from(delta.prompt)).toEqual(expected);
        expect(delta.cachedTokens).toBe(naiveCommonPrefix(held, expected));
        // The prompt's hashes, extended in its log, are exactly its hashes from scratch.
        expect(Array.from(delta.log.hashes(delta.prompt.length))).toEqual(Array.from(extendBlockHashes(expected)));
        // The held view never changes, whatever was appended to its log.
        expect(Array.from(h.tokens)).toEqual(held);
        // The same prompt sent in full (prefix_len 0) is cached exactly as much.
        const full = assemblePrompt(withLog ? logged(held) : plain(held), 0, expected);
        expect(Array.from(full.prompt)).toEqual(expected);
        expect(full.cachedTokens).toBe(delta.cachedTokens);
      }),
    );
  });

  it('extends the session log in place when the prompt continues it, and copies only on a divergence or a branch', () => {
    const h = logged([1, 2, 3, 4]);
    const cont = assemblePrompt(h, 4, [5, 6]);
    expect(cont).toMatchObject({ log: h.log, copied: false, cachedTokens: 4 });
    // A second call from the same (no longer tip) view branches: a new log, the parent intact.
    const branch = assemblePrompt(h, 4, [7]);
    expect(branch.log).not.toBe(h.log);
    expect(branch.copied).toBe(true);
    expect(Array.from(branch.prompt)).toEqual([1, 2, 3, 4, 7]);
    expect(Array.from(cont.prompt)).toEqual([1, 2, 3, 4, 5, 6]);
    // A resend that diverges inside the held tokens copies the common part.
    const diverged = assemblePrompt(logged([1, 2, 3, 4]), 0, [1, 2, 9]);
    expect(diverged).toMatchObject({ copied: true, cachedTokens: 2 });
  });

  it('hashes again instead of reusing held hashes made with another salt', () => {
    const held = logged(Array.from({ length: 3 * 64 }, (_, i) => i % 7));
    const salted = assemblePrompt(held, held.tokens.length, [1, 2], undefined, 99);
    expect(salted.log).not.toBe(held.log);
    const expected = new SequenceLog(undefined, 99);
    expected.append([...held.tokens, 1, 2]);
    expect(Array.from(salted.log.hashes())).toEqual(Array.from(expected.hashes()));
  });

  it('never fails for any prefix_len up to what the session holds', () => {
    fc.assert(
      fc.property(tokens(), tokens(), (prompt, completion) => {
        const held = sessionSequence(assemblePrompt(undefined, 0, prompt), completion);
        for (let p = 0; p <= held.tokens.length; p++) expect(() => assemblePrompt(held, p, [])).not.toThrow();
        expect(() => assemblePrompt(held, held.tokens.length + 1, [])).toThrow();
      }),
    );
  });
});

describe('sessionSequence', () => {
  it('is the prompt followed by the completion, with the hashes of its full blocks, in the prompt log when it is at the tip', () => {
    fc.assert(
      fc.property(tokens(200), tokens(200), fc.boolean(), (prompt, completion, branched) => {
        const assembled = assemblePrompt(undefined, 0, prompt);
        if (branched) assembled.log.append([1]); // another call moved the tip on
        const held = sessionSequence(assembled, completion);
        expect(Array.from(held.tokens)).toEqual([...prompt, ...completion]);
        expect(Array.from(held.blockHashes)).toEqual(Array.from(extendBlockHashes([...prompt, ...completion])));
        expect(held.log === assembled.log).toBe(!branched);
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
