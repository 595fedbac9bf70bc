import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { O200KHarmony } from 'gpt-tokenizer/encodingParams/o200k_harmony';
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

/**
 * The names of the ~1,090 special and reserved ids (`<|end|>`, `<|reserved_200013|>`, ...), from
 * gpt-tokenizer's own o200k_harmony parameters, inverted as its decoder inverts them (a later entry
 * wins: 200018 is `<|endofprompt|>`). Only the parameters are loaded, not its encoding: that builds
 * maps over all 200k ranks (~8.6 MB of heap that every full GC of every process would mark) which
 * fastloop never uses.
 */
const SPECIAL_NAMES = new Map(
  [...O200KHarmony(new Map() as never).specialTokensEncoder].map(([name, id]) => [id, name] as const),
);

/** Names a special id; undefined for an ordinary rank or an id outside the vocabulary. */
function specialText(id: number): string | undefined {
  if (!Number.isInteger(id) || id < bpeRanks.length || id >= O200K_HARMONY_VOCAB_SIZE) return undefined;
  return SPECIAL_NAMES.get(id);
}

/** The o200k_harmony vocabulary as a {@link TokenTable}. */
export const O200K_HARMONY_TABLE: TokenTable = { ranks: bpeRanks, special: specialText };
