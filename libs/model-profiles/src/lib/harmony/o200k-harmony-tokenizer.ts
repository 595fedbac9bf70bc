import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { decode as libraryDecode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { type TokenTable } from '../token-text-decoder';
import { fastEncodeO200k } from './fast-o200k-encoder';

/**
 * Encodes text from anyone (users, tools, the model) so that it never yields a special token id:
 * special-token text such as `<|end|>` is encoded as ordinary text. With `maxTokens`, throws a
 * `TokenBudgetExceededError` as soon as the text is known to need more; with `deadline` (a
 * `performance.now()` time), a `RenderDeadlineError` once it has passed.
 */
export function encodeO200kText(text: string, maxTokens?: number, deadline?: number): number[] {
  return fastEncodeO200k(text, maxTokens, deadline);
}

/**
 * Ids `0 .. 201087`: 199,998 BPE ranks, then the harmony specials and reserved ids. gpt-tokenizer's
 * `vocabularySize` counts one more (201,089) than it can decode (201,088 throws), so it is not used.
 */
export const O200K_HARMONY_VOCAB_SIZE = 201_088;

/** Bounded by the ~1,090 special and reserved ids: other ids are rejected before the cache. */
const specialCache = new Map<number, string | undefined>();

/**
 * Names a special id (`<|end|>`, `<|reserved_200013|>`, ...) via gpt-tokenizer, whose special
 * tokens decode as strings, so this path never touches its shared streaming `TextDecoder`.
 */
function specialText(id: number): string | undefined {
  if (!Number.isInteger(id) || id < bpeRanks.length || id >= O200K_HARMONY_VOCAB_SIZE) return undefined;
  if (!specialCache.has(id)) {
    let text: string | undefined;
    try {
      text = libraryDecode([id]);
    } catch {
      text = undefined; // gpt-tokenizer throws for ids outside its vocabulary
    }
    specialCache.set(id, text);
  }
  return specialCache.get(id);
}

/** The o200k_harmony vocabulary as a {@link TokenTable}. */
export const O200K_HARMONY_TABLE: TokenTable = { ranks: bpeRanks, special: specialText };
