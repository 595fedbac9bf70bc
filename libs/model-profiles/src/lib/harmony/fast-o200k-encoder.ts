import { encode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { TokenBudgetExceededError } from '../profile-errors';
import { mergeAsciiPiece } from './o200k-ascii-merge';
import { heapMergeAscii } from './o200k-heap-merge';
import { asciiPieceRank } from './o200k-ascii-ranks';
import { asciiPieceEnd } from './o200k-ascii-split';
import { nonAsciiEntryRank } from './o200k-non-ascii-ranks';

/**
 * o200k encoding of plain text, token for token what gpt-tokenizer's
 * `encode(text, { disallowedSpecial: new Set() })` returns, ~4x faster on source code.
 *
 * gpt-tokenizer splits the text into pieces with a unicode regex and maps each piece to one rank
 * (a Map lookup on the sliced string) or, when the piece is no single vocabulary entry, to its
 * byte-pair merge. Here ASCII pieces are split by a hand-written scanner (./o200k-ascii-split, with
 * the exactness rule), looked up straight from the text (./o200k-ascii-ranks) and, if no entry,
 * merged by ./o200k-ascii-merge. Only the pieces the scanner refuses, near non-ASCII code units,
 * go through the regex; they are looked up in ./o200k-non-ascii-ranks, and gpt-tokenizer encodes
 * each one that is no single entry alone.
 *
 * Encoding such a piece alone gives its tokens inside the text: gpt-tokenizer maps each piece on
 * its own, and the regex splits the piece alone into that one piece. Its alternatives look only at
 * the units they consume, except the lookahead `(?!\S)` of alternative 6, so cutting the text
 * after a piece only makes paths that went past the cut fail, or makes that lookahead succeed at
 * the cut: the first match is the piece again.
 *
 * Exact for every piece up to {@link O200K_ASCII_CHUNK_UNITS} (ASCII) or
 * {@link O200K_NON_ASCII_CHUNK_UNITS} (other) units; longer pieces are encoded in chunks, which
 * bounds the cost per unit (see there). With `maxTokens`, stops with a
 * {@link TokenBudgetExceededError} as soon as the text is known to have more tokens.
 */
export function fastEncodeO200k(text: string, maxTokens = Number.POSITIVE_INFINITY): number[] {
  const tokens: number[] = [];
  let start = 0;
  while (start < text.length) {
    const end = pieceEnd(text, start);
    if (end < 0) {
      // BAIL: the piece depends on a non-ASCII unit.
      start = pushRegexPiece(text, start, tokens, maxTokens);
      continue;
    }
    const rank = pieceRank(text, start, end);
    if (rank >= 0) tokens.push(rank);
    else if (end - start <= HEAP_MERGE_FROM)
      for (const token of pieceTokens(text.slice(start, end), mergeAsciiPiece)) tokens.push(token);
    else pushLongAsciiPiece(text, start, end, tokens, maxTokens);
    if (tokens.length > maxTokens) throw new TokenBudgetExceededError(maxTokens);
    start = end;
  }
  return tokens;
}

/**
 * Pieces longer than this merge in a heap (O(n log n)) instead of by scanning every pair after
 * every merge (O(n^2)), which is faster for short pieces. Both give the same tokens.
 */
const HEAP_MERGE_FROM = 256;

/**
 * Pieces longer than this are encoded in consecutive chunks of this many units, so that the work
 * between two budget checks is bounded however long a "word" is. The only place where the tokens
 * can differ from gpt-tokenizer's: a merge across a chunk boundary does not happen (the text
 * decodes the same). Real text has no such pieces; a 40 KB run of letters or spaces does.
 */
export const O200K_ASCII_CHUNK_UNITS = 4096;

/**
 * The same for pieces the regex splits (with a non-ASCII unit). gpt-tokenizer merges them with its
 * O(n^2) scan over UTF-8 bytes, so the chunks are shorter: a CJK or Thai run without spaces or
 * punctuation is one piece, and runs of a few hundred characters do occur in real text.
 */
export const O200K_NON_ASCII_CHUNK_UNITS = 256;

function pushLongAsciiPiece(text: string, start: number, end: number, tokens: number[], maxTokens: number): void {
  for (let from = start; from < end; from += O200K_ASCII_CHUNK_UNITS) {
    const to = Math.min(end, from + O200K_ASCII_CHUNK_UNITS);
    const rank = to - from === 1 ? pieceRank(text, from, to) : -1;
    if (rank >= 0) tokens.push(rank);
    else for (const token of heapMergeAscii(text, from, to)) tokens.push(token);
    if (tokens.length > maxTokens) throw new TokenBudgetExceededError(maxTokens);
  }
}

/**
 * Bound once: tsx, which runs the services, compiles imports to getters that it calls on every
 * use. Called through the getters, the two per-piece calls made the encoder ~1.7x slower.
 */
const pieceEnd = asciiPieceEnd;
const pieceRank = asciiPieceRank;

/**
 * The library's own split regex, sticky, so one `exec` returns the piece at `lastIndex`. A piece
 * starts at every piece end (each alternative matches at least one unit and together they cover
 * every code point), so the sticky match is the match `matchAll` finds there.
 */
const PIECE_AT = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'uy');

