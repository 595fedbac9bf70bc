import { startInOrder } from './start-order';

describe('startInOrder', () => {
  /** Starts `names`, each taking `ms[name]` (default 10) ms; records when each started and ended. */
  async function run(
    names: string[],
    after: Record<string, string[]>,
    fails: string[] = [],
    ms: Record<string, number> = {},
  ) {
    const log: string[] = [];
    const outcomes = await startInOrder(
      names,
      (n) => after[n] ?? [],
      async (n) => {
        log.push(`start ${n}`);
        await new Promise((r) => setTimeout(r, ms[n] ?? 10));
        log.push(`ready ${n}`);
        return fails.includes(n) ? 'timeout' : 'ready';
      },
      (o) => o === 'ready',
    );
    return { log, outcomes };
  }

  it('starts everything at once except what starts after another, which waits until that is ready', async () => {
    const { log, outcomes } = await run(['safety', 'router', 'inference', 'edge'], { router: ['inference'] }, [], {
      inference: 30,
    });
    expect(log.slice(0, 3).sort()).toEqual(['start edge', 'start inference', 'start safety']);
    expect(log.indexOf('start router')).toBe(log.indexOf('ready inference') + 1);
    expect([...outcomes.values()]).toEqual(['ready', 'ready', 'ready', 'ready']);
  });

  it('does not start what waits for a service that did not become ready', async () => {
    const { log, outcomes } = await run(['a', 'b', 'c'], { b: ['a'], c: ['b'] }, ['a']);
    expect(log).toEqual(['start a', 'ready a']);
    expect(Object.fromEntries(outcomes)).toEqual({ a: 'timeout', b: 'skipped', c: 'skipped' });
  });

  it('ignores prerequisites that are not being started, and refuses a cycle', async () => {
    expect(Object.fromEntries((await run(['b'], { b: ['a'] })).outcomes)).toEqual({ b: 'ready' });
    await expect(run(['a', 'b'], { a: ['b'], b: ['a'] })).rejects.toThrow(/cycle: a → b → a/);
  });
});
