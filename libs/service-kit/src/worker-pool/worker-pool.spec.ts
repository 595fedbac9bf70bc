import { join } from 'node:path';
import { WorkerPool, type WorkerPoolOptions } from './worker-pool';
import { WorkerTaskError } from './worker-pool-errors';

const WORKER = join(__dirname, 'fixtures', 'test-worker.ts');

type Task =
  | { kind: 'echo'; value: unknown }
  | { kind: 'spin'; ms: number; cooperative: boolean }
  | { kind: 'throw' }
  | { kind: 'exit' }
  | { kind: 'thread' };

const pools: WorkerPool[] = [];
function pool(options: Partial<WorkerPoolOptions> = {}): WorkerPool<Task, unknown> {
  // Jest runs this file without tsx; the worker script is TypeScript.
  const p = new WorkerPool<Task, unknown>({ filename: WORKER, execArgv: ['--import', 'tsx'], ...options });
  pools.push(p as WorkerPool);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('WorkerPool', () => {
  it('runs tasks on its threads and returns their results', async () => {
    const p = pool({ size: 2 });
    await expect(p.run({ kind: 'echo', value: { a: [1, 'x'] } })).resolves.toEqual({ a: [1, 'x'] });
    const threads = new Set(
      await Promise.all(Array.from({ length: 6 }, (_, i) => p.run({ kind: 'thread' }, { key: `t${i % 3}` }))),
    );
    expect(threads.size).toBeGreaterThanOrEqual(1);
    expect([...threads].every((id) => typeof id === 'number' && id > 0)).toBe(true);
  });

  it("gives a task's own error back with its code, name and data", async () => {
    const p = pool({ size: 1 });
    const err = await p.run({ kind: 'throw' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerTaskError);
    expect(err).toMatchObject({
      code: 'internal', // not one of service-kit's codes: the thrower's stays in `failure`
      failure: { name: 'LimitError', code: 'limit_exceeded', details: { limit: 'max_things', value: 7 } },
    });
  });

  it('fails a task that checks its deadline with its own error, and keeps the thread', async () => {
    const p = pool({ size: 1 });
    const before = await p.run({ kind: 'thread' });
    await expect(p.run({ kind: 'spin', ms: 5_000, cooperative: true }, { timeoutMs: 50 })).rejects.toMatchObject({
      failure: { code: 'late' },
    });
    expect(await p.run({ kind: 'thread' })).toBe(before);
  });

  it('replaces a thread whose task overruns its deadline without checking it, and fails only that task', async () => {
    const p = pool({ size: 1, hardKillGraceMs: 20 });
    const before = await p.run({ kind: 'thread' });
    const started = performance.now();
    await expect(p.run({ kind: 'spin', ms: 60_000, cooperative: false }, { timeoutMs: 50 })).rejects.toMatchObject({
      code: 'task_deadline_exceeded',
    });
    expect(performance.now() - started).toBeLessThan(30_000);
    const after = await p.run({ kind: 'thread' });
    expect(after).not.toBe(before);
  });

  it('replaces a thread that dies, failing only its task (retryable)', async () => {
    const p = pool({ size: 1 });
    await expect(p.run({ kind: 'exit' })).rejects.toMatchObject({ code: 'worker_crashed', retryable: true });
    await expect(p.run({ kind: 'echo', value: 1 })).resolves.toBe(1);
  });

  it("keeps one thread for other tenants while one tenant's tasks hold the rest", async () => {
    const p = pool({ size: 2 });
    const flood = Array.from({ length: 4 }, () =>
      p.run({ kind: 'spin', ms: 400, cooperative: false }, { key: 'hostile' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(p.busy).toBe(1);
    expect(p.queued).toBe(3);
    // The neighbour's task starts on the reserved thread at once, before any of the flood's queued tasks.
    const order: string[] = [];
    const neighbour = p.run({ kind: 'echo', value: 'n' }, { key: 'neighbour' }).then(() => order.push('neighbour'));
    void Promise.all(flood.map((f) => f.then(() => order.push('hostile'))));
    await neighbour;
    expect(order).toEqual(['neighbour']);
    await Promise.all(flood);
  });

  it('refuses tasks past its queue bounds (retryable) and after close', async () => {
    const p = pool({ size: 1, maxQueuedPerKey: 1 });
    const running = p.run({ kind: 'spin', ms: 300, cooperative: false }, { key: 'a' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const queued = p.run({ kind: 'echo', value: 1 }, { key: 'a' });
    await expect(p.run({ kind: 'echo', value: 2 }, { key: 'a' })).rejects.toMatchObject({
      code: 'worker_pool_overloaded',
      retryable: true,
    });
    await expect(queued).resolves.toBe(1);
    await running;
    await p.close();
    await expect(p.run({ kind: 'echo', value: 3 })).rejects.toMatchObject({ code: 'worker_pool_closed' });
  });

  it('counts waiting for a thread against the deadline', async () => {
    const p = pool({ size: 1 });
    const running = p.run({ kind: 'spin', ms: 400, cooperative: false }, { key: 'a' });
    await expect(p.run({ kind: 'echo', value: 1 }, { key: 'b', timeoutMs: 30 })).rejects.toMatchObject({
      code: 'task_deadline_exceeded',
    });
    await running;
  });
});
