import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';

/**
 * Rank lookup for ASCII pieces straight from the text, without slicing a string per piece: an
 * open-addressing table over the ~129k all-ASCII string entries of the o200k vocabulary.
 * gpt-tokenizer looks pieces up by exact string in a Map built from the same entries (no entry
 * repeats, so which duplicate wins never matters), and an ASCII piece can only equal an ASCII
 * entry, so a hit here is exactly its hit and a miss its miss.
 *
 * A slot holds the key's first 12 units packed 7 bits each into three words, so the usual short
 * piece is compared without touching the key string: on the repo's source files that halved the
 * lookup time of a string-hash table whose hits compared against the key string.
 */

/** 2^18 slots for ~129k keys (load ~0.5); 4 words a slot, 4 MiB. */
const SLOT_BITS = 18;
const SLOT_MASK = (1 << SLOT_BITS) - 1;
/** Slot words: packed units 0-3, 4-7 and 8-11, then `length | (rank + 1) << 8` (0: empty). */
const SLOT_WORDS = 4;
/** Wraps a word index; slots start at multiples of SLOT_WORDS, so probing stays slot-aligned. */
const WORD_MASK = (SLOT_WORDS << SLOT_BITS) - 1;
const PACKED_UNITS = 12;
const LENGTH_BITS = 8;
const LENGTH_MASK = (1 << LENGTH_BITS) - 1;

let slots: Int32Array | undefined;

/** The units `text[from, to)` (at most 4, all ASCII) as one 28-bit word. */
function pack(text: string, from: number, to: number): number {
  let word = 0;
  for (let i = from; i < to; i++) word = (word << 7) | text.charCodeAt(i);
  return word;
}

function slotOf(word0: number, word1: number, word2: number, length: number): number {
  let hash = Math.imul(word0, 0x9e3779b1) ^ Math.imul(word1, 0x85ebca77) ^ Math.imul(word2 ^ length, 0xc2b2ae3d);
  hash = Math.imul(hash ^ (hash >>> 16), 0x7feb352d);
  return (hash ^ (hash >>> 15)) & SLOT_MASK;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 128) return false;
  return true;
}

/** Builds the table, once per process on first use (~25-35 ms on the dev machine). */
function buildSlots(): Int32Array {
  const table = new Int32Array(SLOT_WORDS << SLOT_BITS);
  bpeRanks.forEach((entry, rank) => {
    if (typeof entry !== 'string' || !isAscii(entry)) return;
    const length = entry.length; // the longest ASCII entry has 128 units, under 2^LENGTH_BITS
    const word0 = pack(entry, 0, Math.min(length, 4));
    const word1 = pack(entry, 4, Math.min(length, 8));
    const word2 = pack(entry, 8, Math.min(length, 12));
    let at = slotOf(word0, word1, word2, length) * SLOT_WORDS;
    while (table[at + 3] !== 0) at = (at + SLOT_WORDS) & WORD_MASK;
    table[at] = word0;
    table[at + 1] = word1;
    table[at + 2] = word2;
    table[at + 3] = length | ((rank + 1) << LENGTH_BITS);
  });
  return table;
}

/** The rank of the all-ASCII piece `text[start, end)` if it is one vocabulary entry, else -1. */
export function asciiPieceRank(text: string, start: number, end: number): number {
  const table = (slots ??= buildSlots());
  const length = end - start;
  const word0 = pack(text, start, Math.min(end, start + 4));
  const word1 = length > 4 ? pack(text, start + 4, Math.min(end, start + 8)) : 0;
  const word2 = length > 8 ? pack(text, start + 8, Math.min(end, start + 12)) : 0;
  for (let at = slotOf(word0, word1, word2, length) * SLOT_WORDS; ; at = (at + SLOT_WORDS) & WORD_MASK) {
    const lengthAndRank = table[at + 3];
    if (lengthAndRank === 0) return -1;
    if (
      (lengthAndRank & LENGTH_MASK) === length &&
      table[at] === word0 &&
      table[at + 1] === word1 &&
      table[at + 2] === word2
    ) {
      const rank = (lengthAndRank >>> LENGTH_BITS) - 1;
      if (length <= PACKED_UNITS || tailEquals(bpeRanks[rank] as string, text, start)) return rank;
    }
  }
}

/** Compares the units after the packed ones; the caller has checked that the lengths agree. */
function tailEquals(key: string, text: string, start: number): boolean {
  for (let i = PACKED_UNITS; i < key.length; i++) if (key.charCodeAt(i) !== text.charCodeAt(start + i)) return false;
  return true;
}
