import { asciiPieceRank } from './o200k-ascii-ranks';

/**
 * The byte-pair merge of an ASCII piece made of a few long runs of one unit (4 MB of spaces, a
 * line of 8 MB of `=`, ` ====…==\n`), computed on the runs instead of on the units: token for token
 * what {@link heapMergeAscii} (and so gpt-tokenizer) gives for the whole piece, in time that
 * depends on the number of runs and the length of the vocabulary's longest entry, not on the
 * piece's length.
 *
 * The merge repeatedly joins the adjacent pair with the lowest rank, the leftmost on a tie. Here
 * the parts are kept as segments `(token, count)`: `count` equal parts in a row. In a segment every
 * adjacent pair is the same string, so it has one rank, and the leftmost of its pairs is the
 * segment's first. Each step finds the lowest (rank, position) over the segments' first pairs and
 * the pairs across two segments, exactly the pair the unit-by-unit merge picks next, and applies it:
 *
 * - a pair across segments `X|Y` becomes one part `XY` (one merge, as in the unit merge);
 * - a segment `X×m` whose pair is the lowest merges as the unit merge would go on: `(X0 X1)`, then
 *   `(X2 X3)` and so on left to right, giving `XX×⌊m/2⌋` (and one `X` left when m is odd), as long
 *   as no pair made on the way ranks lower than `XX`: the pairs made are `XX|X` (rank of XXX),
 *   `XX|XX` (XXXX) and the left neighbour with `XX`. Pairs that existed before rank higher (`XX`
 *   was the lowest) or, with the same rank, lie to the right of the whole segment. When one of the
 *   made pairs does rank lower, only `(X0 X1)` is merged and the search starts again, as the unit
 *   merge would pick that pair next.
 *
 * A vocabulary that kept the batch from applying could need many single steps; past
 * {@link RUN_MERGE_MAX_STEPS} this gives up (`undefined`) and the caller merges the units.
 */

/** Pieces with more segments than this are not runs: the caller merges their units. */
export const RUN_MERGE_MAX_SEGMENTS = 32;
/** Steps before giving up; o200k's runs of one unit take 7-20 (fast-o200k-encoder bench). */
export const RUN_MERGE_MAX_STEPS = 2048;
/** No o200k entry is longer: a longer pair is no entry. */
const MAX_ENTRY_UNITS = 128;
const NONE = 0x7fffffff;

interface Segment {
  token: string;
  count: number;
}

/** The rank of a token string, or -1 when it is no entry. */
export type TokenRank = (token: string) => number;

/** o200k's ranks of ASCII strings. */
export const o200kTokenRank: TokenRank = (token) =>
  token.length > MAX_ENTRY_UNITS ? -1 : asciiPieceRank(token, 0, token.length);

/** `text[start, end)` as runs of one unit, or `undefined` past {@link RUN_MERGE_MAX_SEGMENTS}. */
export function runSegments(text: string, start: number, end: number): Segment[] | undefined {
  const segments: Segment[] = [];
  let at = start;
  while (at < end) {
    const unit = text.charCodeAt(at);
    let runEnd = at + 1;
    while (runEnd < end && text.charCodeAt(runEnd) === unit) runEnd++;
    if (segments.length === RUN_MERGE_MAX_SEGMENTS) return undefined;
    segments.push({ token: text[at], count: runEnd - at });
    at = runEnd;
  }
  return segments;
}

/**
 * The merged parts of the all-ASCII piece `text[start, end)` as segments, or `undefined` when the
 * piece has too many runs or the merge too many steps. Call with pieces that are no single entry.
 */
export function runMergeAscii(
  text: string,
  start: number,
  end: number,
  tokenRank: TokenRank = o200kTokenRank,
): Segment[] | undefined {
  const segments = runSegments(text, start, end);
  if (segments === undefined) return undefined;
  const rankOf = (token: string): number => {
    const rank = tokenRank(token);
    return rank < 0 ? NONE : rank;
  };
  for (let step = 0; step < RUN_MERGE_MAX_STEPS; step++) {
    const pick = lowestPair(segments, rankOf);
    if (pick === undefined) return segments;
    if (pick.across) mergeAcross(segments, pick.index);
    else mergeWithin(segments, pick.index, pick.rank, rankOf);
  }
  return undefined;
}

/** Tokens of merged segments: each segment's token rank, `count` times. */
export function segmentTokens(segments: readonly Segment[], tokenRank: TokenRank = o200kTokenRank): number[] {
  const tokens: number[] = [];
  for (const { token, count } of segments) {
    const rank = tokenRank(token);
    // Unreachable: every part is a unit or a merged pair, and every merged pair is an entry.
    if (rank < 0) throw new Error(`o200k run merge left a part that is no entry: ${JSON.stringify(token)}`);
    for (let i = 0; i < count; i++) tokens.push(rank);
  }
  return tokens;
}

/** How many tokens the segments stand for. */
export function segmentTokenCount(segments: readonly Segment[]): number {
  let count = 0;
  for (const segment of segments) count += segment.count;
  return count;
}

/**
 * The pair the unit merge picks next: the lowest rank, the leftmost on a tie. Segments are visited
 * left to right and, in each, its first pair comes before the pair across to the next segment, so
 * the first pair seen with the lowest rank is the leftmost.
 */
function lowestPair(
  segments: Segment[],
  rankOf: TokenRank,
): { index: number; across: boolean; rank: number } | undefined {
  let best: { index: number; across: boolean; rank: number } | undefined;
  let bestRank = NONE;
  for (let i = 0; i < segments.length; i++) {
    const { token, count } = segments[i];
    if (count >= 2) {
      const rank = rankOf(token + token);
      if (rank < bestRank) [bestRank, best] = [rank, { index: i, across: false, rank }];
    }
    if (i + 1 < segments.length) {
      const rank = rankOf(token + segments[i + 1].token);
      if (rank < bestRank) [bestRank, best] = [rank, { index: i, across: true, rank }];
    }
  }
  return best;
}

/** Joins the last part of segment `i` with the first of segment `i + 1`. */
function mergeAcross(segments: Segment[], i: number): void {
  const left = segments[i];
  const right = segments[i + 1];
  replace(segments, i, 2, [
    { token: left.token, count: left.count - 1 },
    { token: left.token + right.token, count: 1 },
    { token: right.token, count: right.count - 1 },
  ]);
}

/** Merges the pairs of segment `i` (rank `rank`) left to right, or only its first when a pair made on the way ranks lower. */
function mergeWithin(segments: Segment[], i: number, rank: number, rankOf: TokenRank): void {
  const { token, count } = segments[i];
  const twice = token + token;
  const batch =
    (count < 3 || rankOf(twice + token) > rank) &&
    (count < 4 || rankOf(twice + twice) > rank) &&
    (i === 0 || rankOf(segments[i - 1].token + twice) > rank);
  const parts = batch
    ? [
        { token: twice, count: Math.floor(count / 2) },
        { token, count: count % 2 },
      ]
    : [
        { token: twice, count: 1 },
        { token, count: count - 2 },
      ];
  replace(segments, i, 1, parts);
}

/** Replaces `removed` segments at `i` by `parts`, dropping empty ones and joining equal neighbours. */
function replace(segments: Segment[], i: number, removed: number, parts: Segment[]): void {
  segments.splice(i, removed, ...parts.filter((part) => part.count > 0));
  for (let j = Math.max(1, i - 1); j < Math.min(segments.length, i + parts.length + 1);) {
    if (segments[j].token === segments[j - 1].token) {
      segments[j - 1].count += segments[j].count;
      segments.splice(j, 1);
    } else j++;
  }
}
