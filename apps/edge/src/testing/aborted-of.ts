/** Resolves when `signal` aborts (never without one). */
export function abortedOf(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
}
