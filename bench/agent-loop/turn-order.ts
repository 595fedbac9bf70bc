/**
 * Balanced turn order for interleaved rollouts: a Williams design. Its rows are orderings of the
 * n modes in which every mode takes every position equally often, and every mode directly follows
 * every other mode equally often, so neither going first nor running right after a heavy mode (a
 * stateless request's garbage, say) favours anyone. Rows are taken in turn over the whole run
 * (all repetitions), so the balance is exact whenever turns × repetitions is a multiple of the
 * number of rows (n for even n, 2n for odd n), and off by at most one row otherwise.
 */
export function williamsRows(n: number): number[][] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`williamsRows needs a positive integer, got ${n}`);
  // First row 0, 1, n-1, 2, n-2, …; row i adds i (mod n).
  const first: number[] = [0];
  for (let k = 1, lo = 1, hi = n - 1; k < n; k++) first.push(k % 2 === 1 ? lo++ : hi--);
  const rows = Array.from({ length: n }, (_, i) => first.map((m) => (m + i) % n));
  // With an odd n a row set and its mirror images together balance the carry-over.
  return n % 2 === 0 ? rows : [...rows, ...rows.map((r) => [...r].reverse())];
}

/**
 * The order in which `modes` run turn `turn` (1-based) of repetition `rep` (1-based) when each
 * repetition has `turns` turns.
 */
export function turnOrder<T>(modes: readonly T[], rep: number, turn: number, turns: number): T[] {
  const rows = williamsRows(modes.length);
  const k = (rep - 1) * turns + (turn - 1);
  return rows[((k % rows.length) + rows.length) % rows.length].map((i) => modes[i]);
}
