/**
 * A hand-written copy of gpt-tokenizer's o200k split regex (`O200K_TOKEN_SPLIT_REGEX`) for ASCII
 * text. The regex tries these alternatives in order at each position:
 *
 * 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'contraction)?`
 * 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'contraction)?`
 * 3. `\p{N}{1,3}`
 * 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
 * 5. `\s*[\r\n]+`
 * 6. `\s+(?!\S)`
 * 7. `\s+`
 *
 * where a contraction is `'s 'd 'm 't 'll 've 're` in either case. Restricted to ASCII, the
 * classes are plain: upper `A-Z`, lower `a-z`, number `0-9`, `\s` is tab, LF, VT, FF, CR and
 * space, and every other code (punctuation, controls) is "other".
 *
 * Exactness rule: {@link asciiPieceEnd} decides a piece only from ASCII code units. Whenever it
 * would have to look at a code unit >= 128 (inside a run, the unit that ends a run, a lookahead,
 * a contraction) it returns {@link BAIL} and the caller asks the real regex for that one piece,
 * so non-ASCII letters, digits, marks and whitespace (`é`, `²`, U+0301, NBSP, U+2028) and
 * surrogates never go through this code. The end of the text is not a code unit and never bails.
 */

/** Returned by {@link asciiPieceEnd} when the piece depends on a non-ASCII code unit; negative. */
export const BAIL = -1;

const UPPER = 1;
const LOWER = 2;
const DIGIT = 4;
/** `[^\r\n\p{L}\p{N}]`: the optional first code unit of alternatives 1 and 2. */
const PREFIX = 8;
/** `[^\s\p{L}\p{N}]`: the body of alternative 4. */
const OTHER = 16;
/** `\s` */
const SPACE = 32;
const NON_ASCII = 64;
const LETTER = UPPER | LOWER;

const LF = 0x0a;
const CR = 0x0d;
const BLANK = 0x20;
const APOSTROPHE = 0x27;
const SLASH = 0x2f;
/** For an ASCII unit `c` and a lowercase letter `l`, `(c | 0x20) === l` iff `c` is `l` or its capital. */
const LOWERCASE_BIT = 0x20;

const CLASSES = buildClasses();

function buildClasses(): Uint8Array {
  const classes = new Uint8Array(128);
  for (let code = 0; code < 128; code++) {
    if (code >= 0x41 && code <= 0x5a) classes[code] = UPPER;
    else if (code >= 0x61 && code <= 0x7a) classes[code] = LOWER;
    else if (code >= 0x30 && code <= 0x39) classes[code] = DIGIT;
    else if (code === LF || code === CR) classes[code] = SPACE;
    else if ((code >= 0x09 && code <= 0x0c) || code === BLANK) classes[code] = SPACE | PREFIX;
    else classes[code] = OTHER | PREFIX;
  }
  return classes;
}

/** What {@link codeAt} reads past the end of the text: no class, and not >= 128, so no bail. */
const END = -1;

/**
 * `charCodeAt` that returns {@link END} past the end. Plain `charCodeAt` returns NaN there, which
 * turns every code into a float in V8's optimized code: that made the scanner ~25% slower.
 */
function codeAt(text: string, index: number): number {
  return index < text.length ? text.charCodeAt(index) : END;
}

function classOf(code: number): number {
  if (code >= 128) return NON_ASCII;
  return code === END ? 0 : CLASSES[code];
}

/**
 * The end of the regex piece that starts at `start` (`start < text.length`), or {@link BAIL}.
 * Pieces are contiguous (every code unit starts a match of some alternative), so the pieces of
 * a text are found by calling this from 0 with each returned end.
 */
export function asciiPieceEnd(text: string, start: number): number {
  const code = text.charCodeAt(start);
  const first = classOf(code);
  if (first & PREFIX) {
    // A non-ASCII `next` has no class bit but NON_ASCII, so the runs below stop on it and bail.
    const next = classOf(codeAt(text, start + 1));
    if (next & LETTER) return letterPieceEnd(text, start + 1);
    if (first & OTHER) return otherPieceEnd(text, start);
    // Alternative 4's optional leading space.
    if (next & OTHER && code === BLANK) return otherPieceEnd(text, start + 1);
    return whitespacePieceEnd(text, start);
  }
  if (first & LETTER) return letterPieceEnd(text, start);
  if (first & DIGIT) return digitsEnd(text, start);
  if (first & SPACE) return whitespacePieceEnd(text, start); // CR or LF
  return BAIL;
}

/**
 * Alternatives 1 and 2 from the first letter. Upper and lower are disjoint in ASCII, so "upper
 * run, then lower run" is both alternatives at once, and backtracking cannot find another split.
 */
function letterPieceEnd(text: string, start: number): number {
  let end = start;
  let code = codeAt(text, end);
  while (code >= 0x41 && code <= 0x5a) code = codeAt(text, ++end);
  while (code >= 0x61 && code <= 0x7a) code = codeAt(text, ++end);
  if (code >= 128) return BAIL;
  return code === APOSTROPHE ? contractionEnd(text, end) : end;
}

/** The optional `'s 'd 'm 't 'll 've 're` (any case) after a letter run ending at `apostrophe`. */
function contractionEnd(text: string, apostrophe: number): number {
  const first = codeAt(text, apostrophe + 1); // END | 0x20 is no letter
  if (first >= 128) return BAIL;
  switch (first | LOWERCASE_BIT) {
    case 0x73: // s
    case 0x64: // d
    case 0x6d: // m
    case 0x74: // t
      return apostrophe + 2;
    case 0x6c: // l
      return twoLetterEnd(text, apostrophe, 0x6c);
    case 0x76: // v
    case 0x72: // r
      return twoLetterEnd(text, apostrophe, 0x65);
    default:
      return apostrophe;
  }
}

/** Completes a two-letter contraction whose second letter must be `lower` (either case). */
function twoLetterEnd(text: string, apostrophe: number, lower: number): number {
  const code = codeAt(text, apostrophe + 2);
  if (code >= 128) return BAIL;
  return (code | LOWERCASE_BIT) === lower ? apostrophe + 3 : apostrophe;
}

/** Alternative 3: one to three digits. */
function digitsEnd(text: string, start: number): number {
  let end = start + 1;
  while (end < start + 3) {
    const code = codeAt(text, end);
    if (code >= 0x30 && code <= 0x39) end++;
    else return code >= 128 ? BAIL : end;
  }
  return end;
}

/** Alternative 4 from its first non-space unit: other units, then any CR, LF and `/`. */
function otherPieceEnd(text: string, start: number): number {
  let end = start;
  let code = codeAt(text, end);
  while (classOf(code) & OTHER) code = codeAt(text, ++end);
  while (code === CR || code === LF || code === SLASH) code = codeAt(text, ++end);
  return code >= 128 ? BAIL : end;
}

/**
 * Alternatives 5 to 7 over the maximal whitespace run. 5 backtracks `\s*` to the last CR or LF
 * of the run; 6 takes the run at the end of the text, else the run less its last unit (the
 * lookahead then sees whitespace); 7 is left with a single unit before non-whitespace.
 */
function whitespacePieceEnd(text: string, start: number): number {
  let end = start;
  let lastNewline = -1;
  let code = codeAt(text, end);
  while (classOf(code) & SPACE) {
    if (code === CR || code === LF) lastNewline = end;
    code = codeAt(text, ++end);
  }
  if (code >= 128) return BAIL;
  if (lastNewline >= 0) return lastNewline + 1;
  if (end === text.length || end - start === 1) return end;
  return end - 1;
}
