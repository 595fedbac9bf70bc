/**
 * The text the rules read: what a model sees once invisible and lookalike characters are gone.
 * Issue 17: a key with a zero-width space inside, fullwidth letters or an injection with
 * zero-width characters between its words passed every rule, though a model reads them plainly.
 *
 * The view is a map of code points, each independently: a code point in `\p{Cf}` (zero-width
 * space/joiner/non-joiner, word joiner, BOM, bidi controls, soft hyphen, tag characters),
 * `\p{Mn}` or `\p{Me}` (combining marks, variation selectors) and a lone surrogate become nothing;
 * any other becomes its NFKC form (fullwidth `ｓｋ－` → `sk-`, `𝐀` → `A`, `ﬁ` → `fi`). Being a map
 * of code points (not NFKC of the whole text, which reorders and composes across characters) is
 * what keeps incremental scans exact: the view of a stream is the concatenation of its pieces'
 * views, except where a surrogate pair is cut, and a cut half is dropped on both paths.
 */
export interface TextView {
  /** The normalised text. */
  readonly text: string;
  /**
   * Position in the original text of the code point each character of `text` came from, plus
   * `text.length` → the original's length. `null`: the view is the text itself (pure ASCII).
   */
  readonly at: Int32Array | null;
}

// Not ASCII: the only text that can change (every stripped or NFKC-changed character is above U+007F).
const NON_ASCII = /[^\u0000-\u007f]/;
const STRIPPED = /^[\p{Cf}\p{Mn}\p{Me}]$/u;
const MARKS = /[\p{Cf}\p{Mn}\p{Me}]/gu;

/**
 * Images of the non-ASCII code points seen so far, `null` for a code point that is its own image
 * (CJK, accented letters, dashes): NFKC per code point is ~1 µs, the lookup ~20 ns.
 */
const images = new Map<number, string | null>();
/** Bound on {@link images}: there are ~150,000 assigned code points; past this it is cleared. */
const MAX_IMAGES = 65_536;

/** What one non-ASCII code point becomes in the view; `null`: itself. */
export function imageOf(cp: number): string | null {
  let image = images.get(cp);
  if (image !== undefined) return image;
  if (cp >= 0xd800 && cp <= 0xdfff) image = '';
  else {
    const ch = String.fromCodePoint(cp);
    // NFKC may decompose into a base and marks (`ǅ`, `ẛ̣`): the marks go too.
    image = STRIPPED.test(ch) ? '' : ch.normalize('NFKC').replace(MARKS, '');
    if (image === ch) image = null;
  }
  if (images.size >= MAX_IMAGES) images.clear();
  images.set(cp, image);
  return image;
}

/**
 * The view of `text` (linear: one pass, one cached lookup per non-ASCII code point). Text whose
 * every code point is its own image (ASCII, CJK, most prose) is its own view, without a map.
 */
export function normalise(text: string): TextView {
  if (!NON_ASCII.test(text)) return { text, at: null };
  const pieces: string[] = [];
  let at: Int32Array | null = null;
  let n = 0; // entries of `at` written
  let run = 0; // start of the text not yet copied: unchanged code points are copied as one slice
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      i++;
      continue;
    }
    const width = codePointEnd(text, i) - i;
    const image = imageOf(width === 2 ? (text.codePointAt(i) as number) : c);
    if (image === null) {
      i += width;
      continue;
    }
    at ??= new Int32Array(text.length + 16);
    if (n + image.length + (text.length - run) >= at.length) at = grown(at, n + image.length + text.length - run + 1);
    if (i > run) pieces.push(text.slice(run, i));
    for (let k = run; k < i; k++) at[n++] = k;
    if (image.length > 0) pieces.push(image);
    for (let k = 0; k < image.length; k++) at[n++] = i;
    i += width;
    run = i;
  }
  if (at === null) return { text, at: null };
  pieces.push(text.slice(run));
  for (let k = run; k < text.length; k++) at[n++] = k;
  at[n] = text.length;
  return { text: pieces.join(''), at: at.subarray(0, n + 1) };
}

/** `at` with room for `needed` entries (an image longer than its code point: `ﬁ`, `㍿`). */
function grown(at: Int32Array, needed: number): Int32Array {
  const bigger = new Int32Array(Math.max(needed, at.length * 2));
  bigger.set(at);
  return bigger;
}

/** The end in the original text of the code point at `pos` (a surrogate pair is two units). */
export function codePointEnd(text: string, pos: number): number {
  const c = text.charCodeAt(pos);
  if (c >= 0xd800 && c <= 0xdbff && pos + 1 < text.length) {
    const d = text.charCodeAt(pos + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return pos + 2;
  }
  return pos + 1;
}

/** The first index `j` of the view with `at[j] >= pos` (`at` is non-decreasing). */
export function viewIndex(at: Int32Array, pos: number): number {
  let lo = 0;
  let hi = at.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at[mid] < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
