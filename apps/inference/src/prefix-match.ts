import { fullBlocks, type BlockHasher } from './block-hash';
import type { PrefixIndex } from './prefix-index';
import type { HeldSequence } from './session-cache';

/**
 * Held sequences compared token by token when several share the prompt's deepest matched block.
 * They all share that block, so the cap can cost at most PREFIX_BLOCK_TOKENS - 1 tokens of match;
 * it bounds a new conversation's lookup when thousands of sessions share its system prompt.
 */
export const MAX_MATCH_CANDIDATES = 8;

/** Where held prefixes are looked up: a SessionCache provides both. */
export interface PrefixSource {
  readonly index: PrefixIndex;
  readonly hasher: BlockHasher;
}

/** What content matching found for a prompt. */
export interface PrefixMatch {
  /**
   * Leading prompt tokens some held sequence has: max(the session's common prefix, the longest
   * prefix found by content). Always verified token by token, so a hash collision can only make it
   * smaller, never wrong.
   */
  cachedTokens: number;
}

/**
 * Finds the longest prompt prefix the worker holds under any key (content-addressed prefix reuse).
 *
 * 1. The prompt's block hashes come with it (its SequenceLog extends them as tokens are appended,
 *    so a session that the prompt extends costs O(new tokens) for them).
 * 2. Walk the index from the first block the session does not already cover, one probe per block,
 *    to the deepest block some held sequence shares (chained hashes make matches prefix-closed).
 * 3. No deeper block than the session's: the session's own common prefix is the answer (the
 *    extension past its last full block is against it). Otherwise compare the prompt with up to
 *    {@link MAX_MATCH_CANDIDATES} holders of the deepest block from token 0 (verifying the whole
 *    span, since they are other sequences) and keep the longest common prefix.
 *
 * @param promptHashes the chained hashes of the prompt's full blocks (with `source.hasher`)
 * @param session the sequence the session lookup just found, held (so indexed) in `source`; its
 *   blocks below `sessionCached` need no probe
 * @param sessionCached the common prefix of `prompt` and `session.tokens`
 * @param byContent false: only the session's prefix counts (INFERENCE_PREFIX_CACHING=false)
 */
export function matchPrefix(
  source: PrefixSource,
  prompt: Uint32Array,
  promptHashes: Float64Array,
  session: HeldSequence | undefined,
  sessionCached: number,
  byContent = true,
  seed = 0,
): PrefixMatch {
  const known = session === undefined ? 0 : fullBlocks(sessionCached);
  const blockHashes = promptHashes;
  if (!byContent) return { cachedTokens: sessionCached };
  let deepest = known;
  while (deepest < blockHashes.length && source.index.has(blockHashes[deepest])) deepest++;
  if (deepest === known) return { cachedTokens: sessionCached };
  let cachedTokens = sessionCached;
  let tried = 0;
  source.index.forEachHolder(blockHashes[deepest - 1], (holder) => {
    cachedTokens = Math.max(cachedTokens, verifiedPrefix(holder.tokens, prompt));
    return ++tried < MAX_MATCH_CANDIDATES && cachedTokens < prompt.length;
  });
  return { cachedTokens };
}

/** Tokens from the start on which `held` and `prompt` agree: the check that makes hashes safe. */
function verifiedPrefix(held: Uint32Array, prompt: Uint32Array): number {
  // Uint32Array on both sides keeps this loop monomorphic: about 1 ns a token (bench/prefix-match.bench.ts).
  const n = Math.min(held.length, prompt.length);
  let i = 0;
  while (i < n && held[i] === prompt[i]) i++;
  return i;
}
