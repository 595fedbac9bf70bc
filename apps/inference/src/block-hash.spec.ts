import fc from 'fast-check';
import { chainBlockHash, extendBlockHashes, fullBlocks, PREFIX_BLOCK_TOKENS as B } from './block-hash';

const tokens = (maxLength: number) => fc.array(fc.integer({ min: 0, max: 3 }), { maxLength });

describe('extendBlockHashes', () => {
  it('hashes only full blocks', () => {
    expect(extendBlockHashes(new Array(B - 1).fill(1))).toHaveLength(0);
    expect(extendBlockHashes(new Array(3 * B + 5).fill(1))).toHaveLength(3);
    expect(fullBlocks(2 * B)).toBe(2);
  });

  it('gives the same hashes when extending known ones as when hashing from scratch', () => {
    fc.assert(
      fc.property(tokens(6 * B), tokens(3 * B), fc.nat(), (base, more, cut) => {
        const known = extendBlockHashes(base);
        const reuse = cut % (known.length + 1);
        const extended = [...base, ...more];
        expect(Array.from(extendBlockHashes(extended, known, reuse))).toEqual(Array.from(extendBlockHashes(extended)));
        // Reusing hashes of the sequence itself from a Uint32Array agrees too.
        expect(Array.from(extendBlockHashes(Uint32Array.from(extended), known))).toEqual(
          Array.from(extendBlockHashes(extended)),
        );
      }),
    );
  });

  it('chains: an equal block after a different prefix hashes differently', () => {
    const block = new Array(B).fill(5);
    const a = extendBlockHashes([...new Array(B).fill(1), ...block]);
    const b = extendBlockHashes([...new Array(B).fill(2), ...block]);
    expect(a[1]).not.toBe(b[1]);
    expect(chainBlockHash(0, block, 0)).toBe(chainBlockHash(0, [9, ...block], 1));
  });

  it('returns integers below 2^53 that differ for blocks differing in one token', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minLength: B, maxLength: B }),
        fc.nat(B - 1),
        (block, at) => {
          const h = chainBlockHash(0, block, 0);
          expect(Number.isSafeInteger(h) && h >= 0).toBe(true);
          const changed = [...block];
          changed[at] = (changed[at] + 1) % 2 ** 32;
          expect(chainBlockHash(0, changed, 0)).not.toBe(h);
        },
      ),
    );
  });
});
