import fc from 'fast-check';
import { chainBlockHash, extendBlockHashes, PREFIX_BLOCK_TOKENS as B, type BlockHasher } from './block-hash';
import { matchPrefix, MAX_MATCH_CANDIDATES } from './prefix-match';
import { SessionCache } from './session-cache';

/** The obvious definition: tokens from the start on which both agree. */
function naiveCommonPrefix(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * Brute force over every held sequence: the deepest shared full block decides; when the session
 * already reaches it, the extension is against the session, otherwise the best held sequence wins.
 */
function reference(held: readonly number[][], prompt: readonly number[], sessionCached: number): number {
  const shared = held.map((h) => naiveCommonPrefix(h, prompt));
  const deepest = Math.max(0, ...shared.map((n) => Math.floor(n / B)));
  if (deepest <= Math.floor(sessionCached / B)) return sessionCached;
  return Math.max(sessionCached, ...shared);
}

const alphabet = fc.integer({ min: 0, max: 3 }); // small, so tails often agree for a few tokens
// size 'max': lengths span several blocks (fast-check's default size keeps arrays to ~10 items).
/** base[0:cut] ++ tail: sequences that share prefixes of every length with each other. */
const branch = fc.record({ cut: fc.nat(), tail: fc.array(alphabet, { maxLength: 2 * B, size: 'max' }) });
const scenario = fc.record({
  base: fc.array(alphabet, { maxLength: 6 * B, size: 'max' }),
  held: fc.array(branch, { minLength: 1, maxLength: MAX_MATCH_CANDIDATES }),
  prompt: branch,
  session: fc.option(fc.nat(), { nil: undefined }),
});
const build = (base: number[], b: { cut: number; tail: number[] }) => [
  ...base.slice(0, b.cut % (base.length + 1)),
  ...b.tail,
];

function holdAll(held: number[][], hasher?: BlockHasher): SessionCache {
  const cache = new SessionCache({ maxTokens: 1e9, maxEntries: 1e6, hasher });
  held.forEach((h, i) => cache.set(`k${i}`, Uint32Array.from(h)));
  return cache;
}

/** A prompt without a session, hashed as the worker hashes prompts. */
const match = (cache: SessionCache, prompt: number[]) =>
  matchPrefix(cache, Uint32Array.from(prompt), extendBlockHashes(prompt), undefined, 0);

describe('matchPrefix', () => {
  it('reports the longest prefix any held sequence shares (full blocks, then token by token), as a brute-force search does', () => {
    fc.assert(
      fc.property(scenario, ({ base, held: branches, prompt: p, session: s }) => {
        const held = branches.map((b) => build(base, b));
        const prompt = build(base, p);
        const cache = holdAll(held);
        const key = s === undefined ? undefined : `k${s % held.length}`;
        const session = key === undefined ? undefined : cache.lookup(key);
        const sessionCached = session === undefined ? 0 : naiveCommonPrefix(session.tokens, prompt);
        const match = matchPrefix(cache, Uint32Array.from(prompt), extendBlockHashes(prompt), session, sessionCached);
        expect(match.cachedTokens).toBe(reference(held, prompt, sessionCached));
      }),
      { numRuns: 300 },
    );
  });

  it('reports a full resend of a conversation held under another key as cached, up to what it held', () => {
    const conversation = Array.from({ length: 5 * B + 17 }, (_, i) => (i * 7919) % 1000);
    const cache = holdAll([conversation]);
    const prompt = [...conversation, 4242, 4243];
    expect(match(cache, prompt).cachedTokens).toBe(conversation.length);
    // A prompt shorter than one block is never matched by content (like vLLM: full blocks only).
    expect(match(cache, conversation.slice(0, B - 1)).cachedTokens).toBe(0);
  });

  it('with content matching off counts only the session prefix', () => {
    const conversation = Array.from({ length: 5 * B + 17 }, (_, i) => (i * 7919) % 1000);
    const cache = holdAll([conversation]);
    const prompt = [...conversation, 4242];
    expect(
      matchPrefix(cache, Uint32Array.from(prompt), extendBlockHashes(prompt), undefined, 0, false).cachedTokens,
    ).toBe(0);
  });

  it('never reports more than a held sequence really shares, even when block hashes collide', () => {
    const colliding: BlockHasher[] = [() => 7, (prev, t, start) => chainBlockHash(prev, t, start) % 3];
    fc.assert(
      fc.property(
        scenario,
        fc.constantFrom(...colliding),
        ({ base, held: branches, prompt: p, session: s }, hasher) => {
          const held = branches.map((b) => build(base, b));
          const prompt = build(base, p);
          const cache = holdAll(held, hasher);
          const session = s === undefined ? undefined : cache.lookup(`k${s % held.length}`);
          const sessionCached = session === undefined ? 0 : naiveCommonPrefix(session.tokens, prompt);
          const { cachedTokens } = matchPrefix(
            cache,
            Uint32Array.from(prompt),
            extendBlockHashes(prompt, undefined, 0, hasher),
            session,
            sessionCached,
          );
          const shared = held.map((h) => naiveCommonPrefix(h, prompt));
          expect(cachedTokens).toBeGreaterThanOrEqual(sessionCached);
          expect([sessionCached, ...shared]).toContain(cachedTokens);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('compares at most MAX_MATCH_CANDIDATES sequences sharing the deepest block, losing less than a block', () => {
    const common = Array.from({ length: 2 * B }, (_, i) => i);
    // Many sessions share two blocks (a system prompt); the last one also shares 40 more tokens.
    const held = Array.from({ length: 3 * MAX_MATCH_CANDIDATES }, (_, i) => [
      ...common,
      10_000 + i,
      ...new Array(B).fill(1),
    ]);
    const prompt = [...held[held.length - 1].slice(0, 2 * B + 40), 5];
    const { cachedTokens } = match(holdAll(held), prompt);
    expect(cachedTokens).toBeGreaterThanOrEqual(2 * B);
    expect(cachedTokens).toBeLessThanOrEqual(2 * B + 40);
  });
});
