import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { RenderDeadlineError, TokenBudgetExceededError } from '../profile-errors';
import { mergeAsciiPiece } from './o200k-ascii-merge';
import { heapMergeAscii, heapMergeBytes } from './o200k-heap-merge';
import { asciiPieceRank } from './o200k-ascii-ranks';
import { asciiPieceEnd } from './o200k-ascii-split';
import { nonAsciiEntryRank } from './o200k-non-ascii-ranks';
import { mergeUtf8Piece } from './o200k-utf8-merge';
import { runMergeAscii, segmentTokenCount, segmentTokens } from './o200k-run-merge';

/**
 * o200k encoding of plain text, token for token what gpt-tokenizer's
 * `encode(text, { disallowedSpecial: new Set() })` returns, ~4x faster on source code.
 *
 * gpt-tokenizer splits the text into pieces with a unicode regex and maps each piece to one rank
 * (a Map lookup on the sliced string) or, when the piece is no single vocabulary entry, to its
 * byte-pair merge. Here ASCII pieces are split by a hand-written scanner (./o200k-ascii-split, with
 * the exactness rule), looked up straight from the text (./o200k-ascii-ranks) and, if no entry,
 * merged by ./o200k-ascii-merge. Only the pieces the scanner refuses, near non-ASCII code units,
 * go through the regex; they are looked up in ./o200k-non-ascii-ranks, and those that are no
 * single entry are merged over their UTF-8 bytes (gpt-tokenizer for short ones, else
 * ./o200k-heap-merge over ./o200k-byte-ranks).
 *
 * Encoding such a piece alone gives its tokens inside the text: gpt-tokenizer maps each piece on
 * its own, and the regex splits the piece alone into that one piece. Its alternatives look only at
 * the units they consume, except the lookahead `(?!\S)` of alternative 6, so cutting the text
 * after a piece only makes paths that went past the cut fail, or makes that lookahead succeed at
 * the cut: the first match is the piece again.
 *
 * Cost is linear in the text for every shape (fast-o200k-encoder.bench.ts has ms per MB per shape):
 * a long ASCII piece of a few runs of one unit (4 MB of spaces) is merged on its runs
 * (./o200k-run-merge), exactly; any other piece up to {@link O200K_CHUNK_UNITS} units is merged
 * exactly in O(n log n); longer ones are merged in chunks of that many units, which bounds the
 * cost per unit, and repeated chunks (periodic text) are merged once.
 *
 * With `maxTokens`, stops with a {@link TokenBudgetExceededError} as soon as the text is known to
 * have more tokens; with `deadline` (a `performance.now()` time), stops with a
 * {@link RenderDeadlineError} once that time has passed (checked every few thousand units, so it
 * overruns by well under a millisecond of work).
 */
export function fastEncodeO200k(
  text: string,
  maxTokens = Number.POSITIVE_INFINITY,
  deadline = Number.POSITIVE_INFINITY,
): number[] {
  const tokens: number[] = [];
  const budget: Budget = { maxTokens, deadline };
  let start = 0;
  let checkAt = DEADLINE_CHECK_UNITS;
  while (start < text.length) {
    const end = pieceEnd(text, start);
    if (end < 0) {
      // BAIL: the piece depends on a non-ASCII unit.
      start = pushRegexPiece(text, start, tokens, budget);
    } else {
      const rank = pieceRank(text, start, end);
      if (rank >= 0) tokens.push(rank);
      else if (end - start <= HEAP_MERGE_FROM)
        for (const token of pieceTokens(text.slice(start, end), mergeAsciiPiece)) tokens.push(token);
      else pushLongAsciiPiece(text, start, end, tokens, budget);
      start = end;
    }
    if (tokens.length > maxTokens) throw new TokenBudgetExceededError(maxTokens);
    if (start >= checkAt) {
      checkDeadline(budget);
      checkAt = start + DEADLINE_CHECK_UNITS;
    }
  }
  return tokens;
}

interface Budget {
  maxTokens: number;
  deadline: number;
}

/** Units encoded between two deadline checks: ~0.1-0.3 ms of ordinary text, and a clock read costs ~50 ns. */
const DEADLINE_CHECK_UNITS = 16_384;

function checkDeadline(budget: Budget): void {
  if (budget.deadline !== Number.POSITIVE_INFINITY && performance.now() > budget.deadline)
    throw new RenderDeadlineError(budget.deadline);
}

function checkBudget(tokens: number[], budget: Budget): void {
  if (tokens.length > budget.maxTokens) throw new TokenBudgetExceededError(budget.maxTokens);
  checkDeadline(budget);
}

