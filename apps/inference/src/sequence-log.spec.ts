import fc from 'fast-check';
import { chainBlockHash, extendBlockHashes, PREFIX_BLOCK_TOKENS as B } from './block-hash';
import { SequenceLog } from './sequence-log';

const chunk = fc.array(fc.integer({ min: 0, max: 50_000 }), { maxLength: 3 * B, size: 'max' });

describe('SequenceLog', () => {
  it('extends block hashes incrementally to exactly the hashes of the whole sequence, across reallocations', () => {
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 12 }), (chunks) => {
        const log = new SequenceLog(chainBlockHash, 0, 1);
        const all: number[] = [];
        for (const c of chunks) {
          log.append(c);
          all.push(...c);
          expect(Array.from(log.tokens())).toEqual(all);
          expect(Array.from(log.hashes())).toEqual(Array.from(extendBlockHashes(all)));
        }
      }),
    );
  });

  it('hands out views that never change, whatever is appended later', () => {
    fc.assert(
      fc.property(fc.array(chunk, { minLength: 1, maxLength: 8 }), (chunks) => {
        const log = new SequenceLog(chainBlockHash, 0, 1);
        const views: [Uint32Array, Float64Array, number[]][] = [];
        for (const c of chunks) {
          log.append(c);
          views.push([log.tokens(), log.hashes(), Array.from(log.tokens())]);
        }
        for (const [tokens, hashes, copy] of views) {
          expect(Array.from(tokens)).toEqual(copy);
          expect(Array.from(hashes)).toEqual(Array.from(extendBlockHashes(copy)));
        }
      }),
    );
  });

  it('forks a prefix reusing its known hashes, and the fork extends like a fresh log', () => {
    fc.assert(
      fc.property(chunk, chunk, fc.nat(), (base, more, cut) => {
        const source = { tokens: Uint32Array.from(base), blockHashes: extendBlockHashes(base) };
        const length = cut % (base.length + 1);
        const fork = SequenceLog.fork(source, length, chainBlockHash);
        fork.append(more);
        const expected = [...base.slice(0, length), ...more];
        expect(Array.from(fork.tokens())).toEqual(expected);
        expect(Array.from(fork.hashes())).toEqual(Array.from(extendBlockHashes(expected)));
      }),
    );
  });

  it('knows whether a view ends at its tip, and refuses views past what was written', () => {
    const log = new SequenceLog();
    log.append([1, 2, 3]);
    expect(log.isTip(3)).toBe(true);
    expect(log.isTip(2)).toBe(false);
    expect(() => log.tokens(4)).toThrow(RangeError);
  });

  it('starts the hash chain at its salt', () => {
    const block = Array.from({ length: B }, (_, i) => i);
    const salted = new SequenceLog(chainBlockHash, 12345);
    salted.append(block);
    expect(salted.hashes()[0]).toBe(chainBlockHash(12345, block, 0));
    expect(salted.hashes()[0]).not.toBe(extendBlockHashes(block)[0]);
  });
});
