import { InvalidTokenError } from './profile-errors';

/**
 * What a byte-level BPE vocabulary decodes to: `ranks[id]` is the token's text when its bytes are
 * valid UTF-8 on their own, else the raw bytes; `special(id)` names ids above the ranks.
 */
export interface TokenTable {
  readonly ranks: readonly (string | readonly number[])[];
  special(id: number): string | undefined;
}

const REPLACEMENT = '\uFFFD';

/**
 * Decodes a token stream to text without ever splitting a UTF-8 character: bytes of an incomplete
 * character are held back until the token that completes it arrives.
 *
 * Why not gpt-tokenizer's `decode`/`decodeGenerator`: both feed one module-wide `TextDecoder` in
 * `stream` mode, so a token that ends mid-character leaks its bytes into the *next* call — and
 * into whichever other stream decodes next. Each instance here owns its state.
 */
export class TokenTextDecoder {
  private pending: number[] = [];
  private readonly utf8 = new TextDecoder('utf-8');

  /** @param strict throw {@link InvalidTokenError} on unknown ids (else decode them as U+FFFD). */
  constructor(
    private readonly table: TokenTable,
    private readonly strict: boolean,
  ) {}

  /** Decodes one more token; returns the text that is complete so far (often the empty string). */
  push(id: number): string {
    const entry =
      Number.isInteger(id) && id >= 0 && id < this.table.ranks.length ? this.table.ranks[id] : this.special(id);
    if (typeof entry === 'string') {
      // A text token starts on a character boundary, so held-back bytes can never be completed
      // by it: they are invalid, and decode to U+FFFD exactly as a streaming TextDecoder would.
      return this.pending.length === 0 ? entry : this.flush() + entry;
    }
    for (const byte of entry) this.pending.push(byte);
    const hold = incompleteTailLength(this.pending);
    if (hold === this.pending.length) return '';
    const complete = this.pending.slice(0, this.pending.length - hold);
    this.pending = this.pending.slice(this.pending.length - hold);
    return this.utf8.decode(Uint8Array.from(complete));
  }

  /**
   * Decodes `ids` and ends the stream: their whole text, as one flat string. Appending each token's
   * text with `+=` made a rope of one V8 cons string per token; prompts parsed into messages that way
   * held 7.6 million of them (243 MB) in a worker after a minute of 500 agent loops, and its full
   * GCs took a second each. `join` builds the text in one flat string.
   */
  decodeAll(ids: ArrayLike<number>): string {
    const parts: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const text = this.push(ids[i]);
      if (text !== '') parts.push(text);
    }
    parts.push(this.flush());
    return parts.join('');
  }

  /** Ends the stream: held-back bytes of an unfinished character decode to U+FFFD. */
  flush(): string {
    if (this.pending.length === 0) return '';
    const text = this.utf8.decode(Uint8Array.from(this.pending));
    this.pending = [];
    return text;
  }

  private special(id: number): string {
    const text = this.table.special(id);
    if (text !== undefined) return text;
    if (this.strict) throw new InvalidTokenError(id);
    return REPLACEMENT;
  }
}

/** Decodes a whole token sequence with a fresh {@link TokenTextDecoder}. */
export function decodeTokens(table: TokenTable, tokens: readonly number[]): string {
  return new TokenTextDecoder(table, true).decodeAll(tokens);
}

/**
 * How many trailing bytes form the start of a UTF-8 sequence that is not complete yet (0 when the
 * buffer ends on a character boundary or with bytes that can never become valid).
 */
export function incompleteTailLength(bytes: readonly number[]): number {
  const lookBack = Math.min(4, bytes.length);
  for (let back = 1; back <= lookBack; back++) {
    const byte = bytes[bytes.length - back];
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: the lead is further back
    const need = byte >= 0xf8 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}
