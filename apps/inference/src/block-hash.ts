import { createHash } from 'node:crypto';

/**
 * Chained block hashes of token sequences, the keys of content-addressed prefix reuse (what vLLM's
 * automatic prefix caching does): the hash of block i covers block i's tokens *and* the hash of
 * block i-1, so equal hashes at block i mean (up to a collision) equal prefixes of (i+1) blocks.
 * Only full blocks are hashed; a sequence's last partial block has no hash.
 *
 * Hashes are fast and non-cryptographic. A collision never produces a wrong result: whoever trusts
 * a hash verifies the tokens before reporting them cached (see prefix-match.ts).
 */

/**
 * Tokens per hashed block. 64 keeps the index small (one map entry per 64 held tokens) and the
 * per-request lookup to one map probe per 64 prompt tokens; the part of a match past the last
 * full block is found token by token, so coarse blocks lose nothing in `cached_tokens`.
 */
export const PREFIX_BLOCK_TOKENS = 64;

/**
 * Hashes `tokens[start, start + PREFIX_BLOCK_TOKENS)` chained to `previous` (the hash of the block
 * before, 0 for the first block). Returns an integer in [0, 2^53), exact in a double, usable as a
 * Map key and storable in a Float64Array.
 */
export type BlockHasher = (previous: number, tokens: ArrayLike<number>, start: number) => number;

const TWO_POW_32 = 4_294_967_296;

/**
 * The default {@link BlockHasher}: two independent 32-bit lanes (a murmur3-style and an
 * xxhash32-style round per token, each finished with murmur3's fmix32), 53 bits kept. At the
 * default 4M held tokens (62,500 blocks) the chance that any two blocks collide is about 2e-7.
 * About 2.4 ns a token (bench/prefix-match.bench.ts: 0.23 ms for 100k tokens).
 */
export const chainBlockHash: BlockHasher = (previous, tokens, start) => {
  // previous < 2^53: `>>> 0` takes its low 32 bits, the division its high 21.
  let a = (previous >>> 0) ^ 0x243f6a88;
  let b = Math.floor(previous / TWO_POW_32) ^ 0x85a308d3;
  const end = start + PREFIX_BLOCK_TOKENS;
  for (let i = start; i < end; i++) {
    const t = tokens[i];
    let k = Math.imul(t, 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    a ^= k;
    a = (Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64) | 0;
    b = (b + Math.imul(t, 0x85ebca77)) | 0;
    b = Math.imul((b << 13) | (b >>> 19), 0x9e3779b1);
  }
  return (fmix32(b ^ PREFIX_BLOCK_TOKENS) & 0x1fffff) * TWO_POW_32 + (fmix32(a ^ PREFIX_BLOCK_TOKENS) >>> 0);
};

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Number of full blocks in a sequence of `length` tokens. */
export function fullBlocks(length: number): number {
  return Math.floor(length / PREFIX_BLOCK_TOKENS);
}

/**
 * The chained hashes of every full block of `tokens`, reusing `known[0:reuse]` as the hashes of
 * its first `reuse` blocks: only blocks from `reuse` on are hashed, so extending a sequence whose
 * hashes are known costs O(new tokens), not O(sequence).
 *
 * @param known hashes of a sequence that agrees with `tokens` on its first `reuse` blocks (the
 *   caller guarantees that; a session's own earlier hashes, or the prompt's for prompt ++ completion)
 * @param reuse blocks of `known` to copy; clamped to what both have
 * @param seed the "previous hash" of the first block: a cache salt's {@link saltSeed}, so equal
 *   tokens under different salts never share a block hash (0 = unsalted)
 */
export function extendBlockHashes(
  tokens: ArrayLike<number>,
  known: Float64Array = EMPTY,
  reuse = known.length,
  hasher: BlockHasher = chainBlockHash,
  seed = 0,
): Float64Array {
  const blocks = fullBlocks(tokens.length);
  const kept = Math.max(0, Math.min(reuse, known.length, blocks));
  const out = new Float64Array(blocks);
  out.set(known.subarray(0, kept), 0);
  let previous = kept === 0 ? seed : out[kept - 1];
  for (let i = kept; i < blocks; i++) {
    previous = hasher(previous, tokens, i * PREFIX_BLOCK_TOKENS);
    out[i] = previous;
  }
  return out;
}

const EMPTY = new Float64Array(0);

/**
 * The first block's chain seed for a cache salt (vLLM's `cache_salt` does the same to its first
 * block hash): 53 bits of the salt's SHA-256, 0 for the empty salt. Prefix reuse by content then
 * stays inside one salt, i.e. one tenant.
 */
export function saltSeed(salt: string): number {
  if (salt === '') return 0;
  const digest = createHash('sha256').update(salt).digest();
  return (digest.readUInt32BE(0) & 0x1fffff) * TWO_POW_32 + digest.readUInt32BE(4);
}