/** Pushes the tokens of the regex piece at `start`; returns where the piece ends. */
function pushRegexPiece(text: string, start: number, tokens: number[], maxTokens: number): number {
  PIECE_AT.lastIndex = start;
  const match = PIECE_AT.exec(text);
  if (match === null) throw new Error(`o200k split regex matched nothing at ${start}`);
  const piece = match[0];
  const rank = nonAsciiEntryRank(piece);
  if (rank >= 0) tokens.push(rank);
  else if (piece.length <= O200K_NON_ASCII_CHUNK_UNITS)
    for (const token of pieceTokens(piece, encodeAlone)) tokens.push(token);
  else pushLongRegexPiece(piece, tokens, maxTokens);
  return start + piece.length;
}

/** A long regex piece in chunks (see {@link O200K_NON_ASCII_CHUNK_UNITS}), never splitting a surrogate pair. */
function pushLongRegexPiece(piece: string, tokens: number[], maxTokens: number): void {
  for (let from = 0; from < piece.length;) {
    let to = Math.min(piece.length, from + O200K_NON_ASCII_CHUNK_UNITS);
    if (to < piece.length && isHighSurrogate(piece.charCodeAt(to - 1)) && isLowSurrogate(piece.charCodeAt(to))) to--;
    for (const token of encodeAlone(piece.slice(from, to))) tokens.push(token);
    if (tokens.length > maxTokens) throw new TokenBudgetExceededError(maxTokens);
    from = to;
  }
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * `disallowedSpecial: new Set()` (with `allowedSpecial` unset) makes gpt-tokenizer encode special
 * token text such as `<|end|>` as ordinary text. The default (`disallowedSpecial: 'all'`) throws
 * on it, and `allowedSpecial` would turn user text into control tokens. One frozen options object:
 * gpt-tokenizer re-derives its special-token config on every call that passes options, and with
 * an empty set that work is two comparisons.
 */
const PLAIN_TEXT = Object.freeze({ disallowedSpecial: new Set<string>() });

/** A regex piece's tokens from gpt-tokenizer, which splits it into just that piece again. */
function encodeAlone(piece: string): number[] {
  return encode(piece, PLAIN_TEXT);
}

/** Bounds of {@link pieceMemo}: at most this many pieces, each at most this many code units. */
const MEMO_MAX_ENTRIES = 8192;
const MEMO_MAX_PIECE_LENGTH = 64;

/**
 * Tokens of the pieces that are no single entry: identifiers and non-ASCII words repeat across
 * tool outputs, and a hit costs less than a merge (or far less than gpt-tokenizer's encode of a
 * regex piece). Evicts the oldest entry when full.
 */
const pieceMemo = new Map<string, readonly number[]>();

function pieceTokens(piece: string, tokensOf: (piece: string) => number[]): readonly number[] {
  const cached = pieceMemo.get(piece);
  if (cached !== undefined) return cached;
  const tokens = tokensOf(piece);
  if (piece.length <= MEMO_MAX_PIECE_LENGTH) {
    if (pieceMemo.size >= MEMO_MAX_ENTRIES) pieceMemo.delete(pieceMemo.keys().next().value as string);
    pieceMemo.set(piece, tokens);
  }
  return tokens;
}
