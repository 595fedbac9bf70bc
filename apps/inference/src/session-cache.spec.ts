import fc from 'fast-check';
import { chainBlockHash, extendBlockHashes, PREFIX_BLOCK_TOKENS as B, type BlockHasher } from './block-hash';
import { SessionCache } from './session-cache';

const seq = (n: number, start = 0) => Uint32Array.from({ length: n }, (_, i) => start + i);

describe('SessionCache', () => {
  it('returns the sequence a session was last given', () => {
    const cache = new SessionCache({ maxTokens: 100, maxEntries: 10 });
    cache.set('a', seq(3));
    cache.set('a', seq(5, 7));
    expect(Array.from(cache.get('a')!)).toEqual([7, 8, 9, 10, 11]);
    expect(cache.totalTokens).toBe(5);
    expect(cache.size).toBe(1);
  });

  it('evicts the least recently used session when over its token budget', () => {
    const evicted: string[] = [];
    const cache = new SessionCache({ maxTokens: 10, maxEntries: 10, onEvict: (key) => evicted.push(key) });
    cache.set('a', seq(4));
    cache.set('b', seq(4));
    cache.get('a'); // a is now more recent than b
    cache.set('c', seq(4));
    expect(evicted).toEqual(['b']);
    expect(cache.has('a')).toBe(true);
    expect(cache.has('b')).toBe(false);
    expect(cache.totalTokens).toBe(8);
  });

  it('evicts the least recently used session when over its count', () => {
    const evicted: string[] = [];
    const cache = new SessionCache({ maxTokens: 1000, maxEntries: 2, onEvict: (key) => evicted.push(key) });
    cache.set('a', seq(1));
    cache.set('b', seq(1));
    cache.set('c', seq(1));
    expect(evicted).toEqual(['a']);
    expect(cache.size).toBe(2);
  });

  it('does not keep a sequence larger than the whole budget, and drops the older one of that session', () => {
    const cache = new SessionCache({ maxTokens: 10, maxEntries: 10 });
    cache.set('a', seq(5));
    cache.set('b', seq(3));
    cache.set('a', seq(11));
    expect(cache.has('a')).toBe(false);
    expect(cache.has('b')).toBe(true);
    expect(cache.totalTokens).toBe(3);
  });

  it('keeps nothing when its count bound is zero', () => {
    const cache = new SessionCache({ maxTokens: 10, maxEntries: 0 });
    cache.set('a', seq(1));
    expect(cache.size).toBe(0);
  });

  it('never exceeds either bound and keeps its token count exact, whatever the operations', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        key: fc.integer({ min: 0, max: 6 }),
        len: fc.integer({ min: 0, max: 40 }),
      }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 6 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 6 }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 5 }),
        fc.array(op, { maxLength: 60 }),
        (maxTokens, maxEntries, ops) => {
          const cache = new SessionCache({ maxTokens, maxEntries });
          const model = new Map<string, number>(); // key → length, in recency order
          for (const o of ops) {
            const key = `k${o.key}`;
            if (o.kind === 'set') {
              cache.set(key, seq(o.len));
              model.delete(key);
              if (o.len <= maxTokens && maxEntries > 0) model.set(key, o.len);
              let total = [...model.values()].reduce((a, b) => a + b, 0);
              while (total > maxTokens || model.size > maxEntries) {
                const [oldest, len] = model.entries().next().value!;
                model.delete(oldest);
                total -= len;
              }
            } else if (o.kind === 'get') {
              const got = cache.get(key);
              expect(got?.length).toBe(model.get(key));
              if (model.has(key)) {
                const len = model.get(key)!;
                model.delete(key);
                model.set(key, len);
              }
            } else {
              cache.delete(key);
              model.delete(key);
            }
            expect(cache.totalTokens).toBeLessThanOrEqual(maxTokens);
            expect(cache.size).toBeLessThanOrEqual(maxEntries);
            expect(cache.totalTokens).toBe([...model.values()].reduce((a, b) => a + b, 0));
            expect(cache.size).toBe(model.size);
          }
        },
      ),
    );
  });

  it("removes an evicted session from the content index, and a replaced session's old blocks with it", () => {
    const cache = new SessionCache({ maxTokens: 3 * B, maxEntries: 10 });
    cache.set('a', seq(2 * B, 1000));
    const aHashes = extendBlockHashes(seq(2 * B, 1000));
    expect(aHashes.every((h) => cache.index.has(h))).toBe(true);
    cache.set('b', seq(2 * B, 5000)); // over 3 blocks of tokens: a is evicted
    expect(cache.has('a')).toBe(false);
    expect(aHashes.some((h) => cache.index.has(h))).toBe(false);
    expect(cache.index.size).toBe(2);
    cache.set('b', seq(B, 9000));
    expect(cache.index.size).toBe(1);
    cache.clear();
    expect(cache.index.size).toBe(0);
  });

  it('moves a parent session to the new key, re-indexing only the blocks that changed', () => {
    const cache = new SessionCache({ maxTokens: 100 * B, maxEntries: 10 });
    const parent = seq(3 * B + 10);
    cache.set('parent', parent);
    const holderBefore = holderOf(cache, extendBlockHashes(parent)[0]);
    const child = Uint32Array.from([...parent, ...seq(2 * B, 70_000)]);
    cache.set('child', child, { moveFrom: 'parent' });
    expect(cache.has('parent')).toBe(false);
    expect(Array.from(cache.get('child')!)).toEqual(Array.from(child));
    expect(cache.totalTokens).toBe(child.length);
    expect(cache.index.size).toBe(5);
    // The same holder object carries the shared blocks: they were not removed and re-added.
    expect(holderOf(cache, extendBlockHashes(parent)[0])).toBe(holderBefore);
  });

  it('refuses block hashes that do not match the sequence length', () => {
    const cache = new SessionCache({ maxTokens: 100 * B, maxEntries: 10 });
    expect(() => cache.set('a', seq(2 * B), { blockHashes: new Float64Array(1) })).toThrow(RangeError);
    expect(cache.index.size).toBe(0);
  });

  it('keeps its content index equal to one built from the sequences it holds, whatever the operations', () => {
    const hashers: BlockHasher[] = [chainBlockHash, (prev, t, start) => chainBlockHash(prev, t, start) % 2];
    const key = fc.integer({ min: 0, max: 4 });
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        key,
        cut: fc.nat(),
        tail: fc.nat(3 * B),
        moveFrom: fc.option(key, { nil: undefined }),
      }),
      fc.record({ kind: fc.constant('get' as const), key }),
      fc.record({ kind: fc.constant('delete' as const), key }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 * B }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(op, { maxLength: 40 }),
        fc.constantFrom(...hashers),
        (maxTokens, maxEntries, ops, hasher) => {
          const cache = new SessionCache({ maxTokens, maxEntries, hasher });
          const base = seq(5 * B, 100);
          for (const o of ops) {
            if (o.kind === 'set') {
              // Branches of one base, so sequences share blocks with each other and with what they replace.
              const tokens = Uint32Array.from([...base.subarray(0, o.cut % (base.length + 1)), ...seq(o.tail, o.cut)]);
              cache.set(`k${o.key}`, tokens, { moveFrom: o.moveFrom === undefined ? undefined : `k${o.moveFrom}` });
            } else if (o.kind === 'get') cache.get(`k${o.key}`);
            else cache.delete(`k${o.key}`);
            expectIndexOf(cache, hasher);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

function holderOf(cache: SessionCache, hash: number): unknown {
  let found: unknown;
  cache.index.forEachHolder(hash, (h) => ((found = h), false));
  return found;
}

/** The cache's index lists, for each block hash, exactly the held sequences that have it. */
function expectIndexOf(cache: SessionCache, hasher: BlockHasher): void {
  const expected = new Map<number, string[]>();
  let memberships = 0;
  for (let k = 0; k < 5; k++) {
    if (!cache.has(`k${k}`)) continue;
    const tokens = cache.lookup(`k${k}`)!.tokens;
    for (const h of new Set(extendBlockHashes(tokens, undefined, 0, hasher))) {
      expected.set(h, [...(expected.get(h) ?? []), tokens.join(',')].sort());
      memberships++;
    }
  }
  expect(cache.index.size).toBe(memberships);
  expect(cache.index.hashes).toBe(expected.size);
  for (const [h, sequences] of expected) {
    const actual: string[] = [];
    cache.index.forEachHolder(h, (holder) => (actual.push(holder.tokens.join(',')), true));
    expect(actual.sort()).toEqual(sequences);
  }
}
