import { Writable } from 'node:stream';
import { createLogger } from './logger';
import { installShutdown, untilQuiet } from './shutdown';

describe('installShutdown', () => {
  it('runs every step once, in order, then exits 0 and says how long each step took', async () => {
    const lines: { msg: string; stepsMs?: Record<string, number> }[] = [];
    const destination = new Writable({
      write(chunk, _e, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const order: string[] = [];
    const exits: number[] = [];
    const drain = installShutdown({
      logger: createLogger({ service: 't', destination }),
      steps: [
        { name: 'a', run: () => void order.push('a') },
        { name: 'b', run: async () => void order.push('b') },
      ],
      exit: (code) => exits.push(code),
    });
    try {
      await Promise.all([drain(), drain()]);
      expect(order).toEqual(['a', 'b']);
      expect(exits).toEqual([0]);
      expect(Object.keys(lines.find((l) => l.msg === 'stopped')!.stepsMs!)).toEqual(['a', 'b']);
    } finally {
      process.removeAllListeners('SIGTERM');
      process.removeAllListeners('SIGINT');
    }
  });
});

describe('untilQuiet', () => {
  const after = (ms: number) => new Promise<'waited'>((r) => setTimeout(() => r('waited'), ms).unref());

  it('passes at once when nothing ever arrived, or nothing for the quiet period', async () => {
    for (const last of [undefined, Date.now() - 60_000]) {
      const quiet = untilQuiet({ lastArrival: () => last, quietMs: 30_000, maxMs: 60_000 }).then(() => 'quiet');
      expect(await Promise.race([quiet, after(5_000)])).toBe('quiet');
    }
  });

  it('waits while calls keep arriving, until the longest wait it was given', async () => {
    const quiet = untilQuiet({ lastArrival: () => Date.now(), quietMs: 1_000, maxMs: 300 }).then(() => 'quiet');
    // Still waiting halfway (its deadline cannot pass sooner), done by the deadline.
    expect(await Promise.race([quiet, after(100)])).toBe('waited');
    expect(await Promise.race([quiet, after(20_000)])).toBe('quiet');
  });
});
