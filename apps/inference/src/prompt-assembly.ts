import { prefixMiss } from './inference-errors';

/** A call's full prompt and how much of it the session already held. */
export interface AssembledPrompt {
  /** held[0:prefixLen] ++ tokens. */
  prompt: number[];
  /**
   * Longest common prefix of `prompt` and the held sequence: what a real engine's KV cache would
   * reuse, so a full resend (`prefixLen` 0) of a known session is also partly cached.
   */
  cachedTokens: number;
}

/**
 * Builds the prompt from the session's held tokens and the request's tail.
 *
 * @param held the session's sequence, or undefined when the worker holds none (or the key is empty)
 * @param prefixLen tokens of `held` the caller assumes; 0 means `tokens` is the whole prompt
 * @param tokens the tokens after `prefixLen`
 * @throws DomainError `prefix_miss` when `prefixLen` > 0 and fewer than `prefixLen` tokens are held
 */
export function assemblePrompt(held: Uint32Array | undefined, prefixLen: number, tokens: readonly number[]): AssembledPrompt {
  const heldLen = held?.length ?? 0;
  if (prefixLen > heldLen) throw prefixMiss(heldLen, prefixLen);
  const prompt = new Array<number>(prefixLen + tokens.length);
  for (let i = 0; i < prefixLen; i++) prompt[i] = held![i];
  for (let i = 0; i < tokens.length; i++) prompt[prefixLen + i] = tokens[i];
  // prompt[0:prefixLen] is held[0:prefixLen] by construction, so comparing starts after it:
  // a delta call costs O(new tokens) here, not O(history).
  const cachedTokens = held === undefined ? 0 : commonPrefixLength(held, prompt, prefixLen);
  return { prompt, cachedTokens };
}

/** Length of the longest common prefix of `a` and `b`, given that they agree on the first `from`. */
export function commonPrefixLength(a: ArrayLike<number>, b: ArrayLike<number>, from = 0): number {
  const n = Math.min(a.length, b.length);
  let i = Math.min(from, n);
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** The sequence a session holds after a call: the prompt followed by the tokens sent back. */
export function sessionSequence(prompt: readonly number[], completion: readonly number[]): Uint32Array {
  const out = new Uint32Array(prompt.length + completion.length);
  out.set(prompt, 0);
  out.set(completion, prompt.length);
  return out;
}
