/**
 * Special token ids of the o200k_harmony encoding (as published with gpt-oss).
 *
 * gpt-tokenizer 4.0.0 only *encodes* `<|start|>` from text, so the renderer never asks it to encode
 * a special token: it splices these ids between separately encoded text segments. That is also the
 * safe way, because text from users and tools can then never produce one.
 */
export const HarmonyToken = {
  startOfText: 199998,
  endOfText: 199999,
  return: 200002,
  constrain: 200003,
  channel: 200005,
  start: 200006,
  end: 200007,
  message: 200008,
  call: 200012,
} as const;

/** Tokens that end an assistant message; after `<|end|>` the model may start another one. */
export const MESSAGE_TERMINATORS: ReadonlySet<number> = new Set([
  HarmonyToken.end,
  HarmonyToken.call,
  HarmonyToken.return,
  HarmonyToken.endOfText,
]);
