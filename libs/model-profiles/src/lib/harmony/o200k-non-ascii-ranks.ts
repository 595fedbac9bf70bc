import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';

/**
 * Ranks of the ~70k o200k vocabulary entries that are strings with a non-ASCII unit, for the
 * pieces the ASCII scanner hands to the regex. Most such pieces (` —`, `→`, ` café`) are one
 * entry, and looking them up here instead of encoding each with gpt-tokenizer (which runs its
 * special-token and split regexes per call) took ~25% off encoding unseen npm sources.
 *
 * An open-addressing table rather than a Map: inserting the 70k keys into a Map took 35-70 ms on
 * first use, building this table ~18 ms. A hit compares the piece with the entry, so hash collisions only
 * cost a probe.
 */

/** 2^17 slots for ~70k keys (load ~0.53); `[hash, rank + 1]` per slot (0: empty), 1 MiB. */
const SLOT_BITS = 17;
const SLOT_MASK = (1 << SLOT_BITS) - 1;

let slots: Int32Array | undefined;

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash | 0;
}

function hasNonAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 128) return true;
  return false;
}

function buildSlots(): Int32Array {
  const table = new Int32Array(2 << SLOT_BITS);
  bpeRanks.forEach((entry, rank) => {
    if (typeof entry !== 'string' || !hasNonAscii(entry)) return;
    const hash = fnv1a(entry);
    let slot = hash & SLOT_MASK;
    while (table[2 * slot + 1] !== 0) slot = (slot + 1) & SLOT_MASK;
    table[2 * slot] = hash;
    table[2 * slot + 1] = rank + 1;
  });
  return table;
}

/** The rank of `piece` if it is one vocabulary entry with a non-ASCII unit, else -1. */
export function nonAsciiEntryRank(piece: string): number {
  const table = (slots ??= buildSlots());
  const hash = fnv1a(piece);
  for (let slot = hash & SLOT_MASK; ; slot = (slot + 1) & SLOT_MASK) {
    const rankPlusOne = table[2 * slot + 1];
    if (rankPlusOne === 0) return -1;
    if (table[2 * slot] === hash && bpeRanks[rankPlusOne - 1] === piece) return rankPlusOne - 1;
  }
}
