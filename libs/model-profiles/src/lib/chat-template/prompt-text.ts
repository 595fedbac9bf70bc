/**
 * The two ends of a rendered prompt's text, decoding only as much of the prompt as they need. An
 * engine reads a prompt's header (the system block: tools, tool choice, response format) and
 * whether it ends with the generation prompt on every request; decoding the whole conversation for
 * that cost O(history) on each turn's path, where the header is a few hundred tokens at the start.
 *
 * A decoded prefix (or suffix) of the tokens is the whole text's prefix (suffix) except near the
 * cut: a character split across the cut decodes to U+FFFD, and a tokenizer's space clean-up
 * (llama.cpp's `clean_spaces`, a first token's leading space) looks at neighbouring characters
 * only. So an answer is taken from a partial decode only when it lies {@link MARGIN} characters
 * away from the cut, else more is decoded (4× each time, the whole prompt at worst); the property
 * test compares it with the full decode on the real model's tokenizer.
 */
export type Decode = (tokens: readonly number[]) => string;

/** Characters next to a cut that a partial decode may get differently from the whole. */
const MARGIN = 16;
/** Tokens decoded first at each end (`first`: tests make it small, so most reads are partial). */
const FIRST_TOKENS = 256;

/** The text before the first of `endMarkers` in the decoded prompt; '' when none is in it. */
export function headerText(
  decode: Decode,
  tokens: readonly number[],
  endMarkers: readonly string[],
  first = FIRST_TOKENS,
): string {
  const longest = Math.max(0, ...endMarkers.map((m) => m.length));
  for (let n = Math.min(tokens.length, Math.max(1, first)); ; n = Math.min(tokens.length, n * 4)) {
    const whole = n === tokens.length;
    const text = decode(whole ? tokens : tokens.slice(0, n));
    const at = firstMarker(text, endMarkers);
    // Any marker starting at or before `at` ends inside the part this prefix shares with the whole text.
    if (whole || (at >= 0 && at + longest + MARGIN <= text.length)) return at >= 0 ? text.slice(0, at) : '';
  }
}

/** Whether the decoded prompt ends with `suffix`. */
export function endsWithText(decode: Decode, tokens: readonly number[], suffix: string, first = FIRST_TOKENS): boolean {
  for (let n = Math.min(tokens.length, Math.max(1, first)); ; n = Math.min(tokens.length, n * 4)) {
    const whole = n === tokens.length;
    const text = decode(whole ? tokens : tokens.slice(tokens.length - n));
    if (whole || text.length >= suffix.length + MARGIN) return text.endsWith(suffix);
  }
}

/** Where the first of `markers` starts in `text`, -1 when none does. */
export function firstMarker(text: string, markers: readonly string[]): number {
  let first = -1;
  for (const m of markers) {
    const at = text.indexOf(m);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first;
}
