import { RestartPolicy } from './restart-policy';

describe('RestartPolicy', () => {
  it('restarts with a doubling delay, capped', () => {
    const policy = new RestartPolicy({ maxRestarts: 10, initialBackoffMs: 100, maxBackoffMs: 500 });
    expect([0, 1, 2, 3, 4].map((t) => policy.onCrash(t))).toEqual([
      { restart: true, attempt: 1, delayMs: 100 },
      { restart: true, attempt: 2, delayMs: 200 },
      { restart: true, attempt: 3, delayMs: 400 },
      { restart: true, attempt: 4, delayMs: 500 },
      { restart: true, attempt: 5, delayMs: 500 },
    ]);
  });

  it('gives up on a crash loop: one crash more than maxRestarts within the window', () => {
    const policy = new RestartPolicy({ maxRestarts: 2, windowMs: 1_000 });
    expect(policy.onCrash(0).restart).toBe(true);
    expect(policy.onCrash(10).restart).toBe(true);
    expect(policy.onCrash(20)).toEqual({ restart: false, crashes: 3 });
  });

  it('forgets crashes older than the window, so an occasional crash never ends the stack', () => {
    const policy = new RestartPolicy({ maxRestarts: 1, windowMs: 1_000, initialBackoffMs: 100 });
    expect(policy.onCrash(0)).toEqual({ restart: true, attempt: 1, delayMs: 100 });
    expect(policy.onCrash(5_000)).toEqual({ restart: true, attempt: 1, delayMs: 100 });
    expect(policy.onCrash(10_000)).toEqual({ restart: true, attempt: 1, delayMs: 100 });
  });

  it('never restarts with maxRestarts 0', () => {
    expect(new RestartPolicy({ maxRestarts: 0 }).onCrash(0)).toEqual({ restart: false, crashes: 1 });
  });

  it('rejects a negative option, naming it', () => {
    expect(() => new RestartPolicy({ windowMs: -1 })).toThrow(/restart\.windowMs/);
  });
});
