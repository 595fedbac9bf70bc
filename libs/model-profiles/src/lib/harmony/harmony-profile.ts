import type { ModelProfile } from '../model-profile';
import { decodeTokens, type TokenTable } from '../token-text-decoder';
import { HarmonyOutputParser } from './harmony-output-parser';
import { parseHarmonyPrompt } from './harmony-prompt-parser';
import { type EncodeText, HarmonyRenderer } from './harmony-renderer';
import { HarmonyToken } from './harmony-tokens';

/** What distinguishes one harmony profile from another: the vocabulary and the limits. */
export interface HarmonyProfileOptions {
  id: string;
  /** Encodes untrusted text; must never produce a special token id. */
  encodeText: EncodeText;
  table: TokenTable;
  vocabSize: number;
  contextWindow: number;
  maxOutputTokens: number;
}

/** Builds a {@link ModelProfile} that speaks the harmony chat format. */
export function createHarmonyProfile(options: HarmonyProfileOptions): ModelProfile {
  const { encodeText, table } = options;
  const renderer = new HarmonyRenderer(encodeText);
  return Object.freeze({
    id: options.id,
    contextWindow: options.contextWindow,
    maxOutputTokens: options.maxOutputTokens,
    vocabSize: options.vocabSize,
    // <|return|> ends a final answer, <|call|> a tool call; <|endoftext|> in case a model emits it.
    stopTokens: Object.freeze([HarmonyToken.return, HarmonyToken.call, HarmonyToken.endOfText]),
    encodeText,
    decode: (tokens) => decodeTokens(table, tokens),
    renderHeader: (h) => renderer.header(h),
    renderEntry: (e) => renderer.entry(e),
    renderGenerationPrompt: () => renderer.generationPrompt(),
    render: (h, entries) => {
      const out = renderer.header(h);
      for (const entry of entries) renderer.entry(entry, out);
      return renderer.generationPrompt(out);
    },
    renderCompletion: (e) => renderer.completion(e),
    createOutputParser: (tools) => new HarmonyOutputParser(table, tools),
    parsePrompt: (tokens) => parseHarmonyPrompt(tokens, table),
    // ASCII and non-ASCII text, an unknown word (a merge) and a special token's text: every table.
    warmUp: () => void encodeText('warm-up: zyxwvutsrqp — ünïcödé ✓ <|end|>'),
  } satisfies ModelProfile);
}
