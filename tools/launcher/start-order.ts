/**
 * Starts every name once the names it starts after have started, all others at once: how the
 * launcher and the image smoke test bring a stack up. Resolves with each name's outcome; a name
 * whose prerequisite did not start (`started(outcome)` false) is not started and reads `skipped`.
 * A rejected start rejects the names that wait for it, and the whole.
 */
export async function startInOrder<N extends string, R>(
  names: readonly N[],
  after: (name: N) => readonly N[],
  start: (name: N) => Promise<R>,
  started: (outcome: R) => boolean,
): Promise<Map<N, R | 'skipped'>> {
  const outcomes = new Map<N, Promise<R | 'skipped'>>();
  const outcomeOf = (name: N, path: readonly N[] = []): Promise<R | 'skipped'> => {
    if (path.includes(name)) throw new Error(`start order has a cycle: ${[...path, name].join(' → ')}`);
    let outcome = outcomes.get(name);
    if (!outcome) {
      const before = after(name).filter((n) => names.includes(n));
      const waits = before.map((n) => outcomeOf(n, [...path, name]));
      outcome = Promise.all(waits).then((done): Promise<R | 'skipped'> | 'skipped' =>
        done.every((o) => o !== 'skipped' && started(o as R)) ? start(name) : 'skipped',
      );
      outcomes.set(name, outcome);
    }
    return outcome;
  };
  const all = await Promise.all(names.map((name) => outcomeOf(name)));
  return new Map(names.map((name, i) => [name, all[i]]));
}
