/**
 * Consistent hashing with bounded loads (Mirrokni, Thorup, Zadimoghaddam 2018): with `total` calls
 * running on `n` workers, a worker may take one more only while its load stays within
 * ⌈(1 + ε) · (total + 1) / n⌉, so none runs more than (1 + ε) × the mean (rounded up). Some
 * worker always qualifies: the least loaded one has at most ⌊total / n⌋, and
 * ⌈(total + 1) / n⌉ ≥ ⌊total / n⌋ + 1.
 */
export function loadCap(total: number, n: number, epsilon: number): number {
  if (n <= 0) return 0;
  return Math.ceil(((1 + Math.max(0, epsilon)) * (Math.max(0, total) + 1)) / n);
}

/** Whether a worker at `load` may take one more call under `cap`. */
export function withinCap(load: number, cap: number): boolean {
  return load + 1 <= cap;
}
