import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';

/**
 * Rank lookup of a UTF-8 byte range, as gpt-tokenizer's `getBpeRankFromBytes` answers it during a
 * byte-pair merge of a piece with non-ASCII text: a range that is valid UTF-8 is looked up among
 * the string entries (as the string it decodes to), any other range among the byte-array entries.
 * So the table holds every string entry (as its UTF-8 bytes) and the byte-array entries that are
 * not valid UTF-8 (a valid one could never be found by the library, which looks valid ranges up
 * as strings); then a hit here is exactly the library's hit.
 *
 * An open-addressing table over the bytes of all ~200k entries, kept in one pool, built on first
 * use (~60-90 ms on the dev machine, 4 MiB table + ~1.3 MiB pool).
 */

/** 2^19 slots for ~200k keys (load ~0.38); `[hash, rank + 1]` per slot (0: empty). */
const SLOT_BITS = 19;
const SLOT_MASK = (1 << SLOT_BITS) - 1;
/** No o200k entry has more bytes. */
export const MAX_ENTRY_BYTES = 128;

interface ByteTable {
  slots: Int32Array;
  /** Entry bytes, entry `rank` at `pool[offsets[rank], offsets[rank + 1])`. */
  pool: Uint8Array;
  offsets: Int32Array;
}

let table: ByteTable | undefined;

function fnv1a(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193);
  return hash | 0;
}

/** gpt-tokenizer's `isValidUTF8` (utfUtil.ts): shortest form, no surrogates, at most U+10FFFF. */
export function isValidUtf8(bytes: ArrayLike<number>): boolean {
  let i = 0;
  while (i < bytes.length) {
    const first = bytes[i];
    let length: number;
    let codePoint: number;
    if (first <= 0x7f) [length, codePoint] = [1, first];
    else if ((first & 0xe0) === 0xc0 && first > 0xc1) [length, codePoint] = [2, first & 0x1f];
    else if ((first & 0xf0) === 0xe0) [length, codePoint] = [3, first & 0x0f];
    else if ((first & 0xf8) === 0xf0 && first <= 0xf4) [length, codePoint] = [4, first & 0x07];
    else return false;
    if (i + length > bytes.length) return false;
    for (let j = 1; j < length; j++) {
      const next = bytes[i + j];
      if ((next & 0xc0) !== 0x80) return false;
      codePoint = (codePoint << 6) | (next & 0x3f);
    }
    if (
      (length === 2 && codePoint < 0x80) ||
      (length === 3 && codePoint < 0x800) ||
      (length === 4 && codePoint < 0x10000)
    )
      return false;
    if ((codePoint >= 0xd800 && codePoint <= 0xdfff) || codePoint > 0x10ffff) return false;
    i += length;
  }
  return true;
}

function buildTable(): ByteTable {
  const encoder = new TextEncoder();
  const entries = bpeRanks.map((entry) =>
    typeof entry === 'string' ? encoder.encode(entry) : isValidUtf8(entry) ? undefined : Uint8Array.from(entry),
  );
  const offsets = new Int32Array(entries.length + 1);
  for (let rank = 0; rank < entries.length; rank++) offsets[rank + 1] = offsets[rank] + (entries[rank]?.length ?? 0);
  const pool = new Uint8Array(offsets[entries.length]);
  const slots = new Int32Array(2 << SLOT_BITS);
  entries.forEach((bytes, rank) => {
    if (bytes === undefined) return;
    pool.set(bytes, offsets[rank]);
    const hash = fnv1a(bytes, 0, bytes.length);
    let slot = hash & SLOT_MASK;
    while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & SLOT_MASK;
    slots[2 * slot] = hash;
    slots[2 * slot + 1] = rank + 1;
  });
  return { slots, pool, offsets };
}

/** Builds the table now (a service's warm-up), so the first long non-ASCII piece does not pay for it. */
export function warmUpByteRanks(): void {
  table ??= buildTable();
}

/**
 * The rank of `bytes[from, to)` as gpt-tokenizer's merge finds it, else -1.
 *
 * The library turns a valid range into a string with a default TextDecoder, which drops a leading
 * byte order mark: `EF BB BF` + `using` is looked up as `using` (entry 9251, those very bytes, is
 * unreachable), and a lone BOM as the empty string, which is no entry.
 */
export function byteRangeRank(bytes: Uint8Array, from: number, to: number): number {
  if (to - from >= 3 && bytes[from] === 0xef && bytes[from + 1] === 0xbb && bytes[from + 2] === 0xbf)
    if (isValidUtf8(bytes.subarray(from, to))) return to - from === 3 ? -1 : rawRangeRank(bytes, from + 3, to);
  return rawRangeRank(bytes, from, to);
}

function rawRangeRank(bytes: Uint8Array, from: number, to: number): number {
  const length = to - from;
  if (length > MAX_ENTRY_BYTES) return -1;
  const { slots, pool, offsets } = (table ??= buildTable());
  const hash = fnv1a(bytes, from, to);
  for (let slot = hash & SLOT_MASK; ; slot = (slot + 1) & SLOT_MASK) {
    const rankPlusOne = slots[2 * slot + 1];
    if (rankPlusOne === 0) return -1;
    if (slots[2 * slot] !== hash) continue;
    const at = offsets[rankPlusOne - 1];
    if (offsets[rankPlusOne] - at !== length) continue;
    let equal = true;
    for (let i = 0; i < length && equal; i++) equal = pool[at + i] === bytes[from + i];
    if (equal) return rankPlusOne - 1;
  }
}
