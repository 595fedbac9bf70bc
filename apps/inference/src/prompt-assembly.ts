import { chainBlockHash, type BlockHasher } from './block-hash';
import { prefixMiss } from './inference-errors';
import { SequenceLog } from './sequence-log';

/** What the worker holds for a session, as assembly needs it (a SessionCache lookup provides it). */
export interface HeldPrefix {
  readonly tokens: Uint32Array;
  readonly blockHashes: Float64Array;
  /** The append-only log `tokens` is a view of; absent for sequences held without one (tests). */
  readonly log?: SequenceLog;
}

/** A call's full prompt and how much of it the session already held. */
export interface AssembledPrompt {
  /** held[0:prefixLen] ++ tokens: a view of {@link log}'s first tokens. */
  prompt: Uint32Array;
  /** The append-only log the prompt lives in: the session's own when the call continues it. */
  log: SequenceLog;
  /**
   * Longest common prefix of `prompt` and the held sequence: what a real engine's KV cache would
   * reuse, so a full resend (`prefixLen` 0) of a known session is also partly cached.
   */
  cachedTokens: number;
  /** True when held tokens were copied into a new log (a divergence or a branch; never a plain continuation). */
  copied: boolean;
}

/**
 * Builds the prompt from the session's held tokens and the request's tail, in O(new tokens) when
 * the call continues the session: the new tokens are appended to the session's log in place (its
 * block hashes extended as they go) and the prompt is a view of it. Only when the prompt diverges
 * from what is held, or another call already extended the held log (a branch), is the common
 * prefix copied into a new log.
 *
 * @param held the session's sequence, or undefined when the worker holds none (or the key is empty)
 * @param prefixLen tokens of `held` the caller assumes; 0 means `tokens` is the whole prompt
 * @param tokens the tokens after `prefixLen`
 * @param hasher the session cache's block hash (a new log hashes with it)
 * @param salt the block-hash chain's start for this caller (0 = unsalted); held hashes are reused
 *   only when they were made with the same salt
 * @throws DomainError `prefix_miss` when `prefixLen` > 0 and fewer than `prefixLen` tokens are held
 */
export function assemblePrompt(
  held: HeldPrefix | undefined,
  prefixLen: number,
  tokens: ArrayLike<number>,
  hasher: BlockHasher = chainBlockHash,
  salt = 0,
): AssembledPrompt {
  const heldLen = held?.tokens.length ?? 0;
  if (prefixLen > heldLen) throw prefixMiss(heldLen, prefixLen);
  const promptLength = prefixLen + tokens.length;
  if (held === undefined) {
    const log = new SequenceLog(hasher, salt, promptLength * 2);
    log.append(tokens);
    return { prompt: log.tokens(), log, cachedTokens: 0, copied: false };
  }
  // prompt[0:prefixLen] is held[0:prefixLen] by construction, so comparing starts after it:
  // O(new tokens), not O(history).
  let cachedTokens = prefixLen;
  while (
    cachedTokens < heldLen &&
    cachedTokens < promptLength &&
    held.tokens[cachedTokens] === tokens[cachedTokens - prefixLen]
  )
    cachedTokens++;
  const sameHashes = held.log === undefined ? salt === 0 : held.log.hasher === hasher && held.log.salt === salt;
  const continues = sameHashes && held.log !== undefined && cachedTokens === heldLen && held.log.isTip(heldLen);
  // Held hashes made with another salt (or hasher) are no use to this prompt: hash again.
  const source = sameHashes ? held : { tokens: held.tokens, blockHashes: new Float64Array(0) };
  const log = continues ? held.log! : SequenceLog.fork(source, cachedTokens, hasher, salt, promptLength - cachedTokens);
  log.append(tokens, cachedTokens - prefixLen);
  return { prompt: log.tokens(promptLength), log, cachedTokens, copied: !continues && cachedTokens > 0 };
}

/** Length of the longest common prefix of `a` and `b`, given that they agree on the first `from`. */
export function commonPrefixLength(a: ArrayLike<number>, b: ArrayLike<number>, from = 0): number {
  const n = Math.min(a.length, b.length);
  let i = Math.min(from, n);
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * The sequence a session holds after a call: the prompt followed by the tokens sent back,
 * appended to the prompt's log in place when the prompt still ends at its tip (always, unless a
 * concurrent call branched from the same view), else to a copy.
 */
export function sessionSequence(
  assembled: Pick<AssembledPrompt, 'prompt' | 'log'>,
  completion: ArrayLike<number>,
): { tokens: Uint32Array; blockHashes: Float64Array; log: SequenceLog } {
  const { prompt } = assembled;
  const log = assembled.log.isTip(prompt.length)
    ? assembled.log
    : SequenceLog.fork(
        { tokens: prompt, blockHashes: assembled.log.hashes(prompt.length) },
        prompt.length,
        assembled.log.hasher,
        assembled.log.salt,
        completion.length,
      );
  log.append(completion);
  const length = prompt.length + completion.length;
  return { tokens: log.tokens(length), blockHashes: log.hashes(length), log };
}