/**
 * Pieces longer than this merge in a heap (O(n log n)) instead of by scanning every pair after
 * every merge (O(n^2)), which is faster for short pieces. Both give the same tokens.
 */
const HEAP_MERGE_FROM = 256;

/**
 * Pieces longer than this (in UTF-16 units) are merged in consecutive chunks of this many units, so
 * that the work between two budget checks is bounded however long a "word" is. The only place
 * where the tokens can differ from gpt-tokenizer's: a merge across a chunk boundary does not
 * happen (the text decodes the same). Real text has no such pieces; a 40 KB run of random letters
 * does (runs of one unit are merged whole, see ./o200k-run-merge).
 */
export const O200K_CHUNK_UNITS = 4096;

function pushLongAsciiPiece(text: string, start: number, end: number, tokens: number[], budget: Budget): void {
  const runs = runMergeAscii(text, start, end);
  if (runs !== undefined) {
    if (tokens.length + segmentTokenCount(runs) > budget.maxTokens)
      throw new TokenBudgetExceededError(budget.maxTokens);
    for (const token of segmentTokens(runs)) tokens.push(token);
    return;
  }
  for (let from = start; from < end; from += O200K_CHUNK_UNITS) {
    const to = Math.min(end, from + O200K_CHUNK_UNITS);
    const rank = to - from === 1 ? pieceRank(text, from, to) : -1;
    if (rank >= 0) tokens.push(rank);
    else for (const token of chunkTokens(text, from, to, heapMergeAsciiChunk)) tokens.push(token);
    checkBudget(tokens, budget);
  }
}

const heapMergeAsciiChunk = (chunk: string): number[] => heapMergeAscii(chunk, 0, chunk.length);

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
function pushRegexPiece(text: string, start: number, tokens: number[], budget: Budget): number {
  PIECE_AT.lastIndex = start;
  const match = PIECE_AT.exec(text);
  if (match === null) throw new Error(`o200k split regex matched nothing at ${start}`);
  const piece = match[0];
  const rank = entryRank(piece);
  if (rank >= 0) tokens.push(rank);
  else if (piece.length <= O200K_CHUNK_UNITS)
    for (const token of pieceTokens(piece, mergeUtf8Piece)) tokens.push(token);
  else pushLongRegexPiece(piece, tokens, budget);
  return start + piece.length;
}

/**
 * The rank of a regex piece that is one entry, else -1. Most have a non-ASCII unit; an ASCII one
 * (spaces before a non-ASCII space) must not reach the ASCII table, which packs 7 bits a unit.
 */
function entryRank(piece: string): number {
  const rank = nonAsciiEntryRank(piece);
  if (rank >= 0) return rank;
  for (let i = 0; i < piece.length; i++) if (piece.charCodeAt(i) >= 128) return -1;
  return pieceRank(piece, 0, piece.length);
}

/** A long regex piece in chunks (see {@link O200K_CHUNK_UNITS}), never splitting a surrogate pair. */
function pushLongRegexPiece(piece: string, tokens: number[], budget: Budget): void {
  for (let from = 0; from < piece.length;) {
    let to = Math.min(piece.length, from + O200K_CHUNK_UNITS);
    if (to < piece.length && isHighSurrogate(piece.charCodeAt(to - 1)) && isLowSurrogate(piece.charCodeAt(to))) to--;
    for (const token of chunkTokens(piece, from, to, mergeUtf8Piece)) tokens.push(token);
    checkBudget(tokens, budget);
    from = to;
  }
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** Bounds of {@link pieceMemo}: at most this many pieces, each at most this many code units. */
const MEMO_MAX_ENTRIES = 8192;
const MEMO_MAX_PIECE_LENGTH = 64;
/** Full chunks of long pieces remembered: a periodic text (`=-=-…`, `abcabc…`, one emoji repeated) repeats its chunks. */
const CHUNK_MEMO_ENTRIES = 16;

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

/**
 * Tokens of the chunk `text[from, to)` of a long piece: a full chunk that repeats one of the last
 * {@link CHUNK_MEMO_ENTRIES} costs a hash of its units instead of a merge (~50x less).
 */
const chunkMemo = new Map<string, readonly number[]>();

function chunkTokens(text: string, from: number, to: number, merge: (chunk: string) => number[]): readonly number[] {
  const chunk = text.slice(from, to);
  if (to - from < O200K_CHUNK_UNITS) return merge(chunk);
  const cached = chunkMemo.get(chunk);
  if (cached !== undefined) return cached;
  const tokens = merge(chunk);
  if (chunkMemo.size >= CHUNK_MEMO_ENTRIES) chunkMemo.delete(chunkMemo.keys().next().value as string);
  chunkMemo.set(chunk, tokens);
  return tokens;
}
