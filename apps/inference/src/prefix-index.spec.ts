import { PrefixIndex, type PrefixHolder } from './prefix-index';

const holder = (): PrefixHolder => ({ tokens: new Uint32Array(0), blockHashes: new Float64Array(0) });
const holdersOf = (index: PrefixIndex, hash: number) => {
  const out: PrefixHolder[] = [];
  index.forEachHolder(hash, (h) => (out.push(h), true));
  return out;
};

describe('PrefixIndex', () => {
  it('lists every holder of a hash, oldest first, and forgets removed ones', () => {
    const index = new PrefixIndex();
    const [a, b, c] = [holder(), holder(), holder()];
    index.add(a, Float64Array.of(1, 2));
    index.add(b, Float64Array.of(1, 3));
    index.add(c, Float64Array.of(1));
    expect(holdersOf(index, 1)).toEqual([a, b, c]);
    expect(index.size).toBe(5);
    index.remove(b, Float64Array.of(1, 3));
    expect(holdersOf(index, 1)).toEqual([a, c]);
    expect(index.has(3)).toBe(false);
    index.remove(a, Float64Array.of(1, 2));
    index.remove(c, Float64Array.of(1));
    expect(index.size).toBe(0);
    expect(index.hashes).toBe(0);
  });

  it('counts a holder once per hash however often it is added, and ignores removals of what it lacks', () => {
    const index = new PrefixIndex();
    const [a, b] = [holder(), holder()];
    index.add(a, Float64Array.of(7, 7, 8));
    index.add(a, Float64Array.of(7));
    index.remove(b, Float64Array.of(7, 8, 9));
    expect(index.size).toBe(2);
    expect(holdersOf(index, 7)).toEqual([a]);
  });

  it('stops visiting holders when told to', () => {
    const index = new PrefixIndex();
    for (let i = 0; i < 5; i++) index.add(holder(), Float64Array.of(1));
    let seen = 0;
    index.forEachHolder(1, () => ++seen < 2);
    expect(seen).toBe(2);
  });
});
