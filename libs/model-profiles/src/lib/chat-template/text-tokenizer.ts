/**
 * A model's own tokenizer as a chat-template profile needs it. Loaded from the model's files
 * (see {@link loadGgufModelFiles}), never re-implemented here.
 */
export interface TextTokenizer {
  /** Token ids are `0 .. vocabSize - 1`. */
  readonly vocabSize: number;
  /** Begin-of-sequence id, when the model has one. */
  readonly bos?: number;
  /** End-of-generation ids (EOS, EOT): sampling stops there. */
  readonly stopTokens: readonly number[];
  /** Untrusted text: special-token text becomes ordinary tokens, never a special id. */
  encodeText(text: string): number[];
  /** Template markup (ours or the model's): special-token text becomes its special id. */
  encodeMarkup(text: string): number[];
  /** Decodes tokens, special ids included as their text. */
  decode(tokens: readonly number[]): string;
}

/** What a model file says about how to talk to it. */
export interface ModelFiles {
  tokenizer: TextTokenizer;
  /** Jinja chat template from the file's metadata (`tokenizer.chat_template`), if any. */
  chatTemplate?: string;
  /** Context length the model was trained with. */
  trainContextSize: number;
  /** Text of the BOS / EOS tokens, which templates reference as `bos_token` / `eos_token`. */
  bosText: string;
  eosText: string;
}
